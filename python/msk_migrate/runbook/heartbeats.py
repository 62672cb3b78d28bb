"""Who writes a cluster's ``heartbeats`` topic: the MM2 flows whose target it is, read from the records' keys.

MirrorHeartbeatConnector writes one record per interval to ``heartbeats`` on its target cluster; its key is
MM2's ``Heartbeat`` key struct: two strings, the source and the target cluster alias, each an int16 length
and UTF-8 bytes (Kafka's protocol ``Type.STRING``). Every flow into one target shares that one topic, so a
migration's cleanup may delete it only when no *other* flow still writes there: :func:`heartbeat_sources`
tells which source aliases wrote its latest records.

Invariant: read only; at most ``per_partition`` records from the end of each partition; a key that is not a
heartbeat key (another tool wrote the topic) is skipped, never guessed.
"""

from __future__ import annotations

import struct
import uuid

from confluent_kafka import Consumer, TopicPartition

from ..access.admin import AdminSession
from ..kafka.names import HEARTBEATS_TOPIC


def heartbeat_key(key: bytes | None) -> tuple[str, str] | None:
    """``(source alias, target alias)`` of a heartbeat record's key, or None when it is not one."""
    if not key:
        return None
    out: list[str] = []
    pos = 0
    for _ in range(2):
        if pos + 2 > len(key):
            return None
        (n,) = struct.unpack_from(">h", key, pos)
        pos += 2
        if n < 0 or pos + n > len(key):
            return None
        try:
            out.append(key[pos:pos + n].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        pos += n
    return (out[0], out[1]) if pos == len(key) else None


def heartbeat_sources(target: AdminSession, per_partition: int = 100, timeout: float = 10.0) -> set[str]:
    """Source aliases of the flows that wrote the latest ``per_partition`` records of each partition of the
    target's ``heartbeats`` topic (empty when the topic does not exist or holds none)."""
    parts = target.topics(refresh=True).get(HEARTBEATS_TOPIC)
    if not parts:
        return set()
    consumer = Consumer(target.consumer_config(f"msk-migrate-heartbeats-{uuid.uuid4().hex[:8]}",
                                               **{"enable.auto.commit": False}))
    try:
        wanted: list[TopicPartition] = []
        ends: dict[int, int] = {}
        for p in range(parts):
            lo, hi = consumer.get_watermark_offsets(TopicPartition(HEARTBEATS_TOPIC, p), timeout=timeout)
            if hi > lo:
                wanted.append(TopicPartition(HEARTBEATS_TOPIC, p, max(lo, hi - per_partition)))
                ends[p] = hi
        if not wanted:
            return set()
        consumer.assign(wanted)
        sources: set[str] = set()
        done: set[int] = set()
        while len(done) < len(ends):
            batch = consumer.consume(500, timeout=timeout)
            if not batch:
                break
            for msg in batch:
                if msg.error():
                    continue
                parsed = heartbeat_key(msg.key())
                if parsed:
                    sources.add(parsed[0])
                if msg.offset() + 1 >= ends[msg.partition()]:
                    done.add(msg.partition())
        return sources
    finally:
        consumer.close()
