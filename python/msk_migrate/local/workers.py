"""The local Connect workers: their specs (recorded once, so ports and the group survive restarts) and
starting every missing or dead one against the recorded clusters.

Invariant: every worker of the state is one group on the target, with internal topics replicated like the
target's (3 on a 3-broker target with min ISR 2), and gets the source's MM2 secrets as ``MM2_SOURCE_*``
variables of its own process, as an ECS task gets them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import versions
from ..config.migration import MigrationSpec, WorkerSpec
from .connect_worker import LOCAL_WORKER_HEAP, local_worker_spec, start_connect_worker, wait_connect_ready
from .endpoints import cluster_endpoint, read_secrets, worker_secret_env
from .procs import ProcRecord
from .settings import LocalSettings
from .shape import PEER
from .state import LocalState
from .status import worker_name


def sized_heap(partitions: int, workers: int, source_brokers: int, exactly_once: bool = False,
               floor: str = LOCAL_WORKER_HEAP) -> str:
    """The -Xmx of a local worker for a flow of ``partitions`` (the shipped profile and tasks_max, the model of
    :mod:`msk_migrate.config.worker_sizing`), never below ``floor`` (the local worker's default)."""
    from ..config.worker_sizing import heap_mib, load_for, worker_memory

    need = worker_memory(load_for(MigrationSpec(exactly_once=exactly_once), partitions, source_brokers, workers))
    return need.heap if need.heap_mib > heap_mib(floor) else floor


def plan_workers(state: LocalState, count: int, settings: dict[str, Any], exactly_once: bool,
                 partitions: int | None = None) -> None:
    """Record a spec for each of ``count`` workers (existing specs kept). ``settings``: WorkerSpec fields
    for every worker (``group_id`` chooses the group); the heap: ``heap`` of ``settings``, else
    MSK_MIGRATE_LOCAL_WORKER_HEAP, else the memory model's for ``partitions`` (or MSK_MIGRATE_LOCAL_FLOW_PARTITIONS)
    when known, else the local worker's default."""
    update = {"replication_factor": state.side("target").replication_factor,
              **{k: v for k, v in settings.items() if k != "group_id"}}
    switches = LocalSettings.from_env()
    if partitions is None and switches.flow_partitions is not None:
        partitions = switches.flow_partitions
    if "heap" not in update and switches.worker_heap:
        update["heap"] = switches.worker_heap
    elif "heap" not in update and partitions:
        update["heap"] = sized_heap(partitions, count, state.side("source").brokers, exactly_once or state.exactly_once)
    group = state.workers[0].group_id if state.workers else settings.get("group_id", WorkerSpec.model_fields["group_id"].default)
    workers = list(state.workers)
    while len(workers) < count:
        workers.append(local_worker_spec(group_id=group).model_copy(update=update))
    state.workers = [WorkerSpec.model_validate(w.model_dump()) for w in workers]  # each spec checked
    state.exactly_once = exactly_once or state.exactly_once


def start_workers(state: LocalState, base_dir: Path, record: Callable[[str, ProcRecord], None],
                  progress: Callable[[str], None], from_image: bool | None) -> None:
    """Start every recorded worker that is not alive, then wait until all answer as MM2 workers."""
    migration = MigrationSpec(exactly_once=True) if state.exactly_once else None
    source, target = cluster_endpoint(state, "source"), cluster_endpoint(state, "target")
    # the peer (topology rehearsals) is pinned too: its flows run on these workers beside the pair's
    others = {PEER: cluster_endpoint(state, PEER)} if PEER in state.roles else None
    secrets = worker_secret_env("source", read_secrets(state.secrets_file)) if state.secrets_file else None
    started: list[tuple[ProcRecord, str]] = []
    for i, worker in enumerate(state.workers):
        name = worker_name(i)
        rec = state.proc(name)
        if not (rec and rec.alive()):
            progress(f"starting Kafka Connect worker {name} (MM2, Kafka {versions.kafka_version()})")
            rec = start_connect_worker(target, base_dir / name, worker, name=name, source=source, migration=migration,
                                       credentials_dir=base_dir / "connect", secret_env=secrets, from_image=from_image,
                                       others=others)
            record(name, rec)
        started.append((rec, f"http://127.0.0.1:{worker.rest_port}"))
    for rec, url in started:
        wait_connect_ready(rec, url)
