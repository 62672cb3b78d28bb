"""The migration data path on real brokers: Kafka 3.9 source -> MM2 (Connect 3.9) -> Kafka 4.1 target."""

from __future__ import annotations

import requests
from confluent_kafka.admin import ConfigResource

from tests.kafka_helpers import admin, commit_group, committed, consume_all, create_topic, end_offsets, produce, wait_until


def _records(n: int, partitions: int):
    for i in range(n):
        key = None if i % 17 == 0 else f"key-{i}".encode()
        value = None if i % 23 == 0 else (f"value-{i}-".encode() + bytes(range(i % 50)))
        headers = [("trace", f"t{i}".encode()), ("dup", b"1"), ("dup", b"2")] if i % 3 == 0 else None
        yield key, value, headers, i % partitions


def _shape(msgs):
    return sorted(
        (m.partition(), m.offset(), m.key(), m.value(), tuple(m.headers() or ()), m.timestamp()[1]) for m in msgs
    )


def test_topics_keep_their_names_and_every_record_arrives_byte_identical(local_env, mm2, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"it-{unique}-orders"
    create_topic(src, topic, partitions=3)
    n = produce(src, topic, _records(3000, 3))
    wait_until(lambda: topic in admin(tgt).list_topics(timeout=5).topics, 60, what=f"{topic} on target")
    source_end = end_offsets(src, topic)
    wait_until(lambda: end_offsets(tgt, topic) == source_end, 90, what="target end offsets == source end offsets")
    got_src = consume_all(src, topic, n)
    got_tgt = consume_all(tgt, topic, n)
    assert len(got_tgt) == n
    # Same partition, same offset (no duplicates on a clean run), same bytes, headers and timestamps.
    assert _shape(got_tgt) == _shape(got_src)
    # No alias-prefixed copies: only MM2 internals carry the source alias.
    prefixed = [t for t in admin(tgt).list_topics(timeout=5).topics if t.startswith("source.") and not t.endswith(".internal")]
    assert prefixed == []


def test_compacted_topic_keeps_its_cleanup_policy_on_target(local_env, mm2, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"it-{unique}-profiles"
    create_topic(src, topic, partitions=1, config={"cleanup.policy": "compact", "retention.ms": "3600000"})
    produce(src, topic, [(b"k1", b"a", None, 0), (b"k1", b"b", None, 0), (b"k2", None, None, 0)])

    def target_policy():
        if topic not in admin(tgt).list_topics(timeout=5).topics:
            return None
        res = ConfigResource(ConfigResource.Type.TOPIC, topic)
        client = admin(tgt)
        cfg = client.describe_configs([res])[res].result(timeout=10)
        return cfg["cleanup.policy"].value == "compact" and cfg["retention.ms"].value == "3600000"

    wait_until(target_policy, 90, what="cleanup.policy=compact and retention.ms synced to target")


def test_consumer_group_offsets_are_translated_on_target(local_env, mm2, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"it-{unique}-payments"
    create_topic(src, topic, partitions=2)
    produce(src, topic, _records(2000, 2))
    ends = end_offsets(src, topic)
    head_group, mid_group = f"it-{unique}-at-head", f"it-{unique}-midway"
    commit_group(src, head_group, topic, ends)
    mid = {p: o // 2 for p, o in ends.items()}
    commit_group(src, mid_group, topic, mid)
    wait_until(lambda: end_offsets(tgt, topic) == ends, 90, what="replication caught up")
    # A group at the head of the log translates exactly.
    wait_until(lambda: committed(tgt, head_group, topic, 2) == ends, 90, what="head group translated exactly")

    # A group in the middle is translated to an offset that is never ahead (no record is skipped).
    def mid_translated():
        got = committed(tgt, mid_group, topic, 2)
        return got if all(o >= 0 for o in got.values()) else None

    got = wait_until(mid_translated, 90, what="midway group translated")
    for p, o in got.items():
        assert 0 <= o <= mid[p], f"partition {p}: translated {o} is ahead of the source commit {mid[p]}"


def test_heartbeats_are_emitted_on_target(local_env, mm2):
    tgt = local_env.target().bootstrap_servers
    wait_until(lambda: "heartbeats" in admin(tgt).list_topics(timeout=5).topics, 60, what="heartbeats topic")
    first = sum(end_offsets(tgt, "heartbeats").values())
    wait_until(lambda: sum(end_offsets(tgt, "heartbeats").values()) > first, 30, what="heartbeats advancing")


def test_worker_from_the_image_entrypoint_serves_jmx_metrics(local_env, mm2):
    url = local_env.status()["connect"]["metrics_url"]
    body = requests.get(url, timeout=10).text
    assert "jvm_" in body or "java_lang" in body
    assert "mirror" in body.lower(), "no MirrorMaker 2 metric exported by the JMX agent"
