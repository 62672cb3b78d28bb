"""``validate --env``: clusters, auth and secrets come from the environment YAML like every other command."""

from __future__ import annotations

import pytest

from msk_migrate.commands.validate_request import build_request
from msk_migrate.config.environment import load_environment
from msk_migrate.config.environment_files import environment_path
from msk_migrate.errors import UsageError


def test_validate_env_takes_the_source_auth_and_private_ca_secret_from_the_environment() -> None:
    cfg = load_environment(environment_path("dev"))
    req = build_request({"env": "dev", "target_bootstrap": "b-1.dev.kafka.eu-west-1.amazonaws.com:9098", "no_report": True})
    assert req.source.bootstrap_servers == cfg.source.bootstrap_servers
    assert req.source.auth.mode == "scram" and req.source.auth.ca_secret_arn == cfg.source.auth.ca_secret_arn
    assert req.target.bootstrap_servers == "b-1.dev.kafka.eu-west-1.amazonaws.com:9098" and req.target.auth.mode == "iam"
    assert req.target.msk_broker_type == cfg.target.create.instance_type
    # The migration's topic regexes are the default selection.
    assert req.topic_regex is not None and all(f"(?:{r})" in req.topic_regex for r in cfg.migration.topics)


def test_validate_env_needs_the_target_bootstrap_and_refuses_retyped_clusters(monkeypatch) -> None:
    monkeypatch.delenv("MSK_MIGRATE_TARGET_BOOTSTRAP", raising=False)
    with pytest.raises(UsageError) as exc:
        build_request({"env": "dev", "no_report": True})
    assert exc.value.field == "--target-bootstrap"
    with pytest.raises(UsageError) as exc:
        build_request({"env": "dev", "source_bootstrap": "a:9092", "target_bootstrap": "b:9098", "no_report": True})
    assert exc.value.field == "--env" and "--source-bootstrap" in str(exc.value)


def test_validate_env_report_names_the_msk_cluster_arn_the_environment_references() -> None:
    from msk_migrate.validation.report import report_clusters

    cfg = load_environment(environment_path("prod"))
    assert cfg.target.existing_cluster_arn
    req = build_request({"env": "prod", "target_bootstrap": "b-1.prod.kafka.eu-west-1.amazonaws.com:9098", "no_report": True})
    clusters = report_clusters(req, {"source": "src-id", "target": "tgt-id"})
    assert clusters["target"]["msk_cluster_arn"] == cfg.target.existing_cluster_arn
    assert clusters["target"]["cluster_id"] == "tgt-id"
    # a self-managed source has no ARN; dev creates its target, whose ARN only the stack knows
    assert clusters["source"]["msk_cluster_arn"] is None
    dev = build_request({"env": "dev", "target_bootstrap": "b-1.dev.kafka.eu-west-1.amazonaws.com:9098", "no_report": True})
    assert report_clusters(dev, {})["target"]["msk_cluster_arn"] is None


def test_validate_from_a_flow_follows_its_renames_and_topic_map_overrides_them(tmp_path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("source: {alias: source, bootstrap_servers: 'a:9092'}\n"
                    "target: {alias: target, bootstrap_servers: 'b:9092'}\n"
                    "migration: {topics: ['billing\\\\..*', 'shared\\\\.events'], "
                    "topic_renames: {shared.events: billing.shared.events, billing.old: billing.new}}\n")
    req = build_request({"config": str(flow), "no_report": True})
    assert req.topic_map == {"shared.events": "billing.shared.events", "billing.old": "billing.new"}
    req = build_request({"config": str(flow), "no_report": True, "topic_map": ("billing.old=billing.newer",)})
    assert req.topic_map == {"shared.events": "billing.shared.events", "billing.old": "billing.newer"}
