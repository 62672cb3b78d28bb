"""The connector renderer: one source of truth for every MM2 setting, per auth mode."""

from __future__ import annotations

import json

import pytest

from msk_migrate.config import AuthConfig, ClusterEndpoint, MigrationSpec
from msk_migrate.config.migration import WorkerSpec
from msk_migrate.connectors import POLICY_CLASS, render_connectors
from msk_migrate.connectors.worker_env import worker_environment, worker_secret_env

ARN = "arn:aws:secretsmanager:us-east-1:012345678910:secret:AmazonMSK_mm2-AbCdEf"


def _ep(alias, mode, **auth):
    return ClusterEndpoint(alias=alias, bootstrap_servers=f"{alias}-1.example:9096,{alias}-2.example:9096",
                           auth=AuthConfig(mode=mode, **auth))


@pytest.mark.parametrize("mode,extra", [("plaintext", {}), ("iam", {}), ("scram", {"secret_arn": ARN}),
                                        ("mtls", {"secret_arn": ARN, "ca_secret_arn": ARN})])
def test_every_auth_mode_renders_three_connectors_without_secret_values(mode, extra):
    cfgs = render_connectors(_ep("source", mode, **extra), _ep("target", "iam"), MigrationSpec())
    assert sorted(cfgs) == ["mm2-checkpoint", "mm2-heartbeat", "mm2-source"]
    for cfg in cfgs.values():
        assert all(isinstance(v, str) for v in cfg.values())
        assert cfg["replication.policy.class"] == POLICY_CLASS
        assert cfg["offset-syncs.topic.location"] == "target"
    text = json.dumps(cfgs)
    if mode == "scram":
        src = cfgs["mm2-source"]
        assert src["source.cluster.security.protocol"] == "SASL_SSL"
        assert 'password="${env:MM2_SOURCE_SASL_PASSWORD}"' in src["source.cluster.sasl.jaas.config"]
    if mode == "mtls":
        src = cfgs["mm2-source"]
        assert src["source.cluster.ssl.keystore.key"] == "${env:MM2_SOURCE_TLS_PRIVATE_KEY}"
        assert src["source.cluster.ssl.truststore.certificates"] == "${env:MM2_SOURCE_TLS_CA}"
    if mode == "iam":
        assert cfgs["mm2-source"]["source.cluster.sasl.mechanism"] == "AWS_MSK_IAM"
    assert "BEGIN PRIVATE KEY" not in text and ARN not in text


def test_source_connector_reads_committed_and_copies_bytes_with_headers():
    src = render_connectors(_ep("source", "plaintext"), _ep("target", "iam"), MigrationSpec())["mm2-source"]
    assert src["source.consumer.isolation.level"] == "read_committed"
    for k in ("key.converter", "value.converter", "header.converter"):
        assert src[k] == "org.apache.kafka.connect.converters.ByteArrayConverter"
    assert src["sync.topic.acls.enabled"] == "false"


def test_topic_renames_reach_the_policy_config():
    m = MigrationSpec(topic_renames={"old.orders": "orders"})
    cfgs = render_connectors(_ep("source", "plaintext"), _ep("target", "iam"), m)
    assert all(c["replication.policy.topic.renames"] == "old.orders:orders" for c in cfgs.values())


def test_worker_environment_and_ecs_secrets_name_the_same_variables():
    target = _ep("target", "scram", secret_arn=ARN)
    env = worker_environment(target, WorkerSpec())
    secrets = worker_secret_env(target, _ep("source", "mtls", secret_arn=ARN))
    assert "sasl.mechanism=SCRAM-SHA-512" in env["CONNECT_WORKER_PROPERTIES"] and "hunter" not in " ".join(env.values())
    assert set(env["CONNECT_REQUIRED_ENV"].split()) >= {"MM2_TARGET_SASL_USERNAME", "MM2_TARGET_SASL_PASSWORD"}
    assert secrets["MM2_TARGET_SASL_PASSWORD"] == f"{ARN}:password::"
    assert secrets["MM2_SOURCE_TLS_PRIVATE_KEY"] == f"{ARN}:private_key::"


def test_every_connector_of_the_flow_shares_policy_separator_and_topic_filter():
    cfgs = render_connectors(_ep("source", "plaintext"), _ep("target", "iam"), MigrationSpec(topics=["orders.*"]))
    keys = ("replication.policy.class", "replication.policy.separator", "topics", "topics.exclude")
    shared = {tuple(c[k] for k in keys) for c in cfgs.values()}
    assert len(shared) == 1 and next(iter(shared))[2] == "orders.*"
