"""The Spark job plans through the Kafka Java admin in its own JVM (it has no confluent-kafka): on the same
clusters it answers every question the planner asks exactly as the confluent-kafka session does."""

from __future__ import annotations

import pytest
from tests.kafka_helpers import BASE_TS, Pair, records
from validation_helpers import endpoints

from msk_migrate.access.secrets import SecretResolver
from msk_migrate.errors import UnreachableError
from msk_migrate.validation import cluster_meta as cm
from msk_migrate.validation.jvm_meta import JvmClusterMeta, jvm_metadata
from msk_migrate.validation.plan import confluent_metadata


@pytest.fixture
def sessions(clusters, spark):
    source, _target = endpoints(clusters)
    jvm = jvm_metadata(spark)("source", source, SecretResolver(), 15.0)
    yield jvm, confluent_metadata("source", source, SecretResolver(), 15.0)
    jvm.close()


def test_topics_configs_offsets_and_cluster_id_are_the_confluent_sessions_answers(clusters, sessions, uniq):
    jvm, confluent = sessions
    pair = Pair(clusters["source"], clusters["target"], f"jvm-meta-{uniq}", partitions=3,
                config={"retention.ms": "86400000", "cleanup.policy": "compact,delete"}).create()
    pair.write(records(30, partitions=3))
    assert jvm.topics(refresh=True)[pair.topic] == 3
    assert {t: n for t, n in jvm.topics().items() if t == pair.topic} == {t: n for t, n in confluent.topics(refresh=True).items() if t == pair.topic}

    (j_meta,), (c_meta,) = jvm.describe([pair.topic, "no-such-topic"]).values(), confluent.describe([pair.topic]).values()
    assert j_meta == c_meta and j_meta.overrides == {"retention.ms": "86400000", "cleanup.policy": "compact,delete"}
    assert j_meta.compacted and not j_meta.log_append_time

    tps = [(pair.topic, p) for p in range(3)]
    for level in ("read_committed", "read_uncommitted"):
        for query in (cm.earliest(), cm.latest(), cm.at_time(BASE_TS + 10_000), cm.at_time(BASE_TS + 10**12), cm.max_timestamp()):
            asked = {tp: query for tp in tps}
            assert jvm.listed(asked, level) == confluent.listed(asked, level), (query, level)
    assert sum(cm.offsets(jvm, tps, cm.latest()).values()) == 30
    assert jvm.cluster_id() == confluent.cluster_id() and jvm.cluster_id()
    # a proof mark started by one client is continued by the other: the same topic id, spelled the same
    ids = jvm.topic_ids([pair.topic])
    assert ids == confluent.topic_ids([pair.topic]) and ids[pair.topic] and len(ids[pair.topic]) == 22


def test_an_unreachable_cluster_is_one_unreachable_error_naming_the_role_and_servers(spark):
    meta = JvmClusterMeta("target", spark, {"bootstrap.servers": "127.0.0.1:9"}, timeout=2.0)
    with pytest.raises(UnreachableError) as exc:
        meta.topics()
    assert str(exc.value).startswith("target.bootstrap_servers (127.0.0.1:9): cluster unreachable within 2s: ")
    meta.close()
