"""The checksum pass without Spark: the same per-partition :class:`~.digest.Digest` as
:mod:`.checksum`, computed by confluent-kafka consumers in worker processes of this machine.

Why: on a laptop or a bastion host a PySpark job pays a JVM start and a cold JIT (≈ 7 s + ≈ 30 s,
docs/PERFORMANCE.md) before it compares a single record, and Spark's Kafka source reads slower than
librdkafka. For ``msk-migrate validate`` run locally (no SparkSession given) the checksum pass is
done here instead; Spark is started only when a partition needs the full diff. Under spark-submit,
EMR and Glue the job stays a PySpark job (:mod:`.checksum`).

Same numbers, not just the same verdict: every record's fingerprint is
:func:`msk_migrate.kafka.fingerprint.fingerprint` (Spark's ``xxhash64`` chain of :mod:`.fingerprint`,
computed in Python), so a partition's digest here equals the Spark pass's
(tests/validation/test_validation_edge_cases.py compares them on every edge case). The order digest is
``Σ fp_i · i mod 2^61 - 1`` over the compared records in offset order, which is what
:func:`.digest.fold_order` joins from Spark's tasks.

Work is split by partition into parts (greedy by record count), read by at most one worker process
per core, each part with one consumer per cluster; small runs stay in this process.
"""

from __future__ import annotations

import multiprocessing
import operator
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from ..kafka.fingerprint import field_hashes, fingerprint, key_hash
from ..outcome import quiet
from .copy_marks import MarkState, came_from, strip_mark
from .digest import COMPONENTS, MASK64, ORDER_PRIME, Digest
from .schema_ids import HEADER_BYTES, count_ids, ids_of

if TYPE_CHECKING:
    from .reading import ReadPlan

TP = tuple[str, int]
#: One read range's schema ids (:mod:`.schema_ids`): ``(side, topic, non-null values, {id: records})`` for its
#: values, and the same with a fifth field ``"key"`` for its keys (:func:`.schema_ids.tally`).
IdRow = tuple[Any, ...]
#: One task's read: its digest and the schema ids of its values and of its keys (raw id bytes -> records).
Result = tuple["Task", Digest, dict[bytes, int], dict[bytes, int]]
#: Below this many records in all ranges the pass runs in this process (a spawned worker costs ≈ 0.3 s).
IN_PROCESS_BELOW = 200_000
MAX_WORKERS = 8
#: Parts per worker process (each part: one consumer per cluster over a set of partition ranges). One:
#: every further part costs a consumer start and a read tail per cluster (measured in docs/validation.md,
#: Performance); progress comes from a shared count of records read instead.
PARTS_PER_WORKER = 1
#: How often the parent reports the shared count of records read while workers run.
PROGRESS_SECONDS = 1.0
#: Records per ``consume()`` call.
BATCH = 10_000
#: How long one ``consume()`` waits for a full batch. It returns early only when BATCH records are queued, so
#: the last call of every consumer waits this long: short, since the loop polls again anyway.
POLL_SECONDS = 0.05
#: Consumer settings of a bulk read (librdkafka names; the Spark pass uses reading.FETCH_DEFAULTS).
CONSUMER_DEFAULTS: dict[str, Any] = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "enable.partition.eof": True,
    "auto.offset.reset": "error",  # a start offset deleted by retention fails, as failOnDataLoss does in Spark
    "fetch.max.bytes": 64 << 20,
    # memory against speed: each assigned partition's fetch is held decompressed; smaller fetches read
    # slower (measured in docs/validation.md, Performance)
    "max.partition.fetch.bytes": 4 << 20,
    "queued.max.messages.kbytes": 256 << 10,
    "socket.receive.buffer.bytes": 1 << 20,
    # a caught-up partition's fetch is held this long before it answers "nothing new" (the end-of-partition
    # event that finishes a range ending in transaction markers); librdkafka's default is 500 ms
    "fetch.wait.max.ms": 100,
}
#: No record and no end of partition for this long = the read is stuck (cluster gone, ACLs, ...).
STALL_SECONDS = 60.0

class NativeReadError(Exception):
    """A cluster could not be read (the message names the side, the partition and the cause)."""


@dataclass(frozen=True)
class Task:
    """One partition range to read: ``name`` is the topic's name on that cluster, ``topic`` the source name."""

    side: str
    topic: str
    name: str
    partition: int
    start: int
    end: int
    lo: int  #: compared timestamps [lo, hi)
    hi: int
    no_ts: bool
    latest: bool
    strip_mark_of: str | None = None  #: remove this alias's trailing copy mark (:func:`.copy_marks.strip_mark`)
    skip_marked_by: str | None = None  #: leave out records copied from this alias (:func:`.copy_marks.came_from`)
    two_origin: bool = False  #: natives and copies of ``strip_mark_of``'s records, each origin ranked apart


class _Acc:
    """Running aggregates of one task (exact integers; folded into a Digest at the end)."""

    __slots__ = ("done", "fast", "fp", "fps", "ids", "key_ids", "marks", "max_ts", "min_ts", "n", "null_keys", "order", "ranks",
                 "sums", "task", "tombstones", "tss", "units")

    def __init__(self, task: Task, detail: bool):
        self.task = task
        self.done = False
        self.n = self.fp = self.order = self.null_keys = self.tombstones = 0
        self.min_ts: int | None = None
        self.max_ts: int | None = None
        self.sums = {c: 0 for c in COMPONENTS[1:]} if detail else None
        self.units: dict[int, tuple] | None = {} if task.latest else None
        #: Fast path (no per-field sums, every record counted in offset order): the read loop appends each
        #: compared record's fp and timestamp here and :meth:`fold` adds a batch at once.
        self.fast = not detail and not task.latest and task.strip_mark_of is None and task.skip_marked_by is None
        #: copy marks seen (:meth:`add`), when the task accounts for them
        self.marks: dict[str, int] | None = (
            None if task.strip_mark_of is None and task.skip_marked_by is None
            else {"stripped": 0, "missing_or_wrong": 0, "origin_target": 0, **({"natives": 0} if task.two_origin else {})})
        #: two-origin: the rank of the next record of each origin (copies, natives) for the order digest
        self.ranks: list[int] | None = [0, 0] if task.two_origin else None
        self.fps: list[int] = []
        self.tss: list[int] = []
        #: Schema ids of the compared values and keys (raw id bytes -> records; :func:`.schema_ids.count_ids`).
        self.ids: dict[bytes, int] = {}
        self.key_ids: dict[bytes, int] = {}

    def fold(self) -> None:
        """Add the pending fast-path records: ``order += Σ fp_i · (n + i)`` in offset order."""
        fps, tss = self.fps, self.tss
        if not fps:
            return
        n = self.n
        self.order += sum(map(operator.mul, fps, range(n, n + len(fps))))
        self.fp += sum(fps)
        self.n = n + len(fps)
        lo, hi = min(tss), max(tss)
        if self.min_ts is None or lo < self.min_ts:
            self.min_ts = lo
        if self.max_ts is None or hi > self.max_ts:
            self.max_ts = hi
        fps.clear()
        tss.clear()

    def add(self, key, value, headers, ts: int, offset: int) -> None:
        t = self.task
        if self.marks is not None:
            if t.skip_marked_by is not None and came_from(headers, t.skip_marked_by):
                self.marks["origin_target"] += 1  # the opposite flow's record: not expected on the target
                return
            if t.strip_mark_of is not None:
                headers, state = strip_mark(headers, t.strip_mark_of)
                if t.two_origin and state is MarkState.MISSING:
                    self.marks["natives"] += 1  # written here by a producer: this side's own record
                else:
                    self.marks["stripped" if state is MarkState.OK else "missing_or_wrong"] += 1
                if self.ranks is not None and self.units is None:
                    origin = 0 if state is MarkState.OK else 1
                    rank = self.ranks[origin]
                    self.ranks[origin] += 1
                    fp = fingerprint(key, value, headers, 0 if t.no_ts else ts)
                    self._count(fp, ts, key is None, value is None, key, value, headers, 0 if t.no_ts else ts, rank)
                    return
        ts_used = 0 if t.no_ts else ts
        fp = fingerprint(key, value, headers, ts_used)
        if self.units is not None:  # latest record per key: decided at the end
            if key is not None:
                self.units[key_hash(key)] = (fp, ts, value is None, key, value, headers, ts_used)
            return
        self._count(fp, ts, key is None, value is None, key, value, headers, ts_used)

    def _count(self, fp, ts, key_null, value_null, key, value, headers, ts_used, rank: int | None = None) -> None:
        self.order += fp * (self.n if rank is None else rank)
        self.n += 1
        self.fp += fp
        if self.min_ts is None or ts < self.min_ts:
            self.min_ts = ts
        if self.max_ts is None or ts > self.max_ts:
            self.max_ts = ts
        self.null_keys += key_null
        self.tombstones += value_null
        count_ids(self.ids, value)
        count_ids(self.key_ids, key)
        if self.sums is not None:
            for name, h in field_hashes(key, value, headers, ts_used).items():
                self.sums[name] += h

    def digest(self) -> Digest:
        self.fold()
        if self.units is not None:
            for fp, ts, value_null, key, value, headers, ts_used in self.units.values():
                if not value_null:  # a key whose latest record is a tombstone is deleted
                    self._count(fp, ts, False, False, key, value, headers, ts_used)
            self.order = 0  # order is not checked for latest-per-key topics
        sums = {c: 0 for c in COMPONENTS}
        sums["fp"] = self.fp & MASK64
        for name, v in (self.sums or {}).items():
            sums[name] = v & MASK64
        return Digest(self.n, self.min_ts, self.max_ts, self.null_keys, self.tombstones, sums, self.order % ORDER_PRIME,
                      dict(self.marks) if self.marks is not None else None)


_FATAL = {
    KafkaError._AUTO_OFFSET_RESET,
    KafkaError.OFFSET_OUT_OF_RANGE,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.SASL_AUTHENTICATION_FAILED,
    KafkaError._AUTHENTICATION,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError._UNKNOWN_PARTITION,
    KafkaError._SSL,
}


def consumer_config(conf: dict[str, Any], side: str, isolation_level: str, verbose: bool) -> dict[str, Any]:
    """A bulk-read consumer's settings from the plan's librdkafka ``conf`` (see :func:`portable`)."""
    out = {k: v for k, v in conf.items() if k != "_iam_region"}
    out.update(CONSUMER_DEFAULTS)
    out.update({"group.id": f"msk-migrate-validate-{side}", "isolation.level": isolation_level})
    if "_iam_region" in conf:
        from ..access.client_security import msk_iam_token

        region = conf["_iam_region"]
        out["oauth_cb"] = lambda _config: msk_iam_token(region)
    if not verbose:
        out["log_level"] = 0
    return out


def portable(conf: dict[str, Any]) -> dict[str, Any]:
    """``conf`` without callables, so a spawned worker can receive it (the IAM token callback is
    rebuilt there from the region)."""
    out = {k: v for k, v in conf.items() if not callable(v) and k not in ("logger", "log_level")}
    if "oauth_cb" in conf:
        from ..config.identifiers import msk_region

        out["_iam_region"] = msk_region(conf["bootstrap.servers"])
    return out


def read_side(conf: dict[str, Any], tasks: list[Task], detail: bool, isolation_level: str,
              verbose: bool = False, stall_seconds: float = STALL_SECONDS) -> list[Result]:
    """Read ``tasks`` (all of one cluster) with one consumer; per task a Digest and the schema ids of the
    compared values and keys (raw id bytes -> records)."""
    if not tasks:
        return []
    side = tasks[0].side
    consumer = Consumer(consumer_config(conf, side, isolation_level, verbose))
    accs = {(t.name, t.partition): _Acc(t, detail) for t in tasks}
    live = len(accs)
    one_topic = len({t.name for t in tasks}) == 1
    by_tp: dict[Any, _Acc] = {(k[1] if one_topic else k): a for k, a in accs.items()}
    # the current partition's state in the read loop (set when a run of its records begins)
    end: int
    last_off: int
    lo: int
    hi: int
    no_ts: bool
    fast: bool
    add_fp: Callable[[int], None]
    add_ts: Callable[[int], None]
    ids: dict[bytes, int]
    key_ids: dict[bytes, int]

    def finish(acc: _Acc) -> None:
        nonlocal live
        acc.fold()
        acc.done = True
        live -= 1
        consumer.pause([TopicPartition(acc.task.name, acc.task.partition)])

    reported = 0  # offsets of these ranges already added to the parent's progress count
    try:
        consumer.assign([TopicPartition(t.name, t.partition, t.start) for t in tasks])
        last = time.monotonic()
        while live:
            msgs = consumer.consume(BATCH, timeout=POLL_SECONDS)
            if not msgs:
                if time.monotonic() - last > stall_seconds:
                    stuck = sorted(f"{a.task.name}[{a.task.partition}]" for a in accs.values() if not a.done)
                    raise NativeReadError(f"{side}: no record for {stall_seconds:.0f} s from {', '.join(stuck[:5])}")
                continue
            last = time.monotonic()
            # A run of records of one partition reuses that partition's state, and the fast path appends
            # fingerprints for _Acc.fold (acc.add is the path with per-field sums or latest-per-key):
            # per-record calls, lookups and attribute updates were half the per-record cost.
            cur: object = None
            acc = None
            for m in msgs:
                err = m.error()
                if err is not None:
                    cur = None
                    e_acc = accs.get((m.topic(), m.partition()))
                    if err.code() == KafkaError._PARTITION_EOF:
                        if e_acc is not None and not e_acc.done and m.offset() >= e_acc.task.end:
                            finish(e_acc)
                        continue
                    if err.fatal() or err.code() in _FATAL:
                        where = f" {m.topic()}[{m.partition()}]" if m.topic() else ""
                        raise NativeReadError(f"{side}{where}: {err.str()}")
                    continue  # transient (a broker restarting): librdkafka retries; the stall timer decides
                tp = m.partition() if one_topic else (m.topic(), m.partition())
                if tp != cur:
                    cur = tp
                    acc = by_tp.get(tp)
                    if acc is not None:
                        if acc.done:
                            acc = None
                        else:
                            t = acc.task
                            end, last_off, lo, hi, no_ts, fast = t.end, t.end - 1, t.lo, t.hi, t.no_ts, acc.fast
                            add_fp, add_ts, ids, key_ids = acc.fps.append, acc.tss.append, acc.ids, acc.key_ids
                if acc is None:
                    continue
                off = m.offset()
                if off >= end:
                    finish(acc)
                    cur = acc = None
                    continue
                ts = m.timestamp()[1]
                if lo <= ts < hi:
                    if fast:
                        key, value = m.key(), m.value()
                        if key is None:
                            acc.null_keys += 1
                        elif len(key) >= HEADER_BYTES and key[0] == 0:  # id and Protobuf message indexes
                            count_ids(key_ids, key)
                        if value is None:
                            acc.tombstones += 1
                        elif len(value) >= HEADER_BYTES and value[0] == 0:  # id and Protobuf message indexes
                            count_ids(ids, value)
                        add_fp(fingerprint(key, value, m.headers(), 0 if no_ts else ts))
                        add_ts(ts)
                    else:
                        acc.add(m.key(), m.value(), m.headers(), ts, off)
                if off >= last_off:
                    finish(acc)
                    cur = acc = None
            for acc in accs.values():
                acc.fold()
            if _read_counter is not None:
                now = _offsets_covered(consumer, accs.values())
                with _read_counter.get_lock():
                    _read_counter.value += now - reported
                reported = now
    finally:
        consumer.close()
    return [(a.task, a.digest(), a.ids, a.key_ids) for a in accs.values()]


#: In a worker process: the parent's shared count of offsets read (progress), set by :func:`_init_worker`.
_read_counter: Any = None


def _offsets_covered(consumer: Consumer, accs: Iterable[_Acc]) -> int:
    """Offsets of the ranges behind the consumer's positions (a finished range counts whole; transaction
    markers and aborted records count as read, so a finished read reaches the ranges' total)."""
    live, n = [], 0
    for a in accs:
        if a.done:
            n += a.task.end - a.task.start
        else:
            live.append(a)
    if live:
        positions = consumer.position([TopicPartition(a.task.name, a.task.partition) for a in live])
        for a, pos in zip(live, positions, strict=True):
            if pos.offset >= 0:
                n += min(max(pos.offset - a.task.start, 0), a.task.end - a.task.start)
    return n


def _init_worker(counter: Any) -> None:
    global _read_counter
    _read_counter = counter


def _run_bin(confs: dict[str, dict[str, Any]], tasks: list[Task], detail: bool, isolation_level: str,
             verbose: bool) -> list[Result]:
    out: list[Result] = []
    for side in sorted({t.side for t in tasks}):
        out += read_side(confs[side], [t for t in tasks if t.side == side], detail, isolation_level, verbose)
    return out


_NO_LIMIT = (-(1 << 63), 1 << 63)


def tasks_of(side: str, plan: ReadPlan, tps: list[TP] | None = None) -> list[Task]:
    """The non-empty ranges of one side's :class:`ReadPlan` with their timestamp windows."""
    out = []
    for tp, (start, end) in sorted(plan.ranges.items()):
        if end <= start or (tps is not None and tp not in tps):
            continue
        if plan.partition_windows is not None:
            lo, hi = plan.partition_windows.get(tp, (0, 0))
        elif plan.window is not None:
            lo = _NO_LIMIT[0] if plan.window[0] is None else plan.window[0]
            hi = _NO_LIMIT[1] if plan.window[1] is None else plan.window[1]
        else:
            lo, hi = _NO_LIMIT
        topic, part = tp
        out.append(Task(side, topic, plan.topic_names.get(topic, topic), part, start, end, lo, hi,
                        topic in plan.no_ts_topics, topic in plan.latest_per_key_topics,
                        plan.strip_mark_of, plan.skip_marked_by, plan.two_origin))
    return out


def bins(tasks: list[Task], n: int) -> list[list[Task]]:
    """Greedy split by record count (largest first into the lightest bin)."""
    out: list[list[Task]] = [[] for _ in range(n)]
    load = [0] * n
    for t in sorted(tasks, key=lambda t: t.end - t.start, reverse=True):
        i = load.index(min(load))
        out[i].append(t)
        load[i] += t.end - t.start
    return [b for b in out if b]


def worker_count(tasks: list[Task], requested: int | None = None) -> int:
    if requested:
        return max(1, min(requested, len(tasks)))
    records = sum(t.end - t.start for t in tasks)
    if records < IN_PROCESS_BELOW:
        return 1
    return max(1, min(os.cpu_count() or 1, len(tasks), MAX_WORKERS))


def _no_marks(plan: ReadPlan) -> dict[str, int] | None:
    """The copy-mark counts of a partition with nothing read (None: the plan does not account for marks)."""
    if plan.strip_mark_of is None and plan.skip_marked_by is None:
        return None
    return {"stripped": 0, "missing_or_wrong": 0, "origin_target": 0, **({"natives": 0} if plan.two_origin else {})}


def native_checksum(
    plans: dict[str, ReadPlan],
    confs: dict[str, dict[str, Any]],
    isolation_level: str,
    detail: bool = False,
    tps: list[TP] | None = None,
    workers: int | None = None,
    verbose: bool = False,
    say: Callable[[str], None] = quiet,
    id_rows: list[IdRow] | None = None,
) -> dict[str, dict[TP, Digest]]:
    """Per-partition digests of each plan ("source", "target"), like :func:`.checksum.checksum`.
    ``confs``: librdkafka settings per side (:func:`portable` is applied here). ``tps``: only these
    partitions. ``id_rows``: when given, one :data:`IdRow` per range read is appended (the schema ids of
    its compared values, read in the same pass). Raises :class:`NativeReadError` when a cluster cannot be
    read."""
    out = {side: {tp: Digest(marks=_no_marks(plan)) for tp in plan.ranges if tps is None or tp in tps}
           for side, plan in plans.items()}
    tasks = [t for side, plan in plans.items() for t in tasks_of(side, plan, tps)]
    if not tasks:
        return out
    portable_confs = {side: portable(confs[side]) for side in plans}
    n = worker_count(tasks, workers)
    if n == 1:
        results = _run_bin(portable_confs, tasks, detail, isolation_level, verbose)
    else:
        # a few parts per worker: the pool balances them, and each finished part is progress to show
        parts = bins(tasks, n * PARTS_PER_WORKER)
        total = sum(t.end - t.start for t in tasks)
        say(f"checksum: {len(tasks)} partition range(s), {total:,} offsets, in {n} worker processes")
        results = []
        ctx = multiprocessing.get_context("spawn")  # never fork a process that holds librdkafka threads
        counter = ctx.Value("q", 0)
        pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker, initargs=(counter,))
        try:
            pending = {pool.submit(_run_bin, portable_confs, b, detail, isolation_level, verbose) for b in parts}
            shown = -1
            while pending:
                done, pending = wait(pending, timeout=PROGRESS_SECONDS, return_when=FIRST_COMPLETED)
                for f in done:
                    results += f.result()
                read = min(counter.value, total)
                if read != shown:
                    say(f"checksum: {read:,} of {total:,} offsets read ({n} worker processes)")
                    shown = read
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    for task, digest, raw_ids, raw_key_ids in results:
        out[task.side][(task.topic, task.partition)] = digest
        if id_rows is not None:
            id_rows.append((task.side, task.topic, digest.count - digest.tombstones, ids_of(raw_ids)))
            id_rows.append((task.side, task.topic, digest.count - digest.null_keys, ids_of(raw_key_ids), "key"))
    return out
