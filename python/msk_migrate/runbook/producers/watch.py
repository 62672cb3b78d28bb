"""The watch: proof that nothing writes to a wave's topics on the source any more.

It reads the source's end offsets (high watermarks, read_uncommitted: every append counts, committed or
not) of the wave's partitions every ``interval`` seconds. A partition whose end moved since the baseline
is named with the records written; the watch ends when ``quiet_seconds`` passed without any move (quiet)
or at ``timeout`` (not quiet), or, with ``stop_on_write``, at the first data record written past the baseline
(the gate's answer is then known: no need to wait for a quiet period that can no longer make it pass).

The producers of every partition still written are named at the end: their ids, epochs, last sequence and last
timestamp (and the open transaction's start offset), asked with DescribeProducers through the Java admin client
(:mod:`.describe`: confluent-kafka 2.8 has no such call); a source that does not answer it (Kafka < 2.8) or a
place without a JVM is said per partition. Each moved partition also carries the command an operator runs to ask
again (``kafka-transactions.sh describe-producers``, Kafka >= 3.0's tools).

Control records are not writes: a transaction coordinator writes commit/abort markers (e.g. aborting the
transactions of producers the fence refused) and they move the end offset. Each moved range is read
(read_uncommitted: aborted data counts, markers do not) and a partition that moved by markers alone is not
named; :attr:`Moved.markers` says how many offsets were markers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition

from ...access.admin import TP, AdminSession
from ...access.offsets import end_offsets, partitions
from ...outcome import quiet
from .describe import ProducersAnswer, describe_producers


def producers_hint(bootstrap: str | None, topic: str, partition: int) -> str:
    """How an operator asks the broker for the producer ids that wrote a partition."""
    return (f"kafka-transactions.sh --bootstrap-server {bootstrap} describe-producers --topic {topic} "
            f"--partition {partition}")


@dataclass
class Moved:
    """A partition whose end offset moved during the watch."""

    topic: str
    partition: int
    before: int  #: end offset at the baseline
    after: int  #: end offset at the last look
    producers: str  #: the command that names the producer ids (see the module docstring)
    markers: int = 0  #: offsets of the range that are control records (commit/abort markers), not data
    producer_ids: list[int] | None = None  #: DescribeProducers' answer (None: not answered, see ``answer``)
    answer: str | None = None  #: why the producers are not named (None when the source answered)

    @property
    def written(self) -> int:
        """Data records written in the range (markers excluded)."""
        return self.after - self.before - self.markers

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "end_before": self.before, "end_after": self.after,
                "written": self.written, "markers": self.markers, "producer_ids": self.producer_ids,
                "producers_answer": self.answer or "answered", "producer_ids_command": self.producers}


def data_records(session: AdminSession, ranges: dict[TP, tuple[int, int]], timeout: float = 10.0,
                 max_offsets: int = 200_000) -> dict[TP, int]:
    """Data records (read_uncommitted: aborted data included, control records not) in ``[start, end)`` of each
    partition, read by one consumer; a partition not read to its end within ``timeout`` (or over ``max_offsets``
    in all) counts every offset as data (the upper bound: never hides a write)."""
    todo = {tp: r for tp, r in ranges.items() if r[1] > r[0]}
    out = {tp: 0 for tp in ranges}
    if not todo or sum(e - s for s, e in todo.values()) > max_offsets:
        return {tp: max(0, e - s) for tp, (s, e) in ranges.items()}
    consumer = Consumer(session.consumer_config(f"msk-migrate-watch-{time.time_ns()}", **{"isolation.level": "read_uncommitted"}))
    consumer.assign([TopicPartition(t, p, s) for (t, p), (s, _) in todo.items()])
    left, deadline = set(todo), time.monotonic() + timeout
    try:
        while left and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.3):
                tp = (msg.topic(), msg.partition())
                if msg.error() is None and tp in todo and msg.offset() < todo[tp][1]:
                    out[tp] += 1
            for pos in consumer.position([TopicPartition(t, p) for t, p in left]):
                if pos.offset >= todo[(pos.topic, pos.partition)][1]:
                    left.discard((pos.topic, pos.partition))
    finally:
        consumer.close()
    for tp in left:
        out[tp] = todo[tp][1] - todo[tp][0]
    return out


@dataclass
class WatchResult:
    """What the watch saw: the baseline, the last end offsets, every partition that moved, and how long the
    wave stayed quiet at the end."""

    baseline: dict[TP, int]
    ends: dict[TP, int]
    moved: list[Moved] = field(default_factory=list)
    quiet_for: float = 0.0  #: seconds without a move at the end of the watch
    quiet_seconds: float = 0.0  #: what was required
    seconds: float = 0.0  #: how long the watch took
    producers: ProducersAnswer | None = None  #: DescribeProducers of the moved partitions (None: none moved / not asked)
    stopped_on_write: bool = False  #: ended at the first data record past the baseline (``stop_on_write``)

    @property
    def quiet(self) -> bool:
        """No write for the whole quiet period at the end (and something was watched)."""
        return bool(self.ends) and self.quiet_for >= self.quiet_seconds

    def moved_names(self, limit: int = 8) -> str:
        names = [f"{m.topic}[{m.partition}] +{m.written}" + (f" (producer ids {', '.join(map(str, m.producer_ids))})" if m.producer_ids else "")
                 for m in self.moved]
        return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")

    def rows(self) -> list[dict]:
        moved = {(m.topic, m.partition): m for m in self.moved}
        return [{"topic": t, "partition": p, "end_offset": self.ends[(t, p)],
                 "written_during_watch": moved[(t, p)].written if (t, p) in moved else 0,
                 "producer_ids": moved[(t, p)].producer_ids if (t, p) in moved else None,
                 "producer_ids_command": moved[(t, p)].producers if (t, p) in moved else None}
                for t, p in sorted(self.ends)]

    def producer_rows(self) -> list[dict]:
        """The producer table: one row per producer of each partition still written (partition, producer id, epoch,
        last sequence, last timestamp, coordinator epoch, current transaction start offset), or one row saying why
        the source did not name them."""
        if self.producers is None:
            return []
        return self.producers.table([(m.topic, m.partition) for m in self.moved])

    def summary(self) -> str:
        if not self.ends:
            return "no partition to watch"
        head = (f"{len(self.ends)} partition(s) quiet for {self.quiet_for:.0f} s" if self.quiet
                else f"written after the baseline (the watch stopped at the first write, {self.seconds:.0f} s)" if self.stopped_on_write
                else f"not quiet: last write {self.quiet_for:.0f} s ago (need {self.quiet_seconds:.0f} s)")
        return head + (f"; written after the baseline: {self.moved_names()}" if self.moved else "; nothing written")


def watch(session: AdminSession, topics: list[str], quiet_seconds: float, timeout: float,
          baseline: dict[TP, int] | None = None, interval: float = 1.0,
          progress: Callable[[str], None] = quiet, stop_on_write: bool = False,
          name_producers: bool = True, stop_on_write_after: float | None = None) -> WatchResult:
    """Watch the end offsets of ``topics`` on ``session`` until they stayed still for ``quiet_seconds``
    or ``timeout`` passed. ``baseline``: end offsets to compare with (e.g. those recorded at the fence);
    a partition already past it counts as moved at the first look, and the quiet period starts then.
    ``stop_on_write``: end at the first data record past the baseline (markers alone do not end it).
    ``stop_on_write_after``: the same, for a data record seen once that many seconds of the watch passed (the
    fence's watch: records in flight when the fence went on may land at first; a write after the grace says the
    fence does not hold, and waiting for the timeout would say nothing more).
    ``name_producers``: ask DescribeProducers for the partitions still written (:mod:`.describe`)."""
    t0 = time.monotonic()
    tps = partitions(session, topics)
    first = end_offsets(session, tps)
    base = {tp: (baseline or {}).get(tp, off) for tp, off in first.items()}
    moved: dict[TP, Moved] = {}

    def note(ends: dict[TP, int]) -> bool:
        changed = False
        for tp, off in ends.items():
            if off != base[tp] and (tp not in moved or moved[tp].after != off):
                changed = True
                moved[tp] = Moved(tp[0], tp[1], base[tp], off, producers_hint(session.bootstrap, *tp))
        return changed

    def written() -> bool:  # a data record past the baseline (markers are not writes)
        if not stop_on_write and (stop_on_write_after is None or time.monotonic() - t0 < stop_on_write_after):
            return False
        data = data_records(session, {tp: (m.before, m.after) for tp, m in moved.items()}, timeout=min(10.0, max(1.0, timeout)))
        return any(n > 0 for n in data.values())

    last_move = t0
    ends = first
    stopped = False
    if note(first):
        last_move = time.monotonic()
        stopped = written()
    while not stopped and time.monotonic() - last_move < quiet_seconds and time.monotonic() - t0 < timeout:
        time.sleep(min(interval, max(0.05, quiet_seconds - (time.monotonic() - last_move)),
                       max(0.05, timeout - (time.monotonic() - t0))))
        ends = end_offsets(session, tps)
        if note(ends):
            last_move = time.monotonic()
            stopped = written()
        if moved:
            progress(f"written on the source during the watch: {', '.join(f'{m.topic}[{m.partition}]' for m in moved.values())}")
        else:
            progress(f"watching {len(tps)} partition(s): quiet for {time.monotonic() - last_move:.0f}/{quiet_seconds:.0f} s")
    quiet_for = time.monotonic() - last_move  # at the last look (naming the writers below takes time of its own)
    if moved:  # markers are not writes: a partition moved by control records alone is not named
        data = data_records(session, {tp: (m.before, m.after) for tp, m in moved.items()})
        for tp, m in list(moved.items()):
            m.markers = max(0, (m.after - m.before) - data[tp])
            if m.written == 0:
                del moved[tp]
    answer = None
    if moved and name_producers:
        progress(f"asking the source for the producers of {len(moved)} partition(s) still written (DescribeProducers)")
        answer = describe_producers(session.conf, sorted(moved), timeout=max(5.0, min(30.0, timeout - (time.monotonic() - t0))))
        for tp, m in moved.items():
            if tp in answer.unanswered:
                m.answer = answer.unanswered[tp]
            else:
                m.producer_ids = sorted({r.producer_id for r in answer.of(tp)})
    now = time.monotonic()
    return WatchResult(base, ends, sorted(moved.values(), key=lambda m: (m.topic, m.partition)),
                       round(quiet_for, 1), quiet_seconds, round(now - t0, 1), answer, stopped)
