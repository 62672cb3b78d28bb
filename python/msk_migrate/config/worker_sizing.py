"""How much heap a Connect worker running one MM2 flow needs: a pure model, fitted on the local harness.

The model (docs/sizing.md "Worker memory model", measurements in docs/PERFORMANCE.md "Worker memory model")::

    tasks     = min(tasks_max, partitions)                    MM2 makes no task without a partition
    tasks/w   = ceil(tasks / workers)                         the busiest worker of the group
    parts/w   = ceil(partitions * tasks/w / tasks)            MM2 splits partitions evenly over its tasks
    live      = BASE_LIVE_MIB + parts/w * PER_PARTITION_KIB   what a full GC leaves once the copy runs
    consumer  = source_brokers * min(fetch.max.bytes, ceil(partitions / tasks) * max.partition.fetch.bytes)
    producer  = buffer.memory
    in_flight = tasks/w * (consumer + producer)
    heap      = round_up(live * HEADROOM + in_flight, 256 MiB)
    task      = max(heap + OVERHEAD_MIB, ceil(heap * 4 / 3))   ECS task memory (heap <= 75 % of it)

Which bound applies, and why (Kafka's client semantics, not measured here): a consumer holds at most one fetch
response per broker it fetches from, and one response is capped by ``fetch.max.bytes`` across partitions and by
``max.partition.fetch.bytes`` per partition — so per task the smaller of ``fetch.max.bytes`` and partitions-per-task
× ``max.partition.fetch.bytes``, once per source broker; not partitions × ``max.partition.fetch.bytes`` (that would
be 5 GiB at 2,500 partitions a task, and the consumer never asks for it). Connect gives each source task its own
producer, whose batches (``batch.size`` each, one per partition with data) all come from its ``buffer.memory`` pool:
the producer's bound is ``buffer.memory`` per task, whatever the batch size. Under exactly-once with
``transaction_boundary: poll`` the profile's ``max.partition.fetch.bytes`` is 8 MiB instead of 2 MiB: it changes
the consumer bound only for a task with at most 6 partitions (6 × 8 MiB < ``fetch.max.bytes``, 50 MiB).

The live part is fitted: ``BASE_LIVE_MIB`` and ``PER_PARTITION_KIB`` are the least-squares line through the live
heap after a full GC in the five runs of bench/worker_memory_bench.py on 2026-11-28 (1,000 partitions: 110 MiB;
3,000: 206 and 182; 10,000: 589 and 510; model 101, 200, 549: residuals within 10 %). The earlier 10,000-partition run
(2026-11-25, live 369 MiB measured after 240 s of quiet instead of 30 s) lies below the line: the model keeps the
higher figure. 100-byte records, so the fetches were small when the GC ran: the measurements fix the live state,
the client bounds add the in-flight part. ``HEADROOM`` applies to the live set only: it lives in G1's old
generation, which starts its concurrent cycle at 45 % occupancy and needs free regions to evacuate into (a live set
of at most two thirds of its share); the in-flight part is already a worst case (every fetch full, every producer
pool exhausted at once) of short-lived young objects, added once. ``OVERHEAD_MIB``: RSS above -Xmx at the
10,000-partition peak was 332 MiB (metaspace, threads, code cache, direct buffers); 512 leaves room for the sockets
to more brokers.

Invariants (tests/unit/test_worker_sizing.py): every figure grows monotonically with the partitions and never
grows when the same tasks are spread over more workers; ``heap`` is a multiple of 256 MiB and above ``live + in_flight``; ``task`` is at
least ``heap + OVERHEAD_MIB`` and at least 4/3 of ``heap``; no I/O, everything comes in through :class:`FlowLoad`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .migration import MigrationSpec
from .overrides import PROFILES, known_keys

#: Live heap of a worker running MM2's connectors with a handful of partitions (MiB): fitted, see module doc.
BASE_LIVE_MIB = 51
#: Live heap per partition a worker's tasks replicate (KiB): consumer fetch state, producer per-partition
#: queues, MM2's offset-sync and checkpoint maps, metrics. Fitted, see module doc.
PER_PARTITION_KIB = 51
#: Heap over the live set (the in-flight bound is added once): G1's old generation kept under two thirds full.
HEADROOM = 1.5
#: What the JVM takes beside its heap, for the ECS task memory (MiB).
OVERHEAD_MIB = 512
#: Heap sizes are given in steps of this (MiB).
STEP_MIB = 256

MIB = 1 << 20


@dataclass(frozen=True)
class FlowLoad:
    """What the model reads: the flow's partitions, its tasks, the workers sharing them, and its client settings.

    ``consumer``/``producer``: the settings MM2's source consumer and the worker's producer run with (the
    rendered ones: :func:`client_settings`); a key left out takes Kafka's default (kafka_config_keys.json)."""

    partitions: int
    tasks: int = 4
    workers: int = 1
    source_brokers: int = 1
    consumer: Mapping[str, str] = field(default_factory=lambda: dict(PROFILES["bulk"]["consumer"]))
    producer: Mapping[str, str] = field(default_factory=lambda: dict(PROFILES["bulk"]["producer"]))


@dataclass(frozen=True)
class WorkerMemory:
    """The model's answer for the busiest worker of the group (MiB unless named otherwise)."""

    partitions_per_worker: int
    tasks_per_worker: int
    live_mib: int
    consumer_mib: int  #: one task's consumer bound (all source brokers)
    producer_mib: int  #: one task's producer bound (buffer.memory)
    in_flight_mib: int
    heap_mib: int
    task_memory_mib: int

    @property
    def heap(self) -> str:
        """The heap as a JVM/-Xmx and ``worker.heap`` value."""
        return f"{self.heap_mib // 1024}g" if self.heap_mib % 1024 == 0 else f"{self.heap_mib}m"

    def explain(self) -> str:
        return (f"{self.partitions_per_worker:,} partitions in {self.tasks_per_worker} task(s) on the busiest worker: "
                f"live {self.live_mib} MiB + in flight {self.tasks_per_worker} x ({self.consumer_mib} fetch + "
                f"{self.producer_mib} producer) MiB, live x{HEADROOM:g} for G1")


def _setting(settings: Mapping[str, str], kind: str, key: str) -> int:
    value = settings.get(key)
    return int(value if value is not None else known_keys()[kind][key]["default"])


def client_settings(tuning_profile: str, exactly_once: bool, transaction_boundary: str | None,
                    consumer_overrides: Mapping[str, object], producer_overrides: Mapping[str, object]
                    ) -> tuple[dict[str, str], dict[str, str]]:
    """The source consumer's and the producer's settings as ``render_connectors`` writes them: the profile,
    its exactly-once consumer layer (``transaction_boundary: poll``), then the operator's overrides."""
    profile = PROFILES[tuning_profile]
    per_tx = profile["consumer_exactly_once"] if exactly_once and transaction_boundary == "poll" else {}
    consumer = {**profile["consumer"], **per_tx, **{k: str(v) for k, v in consumer_overrides.items()}}
    producer = {**profile["producer"], **{k: str(v) for k, v in producer_overrides.items()}}
    return consumer, producer


def load_for(m: MigrationSpec, partitions: int, source_brokers: int = 1, workers: int = 1) -> FlowLoad:
    """The :class:`FlowLoad` of a migration section over ``partitions`` selected partitions."""
    consumer, producer = client_settings(m.tuning_profile, m.exactly_once, m.transaction_boundary,
                                         m.consumer_overrides, m.producer_overrides)
    return FlowLoad(partitions=partitions, tasks=m.tasks_max, workers=workers, source_brokers=source_brokers,
                    consumer=consumer, producer=producer)


def worker_memory(load: FlowLoad) -> WorkerMemory:
    """The model (module doc) for ``load``."""
    parts = max(load.partitions, 0)
    tasks = max(1, min(load.tasks, parts or 1))
    workers = max(1, min(load.workers, tasks))
    tasks_w = math.ceil(tasks / workers)
    parts_w = math.ceil(parts * tasks_w / tasks)
    per_task = math.ceil(parts / tasks)
    live = BASE_LIVE_MIB + math.ceil(parts_w * PER_PARTITION_KIB / 1024)
    fetch = min(_setting(load.consumer, "consumer", "fetch.max.bytes"),
                per_task * _setting(load.consumer, "consumer", "max.partition.fetch.bytes"))
    consumer = math.ceil(max(load.source_brokers, 1) * fetch / MIB)
    producer = math.ceil(_setting(load.producer, "producer", "buffer.memory") / MIB)
    in_flight = tasks_w * (consumer + producer) if parts else 0
    heap = math.ceil((live * HEADROOM + in_flight) / STEP_MIB) * STEP_MIB
    task = max(heap + OVERHEAD_MIB, math.ceil(heap * 4 / 3))
    return WorkerMemory(parts_w, tasks_w, live, consumer, producer, in_flight, heap, task)


def heap_mib(heap: str) -> int:
    """A JVM heap size (``512m``, ``2g``) in MiB; ValueError for anything else."""
    m = re.fullmatch(r"(\d+)([mMgG])", heap.strip())
    if not m:
        raise ValueError(f"{heap!r} is not a JVM heap size (e.g. 512m or 2g)")
    return int(m.group(1)) * (1024 if m.group(2) in "gG" else 1)


@dataclass(frozen=True)
class HeapVerdict:
    """A worker heap (and task memory, on ECS) against the model: ``ok``, or the field, the problem and the fix."""

    ok: bool
    need: WorkerMemory
    field: str
    problem: str
    fix: str | None = None

    @property
    def line(self) -> str:
        return f"{self.field} {self.problem}" + (f" (fix: {self.fix})" if self.fix else "")


def judge(load: FlowLoad, heap: str, task_memory_mib: int | None = None, heap_field: str = "worker.heap",
          memory_field: str = "connect.memory") -> HeapVerdict:
    """``heap`` (and ``task_memory_mib`` when the worker runs on ECS) against :func:`worker_memory`."""
    need = worker_memory(load)
    have = heap_mib(heap)
    if have < need.heap_mib:
        return HeapVerdict(False, need, heap_field, f"{heap} is below the {need.heap} this flow needs ({need.explain()})",
                           f"set {heap_field}: {need.heap}, or lower migration.tasks_max or the fetch sizes")
    if task_memory_mib is not None and task_memory_mib < have + OVERHEAD_MIB:
        return HeapVerdict(False, need, memory_field, f"{task_memory_mib} MiB is below {heap_field} {heap} + {OVERHEAD_MIB} MiB "
                           "the JVM takes beside its heap",
                           f"set {memory_field}: {max(have + OVERHEAD_MIB, math.ceil(have * 4 / 3))} or more (a Fargate size)")
    return HeapVerdict(True, need, heap_field, f"{heap} >= the {need.heap} this flow needs ({need.explain()})"
                       + (f"; {memory_field} {task_memory_mib} MiB >= heap + {OVERHEAD_MIB} MiB" if task_memory_mib else ""))
