"""What runs in a local environment, read from its recorded state and the live processes: the dict
``local status`` prints (a table or the JSON shape) and ``local up`` returns. Reads only; starts nothing.

``running`` is true when every recorded part (cluster, broker, ZooKeeper, worker, Prometheus) is alive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import versions
from .endpoints import cluster_endpoint
from .layout import client_listener
from .procs import ProcRecord
from .state import LocalState, flow_worker_name


def worker_name(index: int) -> str:
    """Process name of worker ``index`` (0-based): connect, connect-2, connect-3..."""
    return "connect" if index == 0 else f"connect-{index + 1}"


def _proc(rec: ProcRecord) -> dict[str, Any]:
    return {"pid": rec.pid, "running": rec.alive(), "log": rec.log}


def _cluster(state: LocalState, role: str, brokers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One side's row (and its brokers' rows appended to ``brokers``); None when it never started."""
    rec = state.proc(f"{role}-broker")
    layout = state.clusters.get(role)  # type: ignore[call-overload]
    if rec is None or layout is None or state.shape is None:
        return None
    side = state.side(role)
    ep = cluster_endpoint(state, role)
    out: dict[str, Any] = {"bootstrap_servers": ep.bootstrap_servers, "kafka_version": side.kafka_version, **_proc(rec),
                           "mode": side.mode, "brokers": side.brokers, "security": side.security, "auth": ep.auth.mode,
                           "replication_factor": side.replication_factor, "min_insync_replicas": side.min_insync_replicas}
    mine: list[dict[str, Any]] = []
    if layout.zookeeper and (zrec := state.proc(layout.zookeeper.name)):
        zk = layout.zookeeper
        mine.append({"name": zk.name, "role": role, "id": None, "endpoint": f"127.0.0.1:{zk.port}",
                     "ports": {"CLIENT": zk.port}, **_proc(zrec)})
    for n in layout.nodes:
        if nrec := state.proc(n.name):
            mine.append({"name": n.name, "role": role, "id": n.id, "endpoint": f"127.0.0.1:{n.ports[client_listener(side)]}",
                         "ports": dict(n.ports), **_proc(nrec)})
    out["running"] = all(b["running"] for b in mine)
    brokers += mine
    return out


def describe_status(state: LocalState, base_dir: Path) -> dict[str, Any]:
    """``base_dir``, ``running``, and per part that was started: source, target, brokers, shape, connect,
    workers (more than one), prometheus."""
    out: dict[str, Any] = {"base_dir": str(base_dir), "running": False}
    brokers: list[dict[str, Any]] = []
    for role in state.roles:
        row = _cluster(state, role, brokers)
        if row is not None:
            out[role] = row
    if brokers:
        out["brokers"] = brokers
    if state.shape is not None:
        out["shape"] = state.shape.to_dict()
    worker, rec = state.worker, state.proc("connect")
    if worker is not None and rec is not None:
        out["connect"] = {"url": f"http://127.0.0.1:{worker.rest_port}",
                          "metrics_url": f"http://127.0.0.1:{worker.metrics_port}/metrics",
                          "kafka_version": versions.kafka_version(), **_proc(rec)}
    workers = []
    for i, w in enumerate(state.workers):
        if wrec := state.proc(worker_name(i)):
            workers.append({"name": worker_name(i), "url": f"http://127.0.0.1:{w.rest_port}",
                            "metrics_url": f"http://127.0.0.1:{w.metrics_port}/metrics", **_proc(wrec)})
    if len(workers) > 1 and "connect" in out:
        out["workers"] = workers
        out["connect"]["workers"] = len(workers)
    for name, fw in state.flow_workers.items():  # one more migration's own worker (topology rehearsals)
        if frec := state.proc(flow_worker_name(name)):
            out[f"flow_worker_{name}"] = {"url": f"http://127.0.0.1:{fw.spec.rest_port}", "source": fw.source,
                                          "target": fw.target, "metrics_url": f"http://127.0.0.1:{fw.spec.metrics_port}/metrics",
                                          **_proc(frec)}
    prom = state.proc("prometheus")
    if prom is not None and state.prometheus_port:
        out["prometheus"] = {"url": f"http://127.0.0.1:{state.prometheus_port}", **_proc(prom)}
    parts = [v for k, v in out.items() if isinstance(v, dict) and k != "shape"] + out.get("workers", [])
    out["running"] = bool(parts) and all(p["running"] for p in parts)
    return out
