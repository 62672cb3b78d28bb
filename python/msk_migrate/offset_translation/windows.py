"""Small record windows of many partitions, read by ONE read_committed consumer per cluster.

Each partition gets ``assign()`` at its start offset and stops at its end offset or once it holds the
wanted number of records at or above a threshold offset (the partitions finished by one batch are
then paused together, so the consumer fetches only what is still wanted). A record is kept as its
offset, its fingerprint (:func:`msk_migrate.kafka.fingerprint.fingerprint`, the one the validator
compares) and its timestamp. Transaction markers and aborted records are never delivered
(read_committed), so they leave offset holes, which is what :mod:`.locate` expects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, TopicPartition

from ..access.admin import TP, AdminSession
from ..kafka.consume import IDLE_CHECK_SECONDS, POLL_SECONDS
from ..kafka.fingerprint import fingerprint

#: No record and no end of partition for this long: the read is stuck.
STALL_SECONDS = 30.0


@dataclass
class Window:
    """Read [start, end) of one partition; stop early once ``want`` records at or above ``from_offset`` arrived."""

    start: int
    end: int
    want: int | None = None
    from_offset: int = 0
    recs: list[tuple[int, int, int]] = field(default_factory=list)  #: (offset, fingerprint, timestamp ms)
    reached_end: bool = False
    hits: int = 0  #: records at or above ``from_offset`` so far (counted by :func:`read_windows`)


def read_windows(session: AdminSession, windows: dict[TP, Window], no_ts_topics: set[str] | frozenset[str] = frozenset()) -> dict[TP, Window]:
    """Fill every window (in place) and return them. ``no_ts_topics``: fingerprint with timestamp 0
    (the other cluster stamps its own LogAppendTime)."""
    todo = {tp: w for tp, w in windows.items() if w.end > w.start}
    for tp, w in windows.items():
        if tp not in todo:
            w.reached_end = True
    if not todo:
        return windows
    consumer = Consumer(session.consumer_config(
        f"msk-migrate-offset-sync-{time.time_ns()}", **{
            "isolation.level": "read_committed", "enable.partition.eof": True, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50, "max.partition.fetch.bytes": 256 << 10, "enable.auto.offset.store": False}))
    consumer.assign([TopicPartition(t, p, w.start) for (t, p), w in todo.items()])
    last_progress = last_check = time.time()

    done: list[TopicPartition] = []  #: finished since the last pause (one pause call per batch, not per partition)

    def finish(tp: TP, at_end: bool) -> None:
        w = todo.pop(tp)
        w.reached_end = w.reached_end or at_end
        done.append(TopicPartition(*tp))

    get, fp_of, eof = todo.get, fingerprint, KafkaError._PARTITION_EOF
    try:
        while todo:
            if done:
                consumer.pause(done)
                done.clear()
            msgs = consumer.consume(5000, timeout=POLL_SECONDS)
            if msgs:
                last_progress = time.time()
            # the per-record path below runs for every record read (400,000 at 10,000 committed
            # partitions): names bound once, the timestamp rule decided per topic only when one needs it
            for m in msgs:
                tp = (m.topic(), m.partition())
                found = get(tp)
                if found is None:
                    continue
                w = found
                err = m.error()
                if err is not None:
                    if err.code() == eof:
                        finish(tp, True)
                        continue
                    raise session.error(f"reading {tp[0]}[{tp[1]}] failed", Exception(err.str()))
                off = m.offset()
                end = w.end
                if off >= end:
                    finish(tp, True)
                    continue
                ts = m.timestamp()[1]
                w.recs.append((off, fp_of(m.key(), m.value(), m.headers(), 0 if no_ts_topics and tp[0] in no_ts_topics else ts), ts))
                if off >= w.from_offset:
                    w.hits += 1
                if off + 1 >= end:
                    finish(tp, True)
                elif w.want is not None and w.hits >= w.want:
                    finish(tp, False)
            now = time.time()
            if todo and not msgs and now - last_progress >= IDLE_CHECK_SECONDS and now - last_check >= IDLE_CHECK_SECONDS:
                last_check = now
                # a range ending in markers / compacted offsets delivers no record at its end
                for tp, pos in [((x.topic, x.partition), x.offset) for x in consumer.position([TopicPartition(*k) for k in todo])]:
                    if tp in todo and pos >= todo[tp].end:
                        finish(tp, True)
                if time.time() - last_progress > STALL_SECONDS:
                    t, p = next(iter(todo))
                    raise session.error(f"reading {t}[{p}] stalled for {STALL_SECONDS:.0f}s")
    finally:
        consumer.close()
    return windows
