"""The follower: read both clusters past the mark, compare in order, advance and persist the mark.

One pass (:meth:`Follower.run_pass`) reads every following partition on both sides from its mark until
each side reached the end offset it had when the pass began (or ``deadline``), pairs the records
(:class:`~.compare.PartitionCompare`) and persists the mark. Where the target then holds records past the
source's, the source's end offsets are listed again and read to: a target record with no source record
below an end listed after it was read is ``unexpected`` (or ``duplicates``) in that same pass, at the tail,
in the middle, on a partition the source did not write to or on a target partition the source does not have
(:func:`.mark.sourceless`), exactly as a batch run names it; it is never left pending as a copy to come, since
MM2 copies source to target and the target is only ever behind.
Where copies are marked (the request's ``marks`` with both aliases) each record read is given its origin
(:class:`~.compare.Origins`) and the source's origin is compared in order, the target's counted
(:mod:`.compare`).
``--once`` is one pass; ``--follow`` repeats passes every ``--interval`` seconds with the same consumers. A restart reads the persisted mark and
resumes there: records proven and persisted are never read again; records read after the last persisted
mark (a killed follower) are read again, and only the persisted count ``compared`` counts them, so it
stays exact.

Before anything is read the mark is checked against the clusters (:func:`.mark.check_against`: cluster
ids, partition counts, topic ids, end offsets; exit 2, nothing written), and partitions whose source log
start passed the mark become ``truncated``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from ...access.client_security import admin_config
from ...access.secrets import SecretResolver
from ...outcome import quiet
from .. import kafka_meta as km
from ..native import _FATAL, NativeReadError, consumer_config
from ..request import ValidationRequest
from .cluster_facts import FollowClusters
from .compare import COMPARED, PENDING_LIMIT, RECENT, REPLAY_LOOKBACK, PartitionCompare, Rec, origins_of, record
from .mark import ClusterFacts, Mark, sourceless
from .metrics import Metrics, PartitionSample
from .store import MarkStore

TP = tuple[str, int]
BATCH = 5_000
POLL_SECONDS = 0.05
STALL_SECONDS = 60.0


@dataclass
class FollowOptions:
    mark: str
    migration: str
    interval: float = 10.0
    once: bool = False
    metrics_port: int | None = None
    #: the address the metrics endpoint binds (``--metrics-bind``): loopback unless a service's own network
    #: namespace (a Fargate task) must be scraped from outside it
    metrics_bind: str = "127.0.0.1"
    verbose: bool = False
    #: a pass ends at the latest this long after it began (``--follow``: the mark is persisted at least this often)
    pass_seconds: float = 30.0
    #: the fenced end offsets of the topics whose producers moved (:func:`.fences.fenced_ends` of the flow's
    #: ledger), read before every pass; None: no ledger (nothing is cut over)
    fences: Callable[[], dict[TP, int]] | None = None


@dataclass
class Clusters(FollowClusters):
    """Both clusters through confluent-kafka, with the settings the follower's consumers read with."""

    confs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def open(cls, req: ValidationRequest, migration: str, resolver: SecretResolver | None = None) -> Clusters:  # type: ignore[override]
        resolver = resolver or SecretResolver()
        confs = {role: admin_config(role, getattr(req, role), resolver) for role in ("source", "target")}
        return cls(req, migration, km.ClusterMeta("source", confs["source"], req.metadata_timeout_seconds),
                   km.ClusterMeta("target", confs["target"], req.metadata_timeout_seconds), confs=confs)


def source_ends_of(tps: list[TP], is_sourceless: Callable[[TP], bool],
                   list_ends: Callable[[list[TP]], dict[TP, int]]) -> dict[TP, int]:
    """The source's end offsets of ``tps`` now: listed (``list_ends``, one ListOffsets round) for the partitions
    the source has, 0 for those it does not (:func:`.mark.sourceless`), which hold nothing and cannot be listed."""
    listed = [tp for tp in tps if not is_sourceless(tp)]
    ends = list_ends(listed) if listed else {}
    return {tp: 0 if is_sourceless(tp) else ends[tp] for tp in tps}


class Follower:
    """Reads both clusters past ``mark`` and advances it (one consumer per cluster, kept across passes)."""

    def __init__(self, clusters: Clusters, store: MarkStore, mark: Mark, opts: FollowOptions,
                 metrics: Metrics | None = None, say: Callable[[str], None] = quiet):
        self.clusters, self.store, self.mark, self.opts, self.metrics, self.say = clusters, store, mark, opts, metrics, say
        self.cmp: dict[TP, PartitionCompare] = {}
        #: per origin where copies are marked: what each record read is (:class:`~.compare.Origins`)
        self.origins = origins_of(clusters.req.marks) if clusters is not None else None
        self.consumers: dict[str, Consumer] = {}
        self.names = {t: tm.target_name for t, tm in mark.topics.items()}
        self.back = {v: k for k, v in self.names.items()}
        self.ends: dict[str, dict[TP, int]] = {"source": {}, "target": {}}  #: newest end offset seen per side
        self.paused: set[tuple[str, TP]] = set()
        #: side -> partition -> the offset past the last record (or the end) delivered since the assignment
        self.read_to: dict[str, dict[TP, int]] = {"source": {}, "target": {}}
        #: side -> partition -> where librdkafka said it ended, no record delivered since: everything deliverable
        #: below it was read, so once its pending records are proven the mark moves there (past a transaction's
        #: trailing marker). Kept because the end is signalled once, often while records still wait for the
        #: other side; a record delivered after it clears the entry.
        self.eof: dict[str, dict[TP, int]] = {"source": {}, "target": {}}
        #: where this process began on each partition (source, target): the persisted mark it resumed from
        self.resumed_from: dict[TP, tuple[int, int]] = {tp: (pm.source_next, pm.target_next) for tp, pm in mark.items()}
        #: partition -> its fenced end offset (source side) when the topic's producers moved (:meth:`apply_fences`)
        self.fenced: dict[TP, int] = {}

    def apply_fences(self) -> list[TP]:
        """Read the fences (:attr:`FollowOptions.fences`): a following partition proven up to its fenced end is
        ``cut-over`` and read no more; before that, records the target holds past the source are not judged (its
        producers may already write there: the fenced snapshot, not the follower, proves the rest). A fenced
        topic's target partitions the source does not have (:func:`.mark.sourceless`) end at 0: no source record
        belongs there, and the moved producers may write to them. Returns the partitions cut over now."""
        if self.opts.fences is None:
            return []
        fenced = self.opts.fences()
        topics = {t for t, _ in fenced}
        self.fenced = {**{tp: 0 for tp, _ in self.mark.items() if tp[0] in topics and sourceless(self.mark, *tp)},
                       **fenced}
        done = []
        for tp, end in sorted(self.fenced.items()):
            tm = self.mark.topics.get(tp[0])
            pm = tm.partitions.get(tp[1]) if tm else None
            if pm is not None and pm.state == "following" and pm.source_next >= end:
                pm.state = "cut-over"
                done.append(tp)
        return done

    # ---- consumers ----------------------------------------------------------------------------
    def _consumer(self, side: str) -> Consumer:
        if side not in self.consumers:
            conf = consumer_config(dict(self.clusters.confs[side]), side, self.clusters.req.isolation_level, self.opts.verbose)
            conf["group.id"] = f"msk-migrate-follow-{side}"
            self.consumers[side] = Consumer(conf)
        return self.consumers[side]

    def assign(self) -> None:
        """Assign every following partition at its mark (both sides)."""
        for (t, p), pm in self.mark.items():
            self.resumed_from.setdefault((t, p), (pm.source_next, pm.target_next))
            if pm.state == "following" and (t, p) not in self.cmp:
                self.cmp[(t, p)] = PartitionCompare(pm, self.clusters.req.allow_duplicates,
                                                    functools.partial(self.proven_source, (t, p)))
        live = [tp for tp, c in self.cmp.items() if not c.stopped]
        self.eof = {"source": {}, "target": {}}  # positions start again at the marks: an end seen before says nothing
        self.read_to = {"source": {}, "target": {}}
        self._consumer("source").assign([TopicPartition(t, p, self.cmp[(t, p)].mark.source_next) for t, p in live
                                         if not sourceless(self.mark, t, p)])
        self._consumer("target").assign([TopicPartition(self.names[t], p, self.cmp[(t, p)].mark.target_next) for t, p in live])

    def seed_recent(self, facts: ClusterFacts, timeout: float = STALL_SECONDS) -> int:
        """Before the first pass of a restarted follower: read the last :data:`~.compare.RECENT` source
        records below each mark into the duplicate window, so a re-delivered copy of a record proven before
        the restart is recognised as one. Read only, nothing is compared or counted; returns records read."""
        todo: dict[TP, int] = {}
        for tp, c in self.cmp.items():
            tf = facts.topics.get(tp[0])
            start = tf.source_start.get(tp[1], 0) if tf else 0
            if not c.stopped and c.mark.source_next > start:
                todo[tp] = max(start, c.mark.source_next - RECENT)
        if not todo:
            return 0
        consumer = self._consumer("source")
        consumer.assign([TopicPartition(t, p, o) for (t, p), o in todo.items()])
        left, n, deadline = set(todo), 0, time.monotonic() + timeout
        no_ts = self.clusters.no_ts
        while left and time.monotonic() < deadline:
            for m in consumer.consume(BATCH, timeout=POLL_SECONDS):
                tp = (m.topic(), m.partition())
                if tp not in left:
                    continue
                c, end = self.cmp[tp], self.cmp[tp].mark.source_next
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF or m.error().fatal() or m.error().code() in _FATAL:
                        left.discard(tp)  # nothing more below the mark (or gone): the window stays as read
                    continue
                if m.offset() < end:
                    make = self.origins.source if self.origins is not None else record
                    r = make(m.offset(), m.key(), m.value(), m.headers(), m.timestamp()[1], tp[0] in no_ts)
                    if r.kind == COMPARED:  # a record of the target's origin is never copied to the target
                        c.recent.append(r.fp)
                    n += 1
                if m.offset() >= end - 1:
                    left.discard(tp)
        consumer.unassign()
        return n

    def proven_source(self, tp: TP, t: Rec, timeout: float = STALL_SECONDS) -> list[int] | None:
        """The store of ``tp``'s proven source records (:data:`~.compare.ProvenSource`): the source read back below
        the mark, by a consumer of its own (the follower's keeps its positions), from the first offset at or after
        ``t``'s timestamp (MM2 keeps record timestamps; a LogAppendTime topic has none to go by) and at most
        :data:`~.compare.REPLAY_LOOKBACK` records back. Returns the fingerprints from the last record equal to
        ``t`` up to the mark, or None when none is."""
        topic, part = tp
        end = self.cmp[tp].mark.source_next
        if end <= 0 or sourceless(self.mark, topic, part):
            return None  # nothing proven below the mark, or no such partition on the source
        no_ts = topic in self.clusters.no_ts
        conf = consumer_config(dict(self.clusters.confs["source"]), "source", self.clusters.req.isolation_level, self.opts.verbose)
        conf["group.id"] = "msk-migrate-follow-lookback"
        consumer = Consumer(conf)
        try:
            low, _high = consumer.get_watermark_offsets(TopicPartition(topic, part), timeout)
            start = max(low, end - REPLAY_LOOKBACK)
            if not no_ts:
                at = consumer.offsets_for_times([TopicPartition(topic, part, t.ts)], timeout)[0].offset
                if 0 <= at < end:
                    start = max(start, at)
            if start >= end:
                return None
            make = self.origins.source if self.origins is not None else record
            fps: list[int] = []
            last = -1
            consumer.assign([TopicPartition(topic, part, start)])
            deadline = time.monotonic() + timeout
            at = start
            while at < end:
                if time.monotonic() > deadline:
                    raise NativeReadError(f"reading source {topic}[{part}] back from {start} stalled for {timeout:.0f} s")
                for m in consumer.consume(BATCH, timeout=POLL_SECONDS):
                    err = m.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            at = end  # nothing more below the mark (markers or aborted records at its end)
                        elif err.fatal() or err.code() in _FATAL:
                            raise NativeReadError(f"source {topic}[{part}]: {err.str()}")
                        continue
                    if m.offset() >= end:
                        at = end
                        break
                    at = m.offset() + 1
                    r = make(m.offset(), m.key(), m.value(), m.headers(), m.timestamp()[1], no_ts)
                    if r.kind == COMPARED:  # a record of the target's origin is never copied to the target
                        if r.fp == t.fp:
                            last = len(fps)
                        fps.append(r.fp)
            return fps[last:] if last >= 0 else None
        except KafkaException as exc:
            raise NativeReadError(f"reading source {topic}[{part}] back below the mark: {exc}") from None
        finally:
            consumer.close()

    def close(self) -> None:
        for c in self.consumers.values():
            c.close()
        self.consumers.clear()

    # ---- one pass -----------------------------------------------------------------------------
    def run_pass(self, facts: ClusterFacts, deadline: float) -> int:
        """Read until both sides reached ``facts``' end offsets (or ``deadline``), settle the partitions whose
        target ran past the source (:meth:`_settle_target_ahead`), then name every difference still held for
        more records; returns records proven.

        A pass that ends before ``deadline`` leaves no target record pending on a ``following`` partition:
        each one read is proven (or passed over as a re-delivery), or the partition stopped at a difference."""
        for t, tf in facts.topics.items():
            for p, e in tf.source_end.items():
                self.ends["source"][(t, p)] = max(e, self.ends["source"].get((t, p), 0))
            for p, e in tf.target_end.items():
                self.ends["target"][(t, p)] = max(e, self.ends["target"].get((t, p), 0))
        want = {side: {tp: self.ends[side].get(tp, 0) for tp, c in self.cmp.items() if not c.stopped}
                for side in ("source", "target")}
        proven, _ = self._read_until(want, deadline)
        proven += self._settle_target_ahead(deadline)
        for c in self.cmp.values():
            proven += c.step()
        return proven

    def _settle_target_ahead(self, deadline: float) -> int:
        """The partitions whose target records wait: none pending on the source (the target ran past it), or
        an unequal pair held to be named. The target can only be behind (MM2 copies source to target), yet a
        pass reads each side to the end offset it had when the pass began, so such target records are either
        copies of source records written since, or records of the target alone. The source's end offsets are
        listed once, now, after every pending target record was read (the target is not read again here), and
        the source is read on to them: a source record copied to one of those target records lies below that
        end. Then a target record with no source record pending stops the mark at it
        (:meth:`~.compare.PartitionCompare.target_only`) and a held pair is named knowing the source's records
        (``step(source_complete=True)``). Left to the next pass when ``deadline`` comes first. Returns the
        records proven by those reads."""
        todo = [tp for tp, c in self.cmp.items() if (c.target_ahead and tp not in self.fenced) or c.held]
        if not todo or time.monotonic() >= deadline:
            return 0
        ends = source_ends_of(todo, lambda tp: sourceless(self.mark, *tp), self.clusters.source_ends)
        for tp in todo:
            self.ends["source"][tp] = max(ends[tp], self.ends["source"].get(tp, 0))
        proven, complete = self._read_until({"source": {tp: ends[tp] for tp in todo}, "target": {}}, deadline)
        if not complete:
            return proven
        for tp in todo:
            c = self.cmp[tp]
            if c.target_ahead:
                c.target_only()
            else:
                proven += c.step(source_complete=True)
        return proven

    def _position(self, side: str, tp: TP) -> int:
        """How far ``side`` of ``tp`` was read: its mark, or past the last record or end delivered since."""
        m = self.cmp[tp].mark
        return max(m.source_next if side == "source" else m.target_next, self.read_to[side].get(tp, 0))

    def _read_until(self, want: dict[str, dict[TP, int]], deadline: float) -> tuple[int, bool]:
        """Read each side's partitions in ``want`` until it was read to the offset given (or ``deadline``);
        pairs on the way, holding a difference for more records. Returns records proven and whether every
        partition got there."""
        reached: dict[str, set[TP]] = {"source": set(), "target": set()}
        for side in ("source", "target"):  # a partition already read to its end needs no read
            for tp, end in want[side].items():
                if self._position(side, tp) >= end:
                    reached[side].add(tp)
        proven = 0
        last = time.monotonic()
        while time.monotonic() < deadline:
            todo = [s for s in ("source", "target") if len(reached[s]) < len(want[s])]
            if not todo:
                break
            got = 0
            for side in todo:
                n, done = self._read(side, want[side])
                got += n
                reached[side] |= done & want[side].keys()
            for tp, c in self.cmp.items():
                proven += c.step(wait=True)
                for side in ("source", "target"):
                    at = self.eof[side].get(tp)
                    if at is not None:
                        c.caught_up(side, at)
                        if tp in want[side] and (c.mark.source_next if side == "source" else c.mark.target_next) >= want[side][tp]:
                            reached[side].add(tp)
            self._flow_control()
            if got:
                last = time.monotonic()
            elif time.monotonic() - last > STALL_SECONDS:
                left = sorted(f"{t}[{p}]" for s in todo for (t, p) in set(want[s]) - reached[s])
                raise NativeReadError(f"no record for {STALL_SECONDS:.0f} s from {', '.join(left[:5])}")
            if all(c.stopped for c in self.cmp.values()):
                break
        return proven, all(len(reached[s]) == len(want[s]) for s in ("source", "target"))

    def _read(self, side: str, want: dict[TP, int]) -> tuple[int, set[TP]]:
        """One consume() of ``side``: records into the comparers; the partitions that reached ``want``."""
        consumer = self._consumer(side)
        done: set[TP] = set()
        msgs = consumer.consume(BATCH, timeout=POLL_SECONDS)
        no_ts = self.clusters.no_ts
        n = 0
        for m in msgs:
            topic = m.topic()
            if side == "target" and topic is not None:
                topic = self.back.get(topic, topic)
            tp = (topic, m.partition())
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    c = self.cmp.get(tp)
                    if c is not None:
                        c.step(wait=True)
                        c.caught_up(side, m.offset())
                        self.eof[side][tp] = m.offset()
                        self.read_to[side][tp] = max(self.read_to[side].get(tp, 0), m.offset())
                        self.ends[side][tp] = max(self.ends[side].get(tp, 0), m.offset())
                        if m.offset() >= want.get(tp, 0):
                            done.add(tp)
                    continue
                if err.fatal() or err.code() in _FATAL:
                    raise NativeReadError(f"{side} {m.topic()}[{m.partition()}]: {err.str()}")
                continue
            c = self.cmp.get(tp)
            if c is None or c.stopped:
                continue
            self.eof[side].pop(tp, None)
            self.read_to[side][tp] = m.offset() + 1
            ts = m.timestamp()[1]
            make = record if self.origins is None else self.origins.source if side == "source" else self.origins.target
            (c.src if side == "source" else c.tgt).append(make(m.offset(), m.key(), m.value(), m.headers(), ts, topic in no_ts))
            n += 1
            if m.offset() + 1 >= want.get(tp, 0):
                done.add(tp)
        return n, done

    def _flow_control(self) -> None:
        """Pause a side's partition whose pending records pile up (the other side is behind); resume it
        once they were paired. Bounds memory to PENDING_LIMIT records per partition."""
        for tp, c in self.cmp.items():
            for side, queue in (("source", c.src), ("target", c.tgt)):
                key = (side, tp)
                name = tp[0] if side == "source" else self.names[tp[0]]
                if len(queue) >= PENDING_LIMIT and key not in self.paused and not c.stopped:
                    self._consumer(side).pause([TopicPartition(name, tp[1])])
                    self.paused.add(key)
                elif key in self.paused and (len(queue) < PENDING_LIMIT // 2 or c.stopped):
                    self._consumer(side).resume([TopicPartition(name, tp[1])])
                    self.paused.discard(key)

    # ---- persistence and metrics --------------------------------------------------------------
    def persist(self) -> None:
        self.mark.updated_ms = int(time.time() * 1000)
        self.store.save(self.mark)

    def samples(self, now_ms: int | None = None) -> list[PartitionSample]:
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        out = []
        for (t, p), pm in self.mark.items():
            end = self.ends["source"].get((t, p), pm.source_next)
            lag = max(0, end - pm.source_next)
            c = self.cmp.get((t, p))
            if lag == 0:
                secs = 0.0
            elif c is not None and c.src:
                secs = max(0.0, (now_ms - c.src[0].ts) / 1000)
            else:
                secs = max(0.0, (now_ms - (pm.proven_ts_ms or self.mark.updated_ms or now_ms)) / 1000)
            ot = pm.origin_target or {}
            out.append(PartitionSample(t, p, lag, secs, pm.compared, pm.state == "mismatch", pm.state == "truncated",
                                       pm.duplicates, ot.get("source"), ot.get("target")))
        return out

    def publish(self) -> None:
        if self.metrics is not None:
            self.metrics.publish(self.samples(), time.time(), self.mark.copy_marks)
