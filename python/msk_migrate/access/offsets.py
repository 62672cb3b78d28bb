"""Offsets: last stable / end offsets, newest record times, committed offsets, and MM2's own records
(checkpoints: translated group offsets; offset syncs: upstream -> downstream positions).

Wire formats (Kafka's ``org.apache.kafka.connect.mirror``, big-endian, strings as int16 length + UTF-8):

- Checkpoint key ``{group: string, topic: string, partition: int32}``; value ``int16 version`` then
  ``{upstreamOffset: int64, offset: int64, metadata: string}``.
- OffsetSync key ``{topic: string, partition: int32}``; value ``{upstreamOffset: int64, offset: int64}``.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import OffsetSpec

from ..kafka.consume import POLL_SECONDS
from .admin import TP, AdminSession


def last_stable_offsets(session: AdminSession, tps: Iterable[TP]) -> dict[TP, int]:
    """Per partition the offset a read_committed consumer reads up to (the LSO; = end without transactions)."""
    return {tp: r.offset for tp, r in session.list_offsets({tp: OffsetSpec.latest() for tp in tps}).items()}


def end_offsets(session: AdminSession, tps: Iterable[TP]) -> dict[TP, int]:
    """High watermarks (read_uncommitted latest)."""
    return end_offsets_of((session, tps))[0]


def start_offsets(session: AdminSession, tps: Iterable[TP]) -> dict[TP, int]:
    return {tp: r.offset for tp, r in session.list_offsets({tp: OffsetSpec.earliest() for tp in tps}).items()}


def start_and_stable_offsets(*asks: tuple[AdminSession, Iterable[TP]]) -> list[tuple[dict[TP, int], dict[TP, int]]]:
    """(:func:`start_offsets`, :func:`last_stable_offsets`) of each (session, partitions), every ListOffsets
    round in flight together (one round trip for all, not one per cluster and kind)."""
    waits = [submit_start_and_stable(session, tps) for session, tps in asks]
    return [wait() for wait in waits]


def submit_start_and_stable(session: AdminSession, tps: Iterable[TP]) -> Callable[[], tuple[dict[TP, int], dict[TP, int]]]:
    """Send the rounds of :func:`start_and_stable_offsets` for one cluster now; the function returned waits
    for their answers (so other rounds, or other calls, run meanwhile)."""
    tps = list(tps)
    start = session.submit_offsets(dict.fromkeys(tps, OffsetSpec.earliest()))
    stable = session.submit_offsets(dict.fromkeys(tps, OffsetSpec.latest()))
    return lambda: ({tp: r.offset for tp, r in start().items()}, {tp: r.offset for tp, r in stable().items()})


def end_offsets_of(*asks: tuple[AdminSession, Iterable[TP]]) -> list[dict[TP, int]]:
    """:func:`end_offsets` of each (session, partitions), the rounds in flight together."""
    waits = [submit_end_offsets(s, tps) for s, tps in asks]
    return [wait() for wait in waits]


def submit_end_offsets(session: AdminSession, tps: Iterable[TP]) -> Callable[[], dict[TP, int]]:
    """Send the :func:`end_offsets` round now; the function returned waits for its answer."""
    wait = session.submit_offsets(dict.fromkeys(tps, OffsetSpec.latest()), isolation_level="read_uncommitted")
    return lambda: {tp: r.offset for tp, r in wait().items()}


def newest_timestamps(session: AdminSession, tps: Iterable[TP]) -> dict[TP, int | None]:
    """Largest record timestamp (ms) per partition, None for an empty partition (ListOffsets MAX_TIMESTAMP)."""
    return submit_newest(session, tps)()


def submit_newest(session: AdminSession, tps: Iterable[TP]) -> Callable[[], dict[TP, int | None]]:
    """Send the :func:`newest_timestamps` round now; the function returned waits for its answer."""
    wait = session.submit_offsets(dict.fromkeys(tps, OffsetSpec.max_timestamp()), isolation_level="read_uncommitted")
    return lambda: {tp: (r.timestamp if r.offset >= 0 and r.timestamp >= 0 else None) for tp, r in wait().items()}


def partitions(session: AdminSession, topics: Iterable[str]) -> list[TP]:
    """(topic, partition) of every existing topic of ``topics`` (metadata refreshed for names not seen yet)."""
    topics = sorted(set(topics))
    md = session.topics()
    if any(t not in md for t in topics):
        md = session.topics(refresh=True)
    return [(t, p) for t in topics if t in md for p in range(md[t])]


# ---- MM2 records -----------------------------------------------------------------------------------
def _string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    pos += 2
    return buf[pos:pos + n].decode(), pos + n


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  #: the topic on the cluster the checkpoint is for (the flow's target)
    partition: int
    upstream_offset: int
    downstream_offset: int  #: the translated offset to commit on the target


def decode_checkpoint(key: bytes, value: bytes) -> Checkpoint:
    group, pos = _string(key, 0)
    topic, pos = _string(key, pos)
    (partition,) = struct.unpack_from(">i", key, pos)
    upstream, downstream = struct.unpack_from(">qq", value, 2)  # after the int16 version header
    return Checkpoint(group, topic, partition, upstream, downstream)


@dataclass(frozen=True)
class OffsetSync:
    topic: str  #: the upstream (source) topic
    partition: int
    upstream_offset: int
    downstream_offset: int


def decode_offset_sync(key: bytes, value: bytes) -> OffsetSync:
    topic, pos = _string(key, 0)
    (partition,) = struct.unpack_from(">i", key, pos)
    upstream, downstream = struct.unpack_from(">qq", value, 0)
    return OffsetSync(topic, partition, upstream, downstream)


def read_topic(session: AdminSession, topic: str, timeout: float = 30.0) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of ``topic`` up to its current end (empty when the topic does not exist)."""
    parts = partitions(session, [topic])
    if not parts:
        return []
    ends = end_offsets(session, parts)
    todo = {tp: end for tp, end in ends.items() if end > 0}
    if not todo:
        return []
    consumer = Consumer(session.consumer_config(f"msk-migrate-reader-{time.time_ns()}", **{"auto.offset.reset": "earliest"}))
    consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in todo])
    out: list[tuple[bytes, bytes]] = []
    deadline = time.time() + timeout
    try:
        while todo and time.time() < deadline:
            for msg in consumer.consume(1000, timeout=POLL_SECONDS):
                if msg.error():
                    continue
                tp = (msg.topic(), msg.partition())
                if msg.key() is not None and msg.value() is not None:
                    out.append((msg.key(), msg.value()))
                if tp in todo and msg.offset() + 1 >= todo[tp]:
                    del todo[tp]
            # partitions whose tail is only markers/compacted away never deliver their last offset
            for tp in list(todo):
                pos = consumer.position([TopicPartition(*tp)])[0].offset
                if pos >= todo[tp]:
                    del todo[tp]
    finally:
        consumer.close()
    if todo:
        raise session.error(f"reading {topic} did not finish within {timeout:.0f}s")
    return out


def latest_checkpoints(session: AdminSession, source_alias: str, group: str | None = None,
                       namespace: str | None = None) -> dict[str, dict[TP, Checkpoint]]:
    """group -> (target topic, partition) -> newest checkpoint, from the flow's checkpoints topic
    (``[<namespace>.]<source_alias>.checkpoints.internal``)."""
    from ..kafka.names import checkpoints_topic

    out: dict[str, dict[TP, Checkpoint]] = {}
    for key, value in read_topic(session, checkpoints_topic(source_alias, namespace)):
        cp = decode_checkpoint(key, value)
        if group is None or cp.group == group:
            out.setdefault(cp.group, {})[(cp.topic, cp.partition)] = cp
    return out


def latest_offset_syncs(session: AdminSession, source_alias: str, target_alias: str,
                        namespace: str | None = None) -> dict[TP, OffsetSync]:
    """(upstream topic, partition) -> newest offset sync of the flow source->target (syncs on the target)."""
    from ..kafka.names import offset_syncs_topic

    out: dict[TP, OffsetSync] = {}
    for key, value in read_topic(session, offset_syncs_topic(source_alias, target_alias, namespace=namespace)):
        sync = decode_offset_sync(key, value)
        out[(sync.topic, sync.partition)] = sync
    return out


def records_between(session: AdminSession, tp: TP, start: int, end: int, timeout: float = 10.0) -> int:
    """Records a read_committed consumer sees in [start, end) (transaction markers and aborted records
    occupy offsets but are not records)."""
    if end <= start:
        return 0
    consumer = Consumer(session.consumer_config(f"msk-migrate-count-{time.time_ns()}", **{"isolation.level": "read_committed"}))
    consumer.assign([TopicPartition(tp[0], tp[1], start)])
    n, deadline = 0, time.time() + timeout
    try:
        while time.time() < deadline:
            for msg in consumer.consume(1000, timeout=POLL_SECONDS):
                if msg.error() is None and msg.offset() < end:
                    n += 1
            if consumer.position([TopicPartition(*tp)])[0].offset >= end:
                break
    finally:
        consumer.close()
    return n


def count_records(session: AdminSession, ranges: dict[TP, tuple[int, int]], max_offsets: int = 100_000,
                  timeout: float = 10.0) -> dict[TP, int]:
    """Records a read_committed consumer sees in ``[start, end)`` of each partition, read by ONE consumer
    assigned every partition at once (not a consumer per partition), bounded: only when the offsets to
    read add up to at most ``max_offsets``, and within ``timeout``. Partitions not counted (over the
    bound, or unfinished at the deadline) are absent from the result: callers fall back to the offset
    gap, an upper bound."""
    todo = {tp: (s, e) for tp, (s, e) in ranges.items() if e > s}
    out = {tp: 0 for tp, (s, e) in ranges.items() if e <= s}
    if not todo or sum(e - s for s, e in todo.values()) > max_offsets:
        return out
    consumer = Consumer(session.consumer_config(f"msk-migrate-count-{time.time_ns()}", **{"isolation.level": "read_committed"}))
    consumer.assign([TopicPartition(t, p, s) for (t, p), (s, _) in todo.items()])
    counts = dict.fromkeys(todo, 0)
    deadline = time.time() + timeout
    try:
        while todo and time.time() < deadline:
            for msg in consumer.consume(5000, timeout=POLL_SECONDS):
                if msg.error() is not None:
                    continue
                tp = (msg.topic(), msg.partition())
                if tp in todo and msg.offset() < todo[tp][1]:
                    counts[tp] += 1
            # a partition is done when the consumer's position passed its end (markers/aborted records skipped)
            finished = [pos for pos in consumer.position([TopicPartition(t, p) for t, p in todo])
                        if pos.offset >= todo[(pos.topic, pos.partition)][1]]
            for pos in finished:
                tp = (pos.topic, pos.partition)
                out[tp] = counts[tp]
                del todo[tp]
            if finished:
                consumer.pause(finished)
    finally:
        consumer.close()
    return out
