"""The Kafka/MM2 domain module and the flow options, without servers: names, selection, reverse rendering,
MM2 record decoding, and bad input that never reaches a cluster."""

from __future__ import annotations

import struct
import sys

import pytest
import yaml
from pydantic import ValidationError

from msk_migrate.access.offsets import decode_checkpoint, decode_offset_sync
from msk_migrate.config.flow import check_connect_url
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec
from msk_migrate.connectors.render import forward_spec_without, render_connectors, render_reverse_connectors
from msk_migrate.errors import UsageError
from msk_migrate.kafka import names
from msk_migrate.kafka.selection import topic_selection

SRC = ClusterEndpoint(alias="onprem", bootstrap_servers="kafka-1:9092")
TGT = ClusterEndpoint(alias="msk", bootstrap_servers="b-1.msk:9098")


def test_a_topic_regex_with_a_comma_is_refused_because_mm2_splits_it():
    with pytest.raises(ValidationError, match="comma"):
        MigrationSpec(topics=[r"orders\.v{1,3}"])
    with pytest.raises(ValidationError, match="groups"):
        MigrationSpec(groups=["a,b"])


def test_a_comma_regex_in_a_flow_file_is_one_line_exit_2(tmp_path, msk_migrate_cli):
    flow = {"source": {"alias": "source", "bootstrap_servers": "127.0.0.1:1"},
            "target": {"alias": "target", "bootstrap_servers": "127.0.0.1:2"},
            "migration": {"topics": ["x{1,2}"]}}
    (tmp_path / "f.yaml").write_text(yaml.safe_dump(flow))
    code, _, err = msk_migrate_cli("preflight", "--config", str(tmp_path / "f.yaml"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "migration.topics" in err and "comma" in err


def test_renderer_and_defaults_take_mm2_names_from_the_domain_module():
    cfgs = render_connectors(SRC, TGT, MigrationSpec(name="m"))
    assert {c["connector.class"] for c in cfgs.values()} == set(names.CONNECTOR_CLASSES.values())
    assert MigrationSpec().topics_exclude == list(names.DEFAULT_TOPICS_EXCLUDE)
    assert names.offset_syncs_topic("onprem", "msk") == "mm2-offset-syncs.onprem.internal"
    assert names.offset_syncs_topic("onprem", "msk", location="source") == "mm2-offset-syncs.msk.internal"
    assert names.checkpoints_topic("onprem") == "onprem.checkpoints.internal"
    assert names.checkpoints_topic("onprem", "orders") == "orders.onprem.checkpoints.internal"
    assert names.offset_syncs_topic("onprem", "msk", namespace="orders") == "mm2-offset-syncs.orders.onprem.internal"


def test_two_migrations_into_one_target_with_the_same_aliases_never_share_mm2_bookkeeping():
    a, b = MigrationSpec(name="orders-mig"), MigrationSpec(name="payments-mig")
    ca = render_connectors(SRC, TGT, a)
    # every connector of a flow carries its migration's name for the policy JAR
    assert {c[names.MIGRATION_CONFIG] for c in ca.values()} == {"orders-mig"}
    ta = set(names.flow_internal_topics("onprem", "msk", a.internal_namespace))
    tb = set(names.flow_internal_topics("onprem", "msk", b.internal_namespace))
    assert ta & tb == {names.HEARTBEATS_TOPIC, names.remote_heartbeats_topic("onprem")}  # one per cluster, by design
    assert "mm2-offset-syncs.orders-mig.onprem.internal" in ta and "orders-mig.onprem.checkpoints.internal" in ta
    # a flow that started under Kafka's names keeps them
    legacy = MigrationSpec(name="orders-mig", internal_topic_names="kafka-default")
    assert legacy.internal_namespace is None
    assert not any(names.MIGRATION_CONFIG in c for c in render_connectors(SRC, TGT, legacy).values())


def test_topic_selection_matches_like_mm2_and_maps_renames_both_ways():
    sel = topic_selection(MigrationSpec(topics=[r"orders\..*"], topics_exclude=[r".*\.tmp"], topic_renames={"orders.a": "orders.b"}))
    assert sel.select(["orders.x", "orders.x.tmp", "xorders.y", "orders.a"]) == ["orders.a", "orders.x"]
    assert sel.target_name("orders.a") == "orders.b" and sel.source_name("orders.b") == "orders.a"


def test_reverse_flow_replicates_only_the_named_topics_and_never_collides_with_the_forward_flow():
    m = MigrationSpec(name="mm2", topics=[r"orders\..*", "customers"], topic_renames={"customers": "clients"})
    fwd = forward_spec_without(m, ["orders.created", "customers"])
    assert not topic_selection(fwd).matches("orders.created") and topic_selection(fwd).matches("orders.other")
    rev = render_reverse_connectors(SRC, TGT, fwd, ["orders.created", "customers"])
    forward = render_connectors(SRC, TGT, fwd)
    assert not set(rev) & set(forward)
    src = rev["mm2-reverse-source"]
    assert (src["source.cluster.alias"], src["target.cluster.alias"]) == ("msk", "onprem")
    assert src["source.cluster.bootstrap.servers"] == TGT.bootstrap_servers
    assert src["topics"] == r"orders\.created,clients" and src["replication.policy.topic.renames"] == "clients:customers"
    # MM2 topics of each flow live on its own target, named after its own source alias: no collision
    ns = names.connector_namespace(src)
    assert ns == "mm2-reverse" and names.connector_namespace(forward["mm2-source"]) == "mm2"
    fwd_topics = set(names.flow_internal_topics("onprem", "msk", "mm2"))
    rev_topics = {names.offset_syncs_topic("msk", "onprem", namespace=ns), names.checkpoints_topic("msk", ns)}
    assert not fwd_topics & rev_topics
    assert "heartbeat" not in " ".join(rev)  # no reverse heartbeats: nothing to loop back
    with pytest.raises(UsageError, match="still replicated forward"):
        render_reverse_connectors(SRC, TGT, m, ["orders.created"])


def test_reverse_flow_reads_the_target_with_the_targets_secrets():
    from msk_migrate.config.auth import AuthConfig

    src = SRC.model_copy(update={"auth": AuthConfig(mode="scram", secrets_from="env")})
    rev = render_reverse_connectors(src, TGT, forward_spec_without(MigrationSpec(), ["t"]), ["t"])
    jaas = rev["mm2-reverse-source"]["target.cluster.sasl.jaas.config"]
    assert "MM2_SOURCE_SASL_PASSWORD" in jaas  # the reverse flow writes to the source with the source's secret


def _kafka_string(s: str) -> bytes:
    return struct.pack(">h", len(s)) + s.encode()


def test_mm2_checkpoint_and_offset_sync_records_decode():
    key = _kafka_string("billing") + _kafka_string("orders") + struct.pack(">i", 3)
    value = struct.pack(">h", 0) + struct.pack(">qq", 120, 98) + _kafka_string("")
    cp = decode_checkpoint(key, value)
    assert (cp.group, cp.topic, cp.partition, cp.upstream_offset, cp.downstream_offset) == ("billing", "orders", 3, 120, 98)
    sync = decode_offset_sync(_kafka_string("orders") + struct.pack(">i", 1), struct.pack(">qq", 500, 480))
    assert (sync.topic, sync.partition, sync.upstream_offset, sync.downstream_offset) == ("orders", 1, 500, 480)


@pytest.mark.parametrize("url", ["ftp://h:8083", "h:8083", "http://", "http://h:99999x", "file:///x"])
def test_a_connect_url_that_is_not_http_is_refused(url):
    with pytest.raises(UsageError, match="--connect-url"):
        check_connect_url(url)


def test_an_unknown_environment_is_one_line_naming_the_known_ones(msk_migrate_cli):
    code, _, err = msk_migrate_cli("preflight", "--env", "nosuchenv")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--env" in err and "dev" in err and "prod" in err


def test_commands_that_need_the_target_say_so_before_deploy(msk_migrate_cli, monkeypatch):
    monkeypatch.setenv("MSK_MIGRATE_TARGET_BOOTSTRAP", "")
    code, _, err = msk_migrate_cli("lag", "--env", "dev", "--connect-url", "http://127.0.0.1:1")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--target-bootstrap" in err or "unreachable" in err


def test_iam_patterns_and_validation_take_mm2_facts_from_the_domain_module():
    """infra IAM grants the MM2 topics the renderer's flow keeps on the target; validation never selects
    them and skips exactly MM2's config.properties.exclude default: one copy each, in kafka.names."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    if str(repo / "infra") not in sys.path:
        sys.path.insert(0, str(repo / "infra"))
    from msk_migrate.config.environment import load_environment
    from msk_migrate.validation import kafka_meta
    from msk_migrate.validation.request import DEFAULT_EXCLUDES
    from mskinfra.iam_policy import internal_topics

    cfg = load_environment(repo / "infra" / "environments" / "dev.yaml")
    mm2 = names.flow_internal_topics(cfg.source.alias, cfg.target.alias, cfg.migration.internal_namespace)
    assert internal_topics(cfg)[-len(mm2):] == mm2
    assert f"mm2-offset-syncs.{cfg.migration.name}.{cfg.source.alias}.internal" in internal_topics(cfg)
    assert kafka_meta.MM2_CONFIG_EXCLUDES is names.CONFIG_PROPERTIES_EXCLUDE_DEFAULT
    excluded = topic_selection(MigrationSpec(topics=[".*"], topics_exclude=DEFAULT_EXCLUDES))
    assert excluded.select([*mm2, "orders"]) == ["orders"]
    assert set(names.MM2_TOPIC_PATTERNS) <= set(DEFAULT_EXCLUDES)
