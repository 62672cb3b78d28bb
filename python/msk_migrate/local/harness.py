"""`msk-migrate local up|status|down`: source cluster, target cluster, N Connect workers in one group
(default 1; tests of rebalancing use 2) and optionally Prometheus, as separate processes on 127.0.0.1,
data under .local/.

``up`` is idempotent (a healthy environment is returned as is; dead parts are restarted on their
previous ports), ``down`` stops only processes recorded by ``up`` (pid + kernel start time).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import versions
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..paths import LOCAL_DIR
from .broker import BrokerSpec, start_broker, wait_broker_ready
from .classpath import classpath
from .connect_worker import local_worker_spec, start_connect_worker, wait_connect_ready
from .procs import ProcRecord, port_open, stop

DEFAULT_DIR = LOCAL_DIR / "env"
ORDER = ["source-broker", "target-broker", "connect", "prometheus"]


class LocalEnvironment:
    def __init__(
        self,
        base_dir: Path = DEFAULT_DIR,
        with_monitoring: bool = False,
        with_connect: bool = True,
        progress: Callable[[str], None] | None = None,
        workers: int = 1,
        exactly_once: bool = False,
        worker_settings: dict[str, Any] | None = None,
        broker_heap: str | None = None,
    ):
        """``workers``: Connect workers in the one group (the first is ``connect``, then ``connect-2``...).
        ``exactly_once``: workers run with exactly.once.source.support=enabled (KIP-618).
        ``worker_settings``: WorkerSpec fields for every worker (e.g. faster auto-restart back-off, ``heap``).
        ``broker_heap``: -Xmx of both brokers (e.g. "2g" for 10,000 partitions); default the environment
        variable MSK_MIGRATE_LOCAL_BROKER_HEAP, else BrokerSpec's default (workers: ``heap`` in
        ``worker_settings``, else MSK_MIGRATE_LOCAL_WORKER_HEAP, else the local worker's default)."""
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.base_dir = Path(base_dir)
        self.workers = workers
        self.exactly_once = exactly_once
        self.worker_settings = dict(worker_settings or {})
        self.broker_heap = broker_heap or os.environ.get("MSK_MIGRATE_LOCAL_BROKER_HEAP") or None
        self.with_monitoring = with_monitoring
        self.with_connect = with_connect
        self.progress = progress or (lambda msg: None)
        self.state_file = self.base_dir / "state.json"

    # ---- state ---------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        if self.state_file.exists():
            return json.loads(self.state_file.read_text())
        return {"procs": {}, "ports": {}}

    def _save(self, state: dict[str, Any]) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.state_file)

    @staticmethod
    def _rec(state: dict[str, Any], name: str) -> ProcRecord | None:
        raw = state["procs"].get(name)
        return ProcRecord(**raw) if raw else None

    # ---- endpoints -----------------------------------------------------------------------
    def source(self, state: dict[str, Any] | None = None) -> ClusterEndpoint:
        state = state or self._load()
        return ClusterEndpoint(alias="source", bootstrap_servers=f"127.0.0.1:{state['ports']['source']}")

    def target(self, state: dict[str, Any] | None = None) -> ClusterEndpoint:
        state = state or self._load()
        return ClusterEndpoint(alias="target", bootstrap_servers=f"127.0.0.1:{state['ports']['target']}")

    def worker_spec(self, state: dict[str, Any] | None = None) -> WorkerSpec:
        state = state or self._load()
        return WorkerSpec(**state["worker"])

    # ---- lifecycle -----------------------------------------------------------------------
    def up(self) -> dict[str, Any]:
        state = self._load()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        brokers = {
            "source": (versions.kafka_version(), "kafka-source", True),
            "target": (versions.kafka_target_version(), "kafka-target", False),
        }
        errors: list[BaseException] = []
        lock = threading.Lock()

        def ensure_broker(role: str) -> None:
            try:
                name = f"{role}-broker"
                rec = self._rec(state, name)
                port = state["ports"].get(role)
                if rec and rec.alive() and port and port_open(port):
                    return
                version, cp_name, auto_create = brokers[role]
                self.progress(f"starting {role} cluster (Kafka {version}, KRaft)")
                spec = BrokerSpec(role, version, classpath(cp_name), self.base_dir / role, auto_create)
                if self.broker_heap:
                    spec.heap = self.broker_heap
                rec, port = start_broker(spec)
                with lock:
                    state["procs"][name] = rec.to_dict()
                    state["ports"][role] = port
                    state.setdefault("versions", {})[role] = version
                    self._save(state)
                wait_broker_ready(rec, port)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=ensure_broker, args=(r,)) for r in brokers]
        if self.with_connect:  # resolve the Connect classpath while brokers boot
            threads.append(threading.Thread(target=lambda: self._safe(errors, classpath, "connect")))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]

        if self.with_connect:
            self._ensure_workers(state)

        if self.with_monitoring:
            from . import prometheus as prom  # provided by the monitoring module

            rec = self._rec(state, "prometheus")
            if not (rec and rec.alive()):
                self.progress("starting Prometheus (scraping the Connect worker)")
                worker = WorkerSpec(**state["worker"])
                started = prom.start_prometheus(
                    targets=[f"127.0.0.1:{worker.metrics_port}"], data_dir=self.base_dir / "prometheus",
                    port=state["ports"].get("prometheus"),
                )
                state["procs"]["prometheus"] = started.record.to_dict()
                state["ports"]["prometheus"] = started.port
                self._save(state)
        self._save(state)
        return self.status()

    @staticmethod
    def worker_name(index: int) -> str:
        """Process name of worker ``index`` (0-based): connect, connect-2, connect-3..."""
        return "connect" if index == 0 else f"connect-{index + 1}"

    def _ensure_workers(self, state: dict[str, Any]) -> None:
        """Start every missing or dead worker (same group, own ports and config dir), then wait for all."""
        settings = {k: v for k, v in self.worker_settings.items() if k != "group_id"}
        if "heap" not in settings and os.environ.get("MSK_MIGRATE_LOCAL_WORKER_HEAP"):
            settings["heap"] = os.environ["MSK_MIGRATE_LOCAL_WORKER_HEAP"]
        group = self.worker_settings.get("group_id", WorkerSpec.model_fields["group_id"].default)
        if "worker" not in state:
            state["worker"] = local_worker_spec(group_id=group).model_copy(update=settings).model_dump()
        specs = state.setdefault("workers", [state["worker"]])
        while len(specs) < self.workers:
            first = WorkerSpec(**state["worker"])
            extra = local_worker_spec(group_id=first.group_id).model_copy(update=settings)
            specs.append(extra.model_dump())
        state["exactly_once"] = self.exactly_once or state.get("exactly_once", False)
        migration = MigrationSpec(exactly_once=True) if state["exactly_once"] else None
        started: list[tuple[ProcRecord, str]] = []
        for i, raw in enumerate(specs[: max(self.workers, len(specs))]):
            name = self.worker_name(i)
            worker = WorkerSpec(**raw)
            rec = self._rec(state, name)
            if not (rec and rec.alive()):
                self.progress(f"starting Kafka Connect worker {name} (MM2, Kafka {versions.kafka_version()})")
                rec = start_connect_worker(self.target(state), self.base_dir / name, worker, name=name,
                                           source=self.source(state), migration=migration,
                                           credentials_dir=self.base_dir / "connect")
                state["procs"][name] = rec.to_dict()
                self._save(state)
            started.append((rec, f"http://127.0.0.1:{worker.rest_port}"))
        for rec, url in started:
            wait_connect_ready(rec, url)

    def stop_workers(self) -> list[str]:
        """Stop every Connect worker and forget the group, so the next ``up`` starts a new one
        (e.g. with other ``worker_settings`` or ``exactly_once``); brokers keep running."""
        state = self._load()
        stopped = []
        for name in sorted((n for n in state["procs"] if n == "connect" or n.startswith("connect-")), reverse=True):
            rec = self._rec(state, name)
            if rec and rec.alive():
                stop(rec)
                stopped.append(name)
            state["procs"].pop(name, None)
        for key in ("worker", "workers", "exactly_once"):
            state.pop(key, None)
        self._save(state)
        return stopped

    def restart_worker(self, index: int) -> ProcRecord:
        """Start worker ``index`` again after it died (kill -9 in the fault suite); same ports and group."""
        state = self._load()
        self._ensure_workers(state)
        rec = self._rec(state, self.worker_name(index))
        if rec is None:
            raise RuntimeError(f"worker {self.worker_name(index)} was not started")
        return rec

    def worker_urls(self) -> list[str]:
        state = self._load()
        return [f"http://127.0.0.1:{w['rest_port']}" for w in state.get("workers", [state["worker"]])]

    def proc(self, name: str) -> ProcRecord | None:
        """The process record of ``name`` (source-broker, target-broker, connect, connect-2...)."""
        return self._rec(self._load(), name)

    @staticmethod
    def _safe(errors: list[BaseException], fn: Callable, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:
            errors.append(exc)

    def status(self) -> dict[str, Any]:
        state = self._load()
        out: dict[str, Any] = {"base_dir": str(self.base_dir), "running": False}
        procs = {n: self._rec(state, n) for n in state["procs"]}
        for role in ("source", "target"):
            rec = procs.get(f"{role}-broker")
            if rec:
                out[role] = {
                    "bootstrap_servers": f"127.0.0.1:{state['ports'][role]}",
                    "kafka_version": state.get("versions", {}).get(role),
                    "pid": rec.pid,
                    "running": rec.alive(),
                    "log": rec.log,
                }
        rec = procs.get("connect")
        if rec and "worker" in state:
            w = state["worker"]
            out["connect"] = {
                "url": f"http://127.0.0.1:{w['rest_port']}",
                "metrics_url": f"http://127.0.0.1:{w['metrics_port']}/metrics",
                "kafka_version": versions.kafka_version(),
                "pid": rec.pid,
                "running": rec.alive(),
                "log": rec.log,
            }
        workers = []
        for i, w in enumerate(state.get("workers", [])):
            wrec = procs.get(self.worker_name(i))
            if wrec:
                workers.append({"name": self.worker_name(i), "url": f"http://127.0.0.1:{w['rest_port']}",
                                "metrics_url": f"http://127.0.0.1:{w['metrics_port']}/metrics",
                                "pid": wrec.pid, "running": wrec.alive(), "log": wrec.log})
        if len(workers) > 1:
            out["workers"] = workers
            out["connect"]["workers"] = len(workers)
        rec = procs.get("prometheus")
        if rec:
            out["prometheus"] = {
                "url": f"http://127.0.0.1:{state['ports']['prometheus']}",
                "pid": rec.pid,
                "running": rec.alive(),
                "log": rec.log,
            }
        parts = [v for k, v in out.items() if isinstance(v, dict)] + out.get("workers", [])
        out["running"] = bool(parts) and all(p["running"] for p in parts)
        return out

    def down(self, wipe: bool = False) -> list[str]:
        """Stop what ``up`` started (reverse order). ``wipe`` also deletes the data directory."""
        state = self._load()
        stopped = []
        extra = sorted((n for n in state["procs"] if n.startswith("connect-")), reverse=True)
        for name in extra + list(reversed(ORDER)):
            rec = self._rec(state, name)
            if rec:
                if rec.alive():
                    stop(rec)
                    stopped.append(name)
                state["procs"].pop(name, None)
        self._save(state)
        if wipe and self.base_dir.exists():
            shutil.rmtree(self.base_dir)
        return stopped


def wait_for(predicate: Callable[[], Any], timeout: float, what: str = "condition", interval: float = 1.0) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned) or ``timeout`` passes."""
    deadline = time.time() + timeout
    last: Any = None
    while time.time() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
