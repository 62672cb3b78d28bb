"""`msk-migrate local up|status|down`: source cluster, target cluster, one Connect worker
(and optionally Prometheus) as separate processes on 127.0.0.1, data under .local/.

``up`` is idempotent (a healthy environment is returned as is; dead parts are restarted on their
previous ports), ``down`` stops only processes recorded by ``up`` (pid + kernel start time).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .. import versions
from ..config.migration import ClusterEndpoint, WorkerSpec
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
    ):
        self.base_dir = Path(base_dir)
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
                rec, port = start_broker(spec)
                with lock:
                    state["procs"][name] = rec.to_dict()
                    state["ports"][role] = port
                    state.setdefault("versions", {})[role] = version
                    self._save(state)
                wait_broker_ready(rec, port)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
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
            rec = self._rec(state, "connect")
            if "worker" not in state:
                state["worker"] = local_worker_spec().model_dump()
            worker = WorkerSpec(**state["worker"])
            url = f"http://127.0.0.1:{worker.rest_port}"
            if not (rec and rec.alive()):
                self.progress(f"starting Kafka Connect worker (MM2, Kafka {versions.kafka_version()})")
                rec = start_connect_worker(self.target(state), self.base_dir / "connect", worker)
                state["procs"]["connect"] = rec.to_dict()
                self._save(state)
            wait_connect_ready(rec, url)

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
    def _safe(errors: list[BaseException], fn: Callable, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001
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
        rec = procs.get("prometheus")
        if rec:
            out["prometheus"] = {
                "url": f"http://127.0.0.1:{state['ports']['prometheus']}",
                "pid": rec.pid,
                "running": rec.alive(),
                "log": rec.log,
            }
        parts = [v for k, v in out.items() if isinstance(v, dict)]
        out["running"] = bool(parts) and all(p["running"] for p in parts)
        return out

    def down(self, wipe: bool = False) -> list[str]:
        """Stop what ``up`` started (reverse order). ``wipe`` also deletes the data directory."""
        state = self._load()
        stopped = []
        for name in reversed(ORDER):
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
