"""The worker memory model (msk_migrate.config.worker_sizing): its invariants, its fit to the measurements, and
the decisions built on it — preflight's row, `connectors apply`'s refusal, the environment's defaults and the local
worker's heap. No server: every input is passed in (the apply refusal runs with its source session stubbed)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from msk_migrate.config.environment import load_environment
from msk_migrate.config.migration import MigrationSpec, WorkerSpec
from msk_migrate.config.worker_sizing import (
    HEADROOM,
    OVERHEAD_MIB,
    STEP_MIB,
    FlowLoad,
    heap_mib,
    judge,
    load_for,
    worker_memory,
)
from msk_migrate.errors import UsageError

DEV = Path(__file__).resolve().parents[2] / "infra" / "environments" / "dev.yaml"


@pytest.mark.parametrize("tasks,workers,brokers", [(1, 1, 1), (4, 1, 1), (4, 2, 3), (16, 4, 3)])
def test_figures_grow_with_the_partitions_and_heap_covers_what_is_reachable(tasks, workers, brokers):
    prev = None
    for parts in (1, 10, 100, 1_000, 3_000, 10_000, 30_000):
        w = worker_memory(FlowLoad(parts, tasks, workers, brokers))
        assert w.heap_mib % STEP_MIB == 0
        assert w.heap_mib >= w.live_mib + w.in_flight_mib
        assert w.task_memory_mib >= w.heap_mib + OVERHEAD_MIB and w.task_memory_mib * 3 >= w.heap_mib * 4
        if prev is not None:
            assert (w.live_mib, w.heap_mib, w.task_memory_mib) >= (prev.live_mib, prev.heap_mib, prev.task_memory_mib)
        prev = w


def test_the_consumer_bound_is_fetch_max_bytes_per_broker_not_partitions_times_the_partition_fetch():
    w = worker_memory(FlowLoad(10_000, tasks=4, source_brokers=1))
    assert w.consumer_mib == 50  # fetch.max.bytes (Kafka's default), not 2,500 x 2 MiB
    assert worker_memory(FlowLoad(10_000, tasks=4, source_brokers=3)).consumer_mib == 150
    assert worker_memory(FlowLoad(8, tasks=4)).consumer_mib == 4  # 2 partitions a task x 2 MiB
    assert w.producer_mib == 32  # buffer.memory, whatever batch.size


def test_exactly_once_fetches_8_mib_a_partition_which_matters_only_for_few_partitions_a_task():
    alo, eos = MigrationSpec(), MigrationSpec(exactly_once=True)
    assert worker_memory(load_for(eos, 8)).consumer_mib == 16 > worker_memory(load_for(alo, 8)).consumer_mib == 4
    assert worker_memory(load_for(eos, 3000)).heap_mib == worker_memory(load_for(alo, 3000)).heap_mib


def test_overrides_and_workers_change_the_figure():
    m = MigrationSpec(consumer_overrides={"fetch.max.bytes": str(200 << 20)}, producer_overrides={"buffer.memory": str(64 << 20)})
    w = worker_memory(load_for(m, 3000))
    assert (w.consumer_mib, w.producer_mib) == (200, 64)
    two = worker_memory(load_for(MigrationSpec(), 10_000, workers=2))
    assert (two.tasks_per_worker, two.partitions_per_worker) == (2, 5000)
    assert two.heap_mib <= worker_memory(load_for(MigrationSpec(), 10_000)).heap_mib


#: (partitions, live heap after a full GC in MiB) measured by bench/worker_memory_bench.py on 2026-11-28 (docs/PERFORMANCE.md)
MEASURED_LIVE = [(1_000, 110), (3_000, 206), (3_000, 182), (10_000, 589), (10_000, 510)]


@pytest.mark.parametrize("parts,live", MEASURED_LIVE)
def test_the_live_part_is_within_12_percent_of_the_measurements_and_its_headroom_covers_them(parts, live):
    model = worker_memory(FlowLoad(parts, tasks=4)).live_mib
    assert math.isclose(model, live, rel_tol=0.12) and model * HEADROOM >= live


def test_the_harness_default_is_refused_for_the_issue_s_3000_partitions():
    v = judge(FlowLoad(3000, tasks=4), "512m")
    assert not v.ok and v.field == "worker.heap" and v.fix is not None
    assert f"set worker.heap: {v.need.heap}" in v.fix and "512m is below" in v.problem and "\n" not in v.line
    assert judge(FlowLoad(3000, tasks=4), v.need.heap).ok


def test_task_memory_below_heap_plus_overhead_is_named():
    v = judge(FlowLoad(100), "1g", task_memory_mib=1024)
    assert not v.ok and v.field == "connect.memory" and "1536" in (v.fix or "")
    assert judge(FlowLoad(100), "1g", task_memory_mib=2048).ok


def test_heap_sizes_parse():
    assert heap_mib("512m") == 512 and heap_mib("2G") == 2048
    with pytest.raises(ValueError):
        heap_mib("2gb")


# ---- preflight's row and apply's refusal ------------------------------------------------------------
def test_preflight_row_fails_with_the_heap_needed():
    from msk_migrate.runbook.preflight_heap import NAME, WorkerPlacement, heap_row

    name, status, detail = heap_row(MigrationSpec(), 3000, 1, WorkerPlacement("512m"))
    assert (name, status) == (NAME, "fail") and "worker.heap 512m is below the 768m" in detail
    assert heap_row(MigrationSpec(), 3000, 1, WorkerPlacement("1g"))[1] == "ok"
    assert heap_row(MigrationSpec(), 100, 1, WorkerPlacement("1g", task_memory_mib=1024))[1] == "fail"


class _Source:
    def __init__(self, topics: dict[str, int], brokers: int = 1):
        self._topics, self._brokers = topics, brokers

    def topics(self) -> dict[str, int]:
        return self._topics

    def broker_count(self) -> int:
        return self._brokers


def _flow(heap: str):
    from msk_migrate.config.flow import Flow
    from msk_migrate.config.migration import ClusterEndpoint

    return Flow("test", ClusterEndpoint(alias="source", bootstrap_servers="s.invalid:9092"),
                ClusterEndpoint(alias="target", bootstrap_servers="t.invalid:9092"), MigrationSpec(name="big"),
                WorkerSpec(heap=heap))


def test_apply_refuses_a_small_heap_in_one_line_and_force_says_so(monkeypatch):
    from msk_migrate.access.admin import AdminSession
    from msk_migrate.runbook import preflight_heap

    topics = {f"t{i}": 250 for i in range(12)}  # 3,000 partitions in 12 topics, as the issue's run
    monkeypatch.setattr(AdminSession, "for_endpoint", classmethod(lambda cls, role, ep: _Source(topics)))
    with pytest.raises(UsageError) as err:
        preflight_heap.require_heap(_flow("512m"), force=False)
    assert err.value.field == "worker.heap" and "--force" in (err.value.fix or "") and "\n" not in str(err.value)
    assert "768m" in str(err.value)
    note = preflight_heap.require_heap(_flow("512m"), force=True)
    assert note and note.startswith("applied with --force") and "768m" in note
    assert preflight_heap.require_heap(_flow("1g"), force=False) is None
    local = preflight_heap.require_heap(_flow("1g"), force=True, local_heap="512m")
    assert local and "MSK_MIGRATE_LOCAL_WORKER_HEAP" in local


# ---- the environment's defaults ------------------------------------------------------------------
def _env(tmp_path, edit) -> Path:
    data = yaml.safe_load(DEV.read_text())
    edit(data)
    path = tmp_path / "dev.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_environment_defaults_follow_connect_partitions(tmp_path):
    def big(d):
        d["worker"].pop("heap", None)
        d["connect"].pop("memory", None)
        d["connect"]["partitions"] = 30_000
    cfg = load_environment(_env(tmp_path, big))
    need = worker_memory(load_for(cfg.migration, 30_000, 3, cfg.connect.min_capacity))
    assert heap_mib(cfg.worker.heap) == need.heap_mib > 1024
    assert cfg.connect.memory >= heap_mib(cfg.worker.heap) + OVERHEAD_MIB
    untouched = load_environment(DEV)  # no connect.partitions: the file's own figures, unchanged
    assert (untouched.worker.heap, untouched.connect.memory) == ("2g", 4096)


def test_environment_refuses_a_given_heap_below_the_partitions(tmp_path):
    def small(d):
        d["worker"]["heap"] = "1g"
        d["connect"]["partitions"] = 30_000
    with pytest.raises((UsageError, ValidationError)) as err:
        load_environment(_env(tmp_path, small))
    assert "worker.heap" in str(err.value) and "connect.partitions" in str(err.value)


# ---- the local worker ------------------------------------------------------------------------------
def test_local_worker_is_sized_by_the_model_when_the_partitions_are_known():
    from msk_migrate.local.workers import sized_heap

    assert sized_heap(12, 1, 1) == "512m"  # the rehearsal's few partitions: the harness default
    assert sized_heap(3000, 1, 1) == worker_memory(FlowLoad(3000)).heap
    assert heap_mib(sized_heap(10_000, 1, 1)) >= heap_mib(sized_heap(3000, 1, 1))


def test_an_environment_flow_is_judged_with_its_ecs_task_memory_and_workers():
    from msk_migrate.runbook.preflight_heap import WorkerPlacement, placement_of

    cfg = load_environment(DEV)
    assert placement_of(cfg.worker, cfg.name) == WorkerPlacement(cfg.worker.heap, cfg.connect.memory, cfg.connect.min_capacity)
    assert placement_of(cfg.worker, "not-an-environment") == WorkerPlacement(cfg.worker.heap)  # heap only
    assert placement_of(cfg.worker, cfg.name, local_heap="512m").heap == "512m"
