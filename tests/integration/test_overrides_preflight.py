"""Preflight of the MM2 data path on real brokers: record size vs the MM2 producer and the target,
replication factor vs the target's min.insync.replicas, partitions vs AWS's per-broker limit."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from msk_migrate.runbook.preflight import run_preflight
from msk_migrate.runbook.session import session_of
from tests.kafka_helpers import admin, create_topic, wait_until

pytestmark = pytest.mark.integration


def _check(rep, name):
    return next(c for c in rep.checks if c.name == name)


def _spec(topic: str, **kw) -> MigrationSpec:
    return MigrationSpec(topics=[topic], replication_factor=1, internal_replication_factor=1, **kw)


WORKER = WorkerSpec(replication_factor=1)


def test_preflight_fails_a_source_topic_whose_records_exceed_the_mm2_producer_request_size(local_env, unique):
    src = local_env.source()
    topic = f"pf-{unique}-big"
    create_topic(src.bootstrap_servers, topic, partitions=1, config={"max.message.bytes": str(3 * 1024 * 1024)})
    rep = run_preflight(session_of(src, local_env.target(), _spec(topic), WORKER))
    c = _check(rep, "record size vs MM2 producer")
    assert c.status == "fail" and topic in c.detail
    assert "migration.producer_overrides.max.request.size: 3145728" in c.detail
    assert not rep.ok
    fixed = run_preflight(session_of(src, local_env.target(), _spec(topic, producer_overrides={"max.request.size": 4194304}), WORKER))
    assert _check(fixed, "record size vs MM2 producer").status == "ok"
    # MM2 creates the target topic with the source's explicit max.message.bytes: the target accepts it.
    assert _check(fixed, "record size vs target topics").status == "ok"


def test_preflight_fails_a_replication_factor_below_the_clusters_min_insync_replicas(local_env, unique):
    # Kafka 4.x with ELR refuses a per-broker min.insync.replicas (MSK sets it per cluster), and the
    # client cannot address the cluster-default resource: the check runs against the 3.9 broker here.
    from msk_migrate.access.admin import AdminSession
    from msk_migrate.runbook.preflight_mm2 import min_insync_replicas_check

    src = local_env.source()
    client = admin(src.bootstrap_servers)
    session = AdminSession.for_endpoint("source", src)
    broker_id = client.describe_cluster().result(15).nodes[0].id
    broker = ConfigResource(ConfigResource.Type.BROKER, str(broker_id))
    set_op = ConfigEntry("min.insync.replicas", "2", incremental_operation=AlterConfigOpType.SET)
    client.incremental_alter_configs([ConfigResource(broker.restype, broker.name, incremental_configs=[set_op])])[broker].result(15)
    try:
        # dynamic broker configs are applied asynchronously: bounded wait until the check sees it
        _name, status, detail = wait_until(
            lambda: (r := min_insync_replicas_check(session, broker_id, _spec("x"), WORKER))[1] == "fail" and r,
            30, what="min.insync.replicas=2 visible", interval=0.5)
    finally:
        undo = ConfigEntry("min.insync.replicas", None, incremental_operation=AlterConfigOpType.DELETE)
        client.incremental_alter_configs([ConfigResource(broker.restype, broker.name, incremental_configs=[undo])])[broker].result(15)
    assert status == "fail" and "min.insync.replicas=2" in detail and "migration.replication_factor=1" in detail
    assert "at least 2" in detail
    wait_until(lambda: min_insync_replicas_check(session, broker_id, _spec("x"), WORKER)[1] == "ok", 30,
               what="min.insync.replicas back to 1", interval=0.5)


def test_preflight_fails_more_partitions_than_the_msk_broker_type_allows(local_env, unique):
    src = local_env.source()
    topic = f"pf-{unique}-wide"
    create_topic(src.bootstrap_servers, topic, partitions=300)

    def leaders_elected():
        from msk_migrate.access.admin import AdminSession
        from msk_migrate.access.offsets import end_offsets, partitions

        try:
            session = AdminSession.for_endpoint("source", src)
            return len(end_offsets(session, partitions(session, [topic]))) == 300
        except Exception:
            return False

    wait_until(leaders_elected, 60, what="leaders of the 300 partitions", interval=0.5)
    small = ClusterEndpoint(alias="target", bootstrap_servers=local_env.target().bootstrap_servers,
                            msk_broker_type="kafka.t3.small")
    rep = run_preflight(session_of(src, small, _spec(topic), WORKER))
    c = _check(rep, "MSK partitions per broker")
    assert c.status == "fail" and "300" in c.detail and "bestpractices" in c.detail
    large = small.model_copy(update={"msk_broker_type": "kafka.m7g.2xlarge"})
    assert _check(run_preflight(session_of(src, large, _spec(topic), WORKER)), "MSK partitions per broker").status == "ok"
