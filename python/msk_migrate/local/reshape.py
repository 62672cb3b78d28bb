"""A shape change on an existing environment: what must restart, and what must start over.

Invariants, so that any sequence of ``local up`` / ``rehearse`` / ``local down`` with any shapes works:

- a side whose cluster changed (Kafka version, metadata mode, broker count or security) is stopped, its
  data directory removed and its layout forgotten: it starts over on new ports with the new shape;
- a side whose heap alone changed is stopped and keeps its data and ports: ``up`` restarts it;
- a peer cluster added starts; one removed is stopped and its data removed; either way (and when it starts
  over) the Connect workers restart on their ports and group, since they pin the clusters they may reach;
- when the source or the target starts over, the Connect workers (a group whose internal topics live on the target and
  whose environment names the source) and Prometheus (it scrapes the workers' ports) are stopped and
  forgotten too, and the MM2 secrets file goes with a source that starts over.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from .procs import stop
from .shape import PEER, EnvironmentShape
from .state import ROLES, LocalState, flow_worker_name


def changes(old: EnvironmentShape, new: EnvironmentShape) -> dict[str, str]:
    """role -> "recreate", "restart" or "remove" for each cluster that differs between ``old`` and ``new``
    (a peer only ``new`` has is simply started by ``up``)."""
    out: dict[str, str] = {}
    for role in ROLES:
        a, b = old.side(role), new.side(role)
        if a != b:
            out[role] = "restart" if a.same_cluster(b) else "recreate"
    if old.peer is not None:
        if new.peer is None:
            out[PEER] = "remove"
        elif old.peer != new.peer:
            out[PEER] = "restart" if old.peer.same_cluster(new.peer) else "recreate"
    return out


def _stop(state: LocalState, names: list[str]) -> None:
    for name in names:
        rec = state.procs.pop(name, None)
        if rec is not None:
            stop(rec, timeout=60)


def apply_shape(state: LocalState, wanted: EnvironmentShape, base_dir: Path, progress: Callable[[str], None]) -> None:
    """Bring the recorded ``state`` to ``wanted``: stop (and wipe) what cannot stay; ``up`` starts the rest."""
    old = state.shape
    if old is None or old == wanted:
        state.shape = wanted
        return
    todo = changes(old, wanted)
    for role, what in todo.items():
        layout = state.clusters.get(role)  # type: ignore[call-overload]
        names = [n.name for n in layout.nodes] + ([layout.zookeeper.name] if layout and layout.zookeeper else []) if layout else []
        if what == "remove":
            progress(f"{role}: {old.describe(role)} -> none: stopping it (its data is removed)")
        else:
            progress(f"{role}: {old.describe(role)} -> {wanted.describe(role)}: "
                     + ("restarting its brokers" if what == "restart" else "starting the cluster over (its data is removed)"))
        _stop(state, names)
        if what in ("recreate", "remove"):
            state.clusters.pop(role, None)  # type: ignore[call-overload]
            shutil.rmtree(base_dir / role, ignore_errors=True)
            if role == "source":
                state.secrets_file = None
    if old.peer != wanted.peer and not any(what == "recreate" and role in ROLES for role, what in todo.items()):
        progress("restarting the Connect workers: they pin the clusters their connectors may reach")
        _stop(state, sorted((n for n in state.procs if n == "connect" or n.startswith("connect-")), reverse=True))
    for name, fw in list(state.flow_workers.items()):  # a flow worker whose cluster starts over or goes is forgotten
        if todo.get(fw.source) in ("recreate", "remove") or todo.get(fw.target) in ("recreate", "remove"):
            _stop(state, [flow_worker_name(name)])
            state.flow_workers.pop(name)
    if any(what == "recreate" and role in ROLES for role, what in todo.items()):
        progress("stopping the Connect workers and Prometheus: they start again against the new clusters")
        _stop(state, sorted((n for n in state.procs if n == "connect" or n.startswith("connect-")), reverse=True))
        _stop(state, ["prometheus"])
        state.workers, state.exactly_once, state.prometheus_port = [], False, None
    state.shape = wanted
