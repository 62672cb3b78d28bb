"""Tuning overrides: checked against Kafka's own config keys, rendered by the one renderer,
and bad input refused as one line naming the field (exit 2, nothing rendered)."""

from __future__ import annotations

import json

import pytest

from msk_migrate import versions
from msk_migrate.config import ClusterEndpoint, MigrationSpec
from msk_migrate.config.overrides import PROFILES, known_keys
from msk_migrate.connectors import render_connectors
from msk_migrate.errors import UsageError

SRC = ClusterEndpoint(alias="source", bootstrap_servers="s:9092")
TGT = ClusterEndpoint(alias="target", bootstrap_servers="t:9092")
BASE = "source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\n"


def _render(**kw):
    return render_connectors(SRC, TGT, MigrationSpec(**kw))["mm2-source"]


def test_overrides_are_rendered_onto_the_producer_consumer_and_connector_over_the_profile():
    src = _render(producer_overrides={"max.request.size": 4194304, "linger.ms": 50},
                  consumer_overrides={"max.partition.fetch.bytes": "8388608"},
                  connector_overrides={"consumer.poll.timeout.ms": 500})
    assert src["producer.override.max.request.size"] == "4194304"
    assert src["producer.override.linger.ms"] == "50"  # operator wins over the bulk profile
    assert src["producer.override.compression.type"] == PROFILES["bulk"]["producer"]["compression.type"]
    assert src["source.consumer.max.partition.fetch.bytes"] == "8388608"
    assert src["consumer.poll.timeout.ms"] == "500"


def test_exactly_once_polls_larger_batches_so_each_transaction_carries_more_records():
    bulk = PROFILES["bulk"]
    eos = _render(exactly_once=True)
    assert eos["source.consumer.max.poll.records"] == bulk["consumer_exactly_once"]["max.poll.records"]
    assert int(eos["source.consumer.max.poll.records"]) > int(bulk["consumer"]["max.poll.records"])
    assert eos["source.consumer.max.partition.fetch.bytes"] == bulk["consumer_exactly_once"]["max.partition.fetch.bytes"]
    assert eos["source.consumer.fetch.min.bytes"] == bulk["consumer"]["fetch.min.bytes"]  # the rest of the profile stays
    # at-least-once and interval transactions keep the measured poll size; the operator's override still wins
    assert _render()["source.consumer.max.poll.records"] == bulk["consumer"]["max.poll.records"]
    assert _render(exactly_once=True, transaction_boundary="interval")["source.consumer.max.poll.records"] == \
        bulk["consumer"]["max.poll.records"]
    assert _render(exactly_once=True, consumer_overrides={"max.poll.records": 500})["source.consumer.max.poll.records"] == "500"


def test_kafka_defaults_profile_renders_no_client_tuning():
    src = _render(tuning_profile="kafka-defaults")
    assert not [k for k in src if k.startswith("producer.override.")]
    assert not [k for k in src if k.startswith("source.consumer.") and k != "source.consumer.isolation.level"
                and k != "source.consumer.auto.offset.reset"]


def test_topic_config_sync_interval_and_emit_toggles_are_settable():
    cfgs = render_connectors(SRC, TGT, MigrationSpec(sync_topic_configs_interval_seconds=60, emit_heartbeats=False,
                                                     emit_checkpoints=False, emit_offset_syncs=False))
    assert cfgs["mm2-source"]["sync.topic.configs.interval.seconds"] == "60"
    assert cfgs["mm2-source"]["emit.offset-syncs.enabled"] == "false"
    assert cfgs["mm2-checkpoint"]["emit.checkpoints.enabled"] == "false"
    assert cfgs["mm2-heartbeat"]["emit.heartbeats.enabled"] == "false"


@pytest.mark.parametrize(
    "section,key,value,words",
    [
        ("producer_overrides", "security.protocol", "PLAINTEXT", "security or routing"),
        ("producer_overrides", "sasl.jaas.config", "x", "security or routing"),
        ("consumer_overrides", "ssl.truststore.location", "/tmp/x", "security or routing"),
        ("connector_overrides", "source.cluster.sasl.jaas.config", "x", "security or routing"),
        ("connector_overrides", "target.cluster.bootstrap.servers", "evil:9092", "security or routing"),
        ("consumer_overrides", "bootstrap.servers", "evil:9092", "security or routing"),
        ("producer_overrides", "value.serializer", "x", "security or routing"),
        ("producer_overrides", "bacth.size", 1000, "did you mean 'batch.size'"),
        ("consumer_overrides", "fetch.max.byte", 1000, "did you mean 'fetch.max.bytes'"),
        ("connector_overrides", "replication.policy.class", "x", "security or routing"),
        ("connector_overrides", "tasks.max", 8, "migration.tasks_max"),
        ("consumer_overrides", "isolation.level", "read_uncommitted", "migration.read_committed"),
        ("producer_overrides", "batch.size", 0, "positive size"),
        ("producer_overrides", "max.request.size", -5, "positive size"),
        ("consumer_overrides", "max.poll.records", 0, "positive size"),
        ("producer_overrides", "linger.ms", "soon", "integer"),
        ("producer_overrides", "compression.type", "brotli", "not one of"),
        # real ProducerConfig keys the worker's MirrorMakerOverridePolicy refuses: refused at load, not at apply
        ("producer_overrides", "acks", "1", "override policy"),
        ("producer_overrides", "partitioner.ignore.keys", "true", "override policy"),
    ],
)
def test_bad_overrides_are_one_line_naming_the_field(tmp_path, section, key, value, words):
    from msk_migrate.config.loader import load_yaml_model
    from msk_migrate.config.migration_file import MigrationFile

    p = tmp_path / "m.yaml"
    p.write_text(BASE + "migration:\n  " + section + ":\n    " + json.dumps(key) + ": " + json.dumps(value) + "\n")
    with pytest.raises(UsageError) as err:
        load_yaml_model(MigrationFile, p)
    msg = str(err.value)
    assert f"migration.{section}" in msg and key in msg and words in msg and "\n" not in msg, msg


def test_cli_refuses_a_forbidden_override_with_exit_2_and_renders_nothing(tmp_path, msk_migrate_cli):
    p = tmp_path / "m.yaml"
    out = tmp_path / "out"
    p.write_text(BASE + "migration:\n  producer_overrides: {sasl.mechanism: PLAIN}\n")
    code, _, err = msk_migrate_cli("connectors", "render", "--config", str(p), "--out", str(out))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "producer_overrides.sasl.mechanism" in err
    assert "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())


def test_exactly_once_renders_kip_618_settings_and_needs_read_committed():
    src = _render(exactly_once=True, transaction_boundary="interval")
    assert src["exactly.once.support"] == "required"
    assert src["transaction.boundary"] == "interval"
    assert src["source.consumer.isolation.level"] == "read_committed"
    assert "exactly.once.support" not in _render()
    with pytest.raises(ValueError, match="read_committed"):
        MigrationSpec(exactly_once=True, read_committed=False)


def test_exactly_once_is_refused_on_a_connect_runtime_older_than_3_5():
    with pytest.raises(UsageError) as err:
        render_connectors(SRC, TGT, MigrationSpec(exactly_once=True), connect_version="3.4.1")
    assert err.value.field == "migration.exactly_once" and "3.4.1" in str(err.value) and ">= 3.5" in str(err.value)
    render_connectors(SRC, TGT, MigrationSpec(exactly_once=True), connect_version="3.5.0")


def test_known_keys_are_pinned_for_the_connect_runtime_in_the_pom():
    keys = known_keys()
    assert keys["kafka_version"] == versions.kafka_version(), (
        "jvm/pom.xml kafka.version changed: run python -m msk_migrate.local.config_keys")
    assert "ProducerConfig" in keys["source"] and "MirrorSourceConnector" in keys["source"]
    assert keys["producer"]["batch.size"]["type"] == "INT"
