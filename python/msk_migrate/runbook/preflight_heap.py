"""The worker's heap against the flow's partitions (issue 44): preflight's row and ``connectors apply``'s refusal.

The decision is :func:`msk_migrate.config.worker_sizing.judge` (pure); this module only gathers its inputs: the
selected source partitions and broker count (read by the caller's session), the flow's tuning, and where the
worker runs — an environment's ECS service (``worker.heap``, ``connect.memory``, the busiest worker when the
service runs ``connect.min_capacity`` tasks) or a local/lab worker (its -Xmx; one worker holds every task).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.migration import MigrationSpec, WorkerSpec
from ..config.worker_sizing import HeapVerdict, judge, load_for

NAME = "worker heap vs partitions"


@dataclass(frozen=True)
class WorkerPlacement:
    """Where the flow's worker runs: its heap, the ECS task memory (None off ECS) and the workers sharing the tasks."""

    heap: str
    task_memory_mib: int | None = None
    workers: int = 1
    heap_field: str = "worker.heap"


def placement_of(worker: WorkerSpec, env_name: str | None, local_heap: str | None = None) -> WorkerPlacement:
    """``env_name``: the environment's ECS service sizes the worker (its file is read, no network);
    ``local_heap``: the local worker's -Xmx (``--local``); else the flow's ``worker.heap`` on one worker."""
    if local_heap is not None:
        return WorkerPlacement(local_heap, None, 1, "MSK_MIGRATE_LOCAL_WORKER_HEAP (the local worker's -Xmx)")
    if env_name:
        from ..config.environment import load_environment
        from ..config.environment_files import ENVIRONMENTS_DIR

        # The flow keeps the environment's name, not its file: the repository's file of that name is read, and
        # used only when its worker is the flow's (an environment given as a path elsewhere: heap only, one worker).
        path = ENVIRONMENTS_DIR / f"{env_name}.yaml"
        if path.is_file():
            cfg = load_environment(path)
            if cfg.worker == worker:
                return WorkerPlacement(cfg.worker.heap, cfg.connect.memory, cfg.connect.min_capacity)
    return WorkerPlacement(worker.heap)


def verdict(m: MigrationSpec, partitions: int, source_brokers: int, where: WorkerPlacement) -> HeapVerdict:
    return judge(load_for(m, partitions, source_brokers, where.workers), where.heap, where.task_memory_mib,
                 heap_field=where.heap_field)


def heap_row(m: MigrationSpec, partitions: int, source_brokers: int, where: WorkerPlacement) -> tuple[str, str, str]:
    """Preflight's row: ``fail`` names the heap (or task memory) the flow needs."""
    v = verdict(m, partitions, source_brokers, where)
    return (NAME, "ok" if v.ok else "fail", v.line)


def selected_partitions(source, m: MigrationSpec) -> int:
    """The partitions of the source topics the flow selects (``source``: an AdminSession)."""
    from ..kafka.selection import topic_selection

    topics = source.topics()
    return sum(topics[t] for t in topic_selection(m).select(topics))


def require_heap(flow, force: bool, local_heap: str | None = None) -> str | None:
    """``connectors apply``: refuse (exit 2, nothing applied) a flow whose worker heap or task memory is below the
    model for its source's selected partitions, unless ``force``; then the note that says it was forced."""
    from ..access.admin import AdminSession
    from ..errors import UsageError

    src = AdminSession.for_endpoint("source", flow.source)
    where = placement_of(flow.worker, flow.env_name, local_heap)
    v = verdict(flow.migration, selected_partitions(src, flow.migration), src.broker_count(), where)
    if v.ok:
        return None
    if not force:
        raise UsageError(v.field, v.problem, f"{v.fix}; or pass --force to apply anyway")
    return f"applied with --force although {v.line}"
