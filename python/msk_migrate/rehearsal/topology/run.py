"""Run one topology rehearsal: its clusters, its flows, its steps in order (stopping at the first that fails)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ...local.harness import DEFAULT_DIR, LocalEnvironment
from ...local.shape import make_shape
from ...outcome import quiet
from ..result import RehearsalResult, StepFailed
from ..run import run_step
from . import active_active, consolidate, fan_out
from .context import FlowCase, TopologyContext

StepFn = Callable[[TopologyContext], str]
#: name -> (its flows at a replication factor, its steps); the default rehearsal (active/passive) is not here
TOPOLOGIES: dict[str, tuple[Callable[[int], dict[str, FlowCase]], list[tuple[str, StepFn]]]] = {
    "consolidate": (consolidate.flows, consolidate.PLAN),
    "fan-out": (fan_out.flows, fan_out.PLAN),
    "active-active": (active_active.flows, active_active.PLAN),
}
#: the topologies that need the third cluster (the peer)
WITH_PEER = {"consolidate", "fan-out"}


def rehearse_topology(topology: str, say: Callable[[str], None] = quiet, base_dir: Path = DEFAULT_DIR,
                      timeout: float = 240.0, broker_heap: str | None = None) -> RehearsalResult:
    """The rehearsal of ``topology`` on one broker per cluster (source, target and the peer), each migration on
    its own Connect worker. The environment is brought to that shape first (a previous run's shape never stays)."""
    make_flows, steps = TOPOLOGIES[topology]
    t0 = time.time()
    shape = make_shape(heap=broker_heap, peer_brokers=1 if topology in WITH_PEER else 0)
    env = LocalEnvironment(Path(base_dir), with_monitoring=False, progress=say, shape=shape)
    ctx = TopologyContext(env=env, say=say, result=RehearsalResult(status={}), timeout=timeout,
                          flows=make_flows(shape.target.replication_factor))
    try:
        for name, fn in steps:
            run_step(ctx, name, fn)
    except StepFailed:
        pass
    res = ctx.result
    res.validation = {label: f.get("validation", {}) for label, f in ctx.figures.items()}
    res.seconds = {s.name: s.seconds for s in res.steps}
    res.seconds["total"] = round(time.time() - t0, 1)
    return res
