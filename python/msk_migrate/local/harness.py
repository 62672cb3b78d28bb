"""`msk-migrate local up|status|down`: source cluster, target cluster, N Connect workers in one group
(default 1; tests of rebalancing use 2) and optionally Prometheus, as separate processes on 127.0.0.1,
data under .local/.

The clusters' shape (:mod:`.shape`) is chosen at the first ``up`` and recorded in state.json: the source's
Kafka (3.9 KRaft by default, or 2.8 on ZooKeeper), brokers per side (1 by default; 3 like MSK), and whether
the source listens SCRAM-SHA-512 over TLS with ACLs (MirrorMaker 2's user granted only what it needs).
Every broker (and the ZooKeeper) is its own process: :meth:`LocalEnvironment.stop_broker` /
:meth:`LocalEnvironment.start_broker` act on one of them.

``up`` is idempotent (a healthy environment is returned as is; dead parts are restarted on their
previous ports), ``down`` stops only processes recorded by ``up`` (pid + kernel start time).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import versions
from ..access.secrets import secret_env_name
from ..config.auth import AuthConfig
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..errors import UsageError
from ..paths import LOCAL_DIR
from .classpath import classpath
from .cluster import ClusterOps, bootstrap, broker_name, client_listener, plan_layout
from .connect_worker import local_worker_spec, start_connect_worker, wait_connect_ready
from .procs import ProcRecord, stop
from .scram import ADMIN_USER, MM2_USER, scram_users
from .shape import EnvironmentShape, default_heap, make_shape

DEFAULT_DIR = LOCAL_DIR / "env"
ORDER = ["source-broker", "target-broker", "connect", "prometheus"]
#: Stands where a Secrets Manager ARN of the source's private CA would be: the rendered connector configs then
#: trust ``${env:MM2_SOURCE_TLS_CA}``, which the harness sets on the worker (never read from AWS).
LOCAL_CA_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:msk-migrate-local-ca"


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
        shape: EnvironmentShape | None = None,
        broker_heap: str | None = None,
        worker_from_image: bool | None = None,
    ):
        """``workers``: Connect workers in the one group (the first is ``connect``, then ``connect-2``...).
        ``exactly_once``: workers run with exactly.once.source.support=enabled (KIP-618).
        ``worker_settings``: WorkerSpec fields for every worker (e.g. faster auto-restart back-off, ``heap``).
        ``shape``: the clusters (:func:`.shape.make_shape`); None = the one recorded in state.json, else the
        default pair (one 3.9 KRaft broker -> one 4.1 broker, plaintext).
        ``broker_heap``: -Xmx of every broker of the default pair (e.g. "2g" for 10,000 partitions); default
        :data:`.shape.DEFAULT_HEAP` (the environment variable MSK_MIGRATE_LOCAL_BROKER_HEAP, else 384m).
        Workers: ``heap`` in ``worker_settings``, else MSK_MIGRATE_LOCAL_WORKER_HEAP, else the local
        worker's default. ``worker_from_image``: the workers run from the built kafka-connect image (None: as
        MSK_MIGRATE_WORKER=image in the operator's shell says)."""
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.requested_shape = shape
        self.worker_from_image = worker_from_image
        self.base_dir = Path(base_dir)
        self.workers = workers
        self.exactly_once = exactly_once
        self.worker_settings = dict(worker_settings or {})
        self.broker_heap = broker_heap or os.environ.get("MSK_MIGRATE_LOCAL_BROKER_HEAP") or None
        self.with_monitoring = with_monitoring
        self.with_connect = with_connect
        self.progress = progress or (lambda msg: None)
        self.state_file = self.base_dir / "state.json"
        self._lock = threading.Lock()

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

    # ---- shape ---------------------------------------------------------------------------
    def shape(self, state: dict[str, Any] | None = None) -> EnvironmentShape:
        """The recorded shape, else the requested one, else the default pair."""
        state = state if state is not None else self._load()
        if state.get("shape"):
            return EnvironmentShape.from_dict(state["shape"])
        return self.requested_shape or make_shape(heap=self.broker_heap or default_heap(), available=1 << 30)

    def _ops(self, state: dict[str, Any], role: str) -> ClusterOps:
        shape = self.shape(state)
        side = shape.source if role == "source" else shape.target
        layout = state.setdefault("clusters", {}).get(role)
        if layout is None:
            layout = state["clusters"][role] = plan_layout(side)
        lock = self._lock

        def record(name: str, rec: ProcRecord | None) -> None:
            with lock:
                if rec is None:
                    state["procs"].pop(name, None)
                else:
                    state["procs"][name] = rec.to_dict()
                self._save(state)

        return ClusterOps(side, layout, self.base_dir, record, lambda n: self._rec(state, n), self.progress)

    # ---- endpoints -----------------------------------------------------------------------
    def _endpoint(self, role: str, state: dict[str, Any] | None) -> ClusterEndpoint:
        state = state or self._load()
        layout = state.get("clusters", {}).get(role)
        if layout is None:  # an environment recorded before shapes existed
            return ClusterEndpoint(alias=role, bootstrap_servers=f"127.0.0.1:{state['ports'][role]}")
        shape = self.shape(state)
        side = shape.source if role == "source" else shape.target
        auth = (AuthConfig(mode="scram", secrets_from="env", ca_secret_arn=LOCAL_CA_ARN)
                if side.security == "scram-tls" else AuthConfig())
        return ClusterEndpoint(alias=role, bootstrap_servers=bootstrap(side, layout), auth=auth)

    def source(self, state: dict[str, Any] | None = None) -> ClusterEndpoint:
        """The source as MirrorMaker 2 and the operator tools see it (SCRAM as the MM2 user when secured)."""
        return self._endpoint("source", state)

    def target(self, state: dict[str, Any] | None = None) -> ClusterEndpoint:
        return self._endpoint("target", state)

    def secret_env(self, role: str = "source", state: dict[str, Any] | None = None) -> dict[str, str]:
        """The MM2_<ROLE>_* secret variables of a secured side (MM2 user's SCRAM credentials and the CA):
        given to the Connect worker, and to the operator tools' environment by :meth:`export_secrets`."""
        state = state or self._load()
        if not state.get("clusters", {}).get(role):
            return {}
        ops = self._ops(state, role)
        if ops.shape.security != "scram-tls":
            return {}
        return {secret_env_name(role, "username"): MM2_USER,
                secret_env_name(role, "password"): scram_users(ops.dir)[MM2_USER],
                secret_env_name(role, "ca"): ops.tls.ca.read_text()}

    def export_secrets(self) -> None:
        """Put :meth:`secret_env` into this process's environment (what an operator's shell would hold)."""
        os.environ.update(self.secret_env("source"))

    def client_config(self, role: str, user: str | None = None) -> dict[str, Any]:
        """librdkafka settings (bootstrap included) of an application on ``role``: the harness admin's SCRAM
        user on a secured side (a super user: the demo apps), or ``user`` (e.g. "mm2")."""
        state = self._load()
        return self._ops(state, role).user_client_conf(user or ADMIN_USER)

    def admin_config(self, role: str) -> dict[str, Any]:
        """librdkafka settings of the harness admin (mTLS super user on a secured side)."""
        return self._ops(self._load(), role).admin_client_conf()

    def grant_acls(self, role: str, principal: str, needs: list) -> list[str]:
        """Grant ``needs`` (:class:`msk_migrate.kafka.mm2_acls.AclNeed`) to ``principal`` as the harness admin
        (e.g. the reverse flow's ACLs when a rehearsal rolls back); no-op on an unsecured side."""
        from confluent_kafka.admin import AdminClient

        from ..access.admin import quiet
        from .acl import grant

        state = self._load()
        ops = self._ops(state, role)
        if ops.shape.security != "scram-tls":
            return []
        return grant(AdminClient(quiet(ops.admin_client_conf())), principal, needs)

    def broker_ports(self, role: str) -> list[dict[str, Any]]:
        """Per broker of ``role``: id, process name and ports by listener (PLAINTEXT or SASL_SSL for clients,
        INTERNAL, CONTROLLER)."""
        layout = self._load().get("clusters", {}).get(role, {})
        return [dict(n) for n in layout.get("nodes", [])]

    def worker_spec(self, state: dict[str, Any] | None = None) -> WorkerSpec:
        state = state or self._load()
        return WorkerSpec(**state["worker"])

    # ---- lifecycle -----------------------------------------------------------------------
    def up(self) -> dict[str, Any]:
        state = self._load()
        if state.get("shape") and self.requested_shape and state["shape"] != self.requested_shape.to_dict() \
                and any(self._rec(state, n) and self._rec(state, n).alive() for n in state["procs"]):  # type: ignore[union-attr]
            raise UsageError("--source-kafka", f"the environment under {self.base_dir} already runs "
                             f"{self.shape(state).describe('source')} -> {self.shape(state).describe('target')}",
                             "run `msk-migrate local down --wipe` first, or `local up` without shape options")
        if not state.get("shape"):
            state["shape"] = self.shape(state).to_dict()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        errors: list[BaseException] = []
        for role in ("source", "target"):
            ops = self._ops(state, role)
            state["ports"][role] = ops.layout["nodes"][0]["ports"][client_listener(ops.shape)]
            state.setdefault("versions", {})[role] = ops.shape.kafka_version
        self._save(state)

        def ensure_cluster(role: str) -> None:
            try:
                ops = self._ops(state, role)
                ops.start_nodes()
                ops.secure()
                with self._lock:
                    self._save(state)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=ensure_cluster, args=(r,)) for r in ("source", "target")]
        if self.with_connect:  # resolve the Connect classpath while brokers boot
            threads.append(threading.Thread(target=lambda: self._safe(errors, classpath, "connect")))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]

        # `--local` commands read these as data (config/flow.py): endpoints, and the MM2 user's secret variables
        state["endpoints"] = {r: self._endpoint(r, state).model_dump(exclude_none=True) for r in ("source", "target")}
        secrets = self.secret_env("source", state)
        if secrets:
            path = self.base_dir / "source" / "mm2-secret-env.json"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    json.dump(secrets, fh)
            state["secret_env_file"] = str(path)
        self._save(state)

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
        # the worker's internal topics replicated like the target's (3 on a 3-broker target with min ISR 2)
        settings = {"replication_factor": self.shape(state).target.replication_factor,
                    **{k: v for k, v in self.worker_settings.items() if k != "group_id"}}
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
                                           credentials_dir=self.base_dir / "connect",
                                           secret_env=self.secret_env("source", state) or None,
                                           from_image=self.worker_from_image)
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
        """The process record of ``name`` (source-broker, source-broker-2, source-zookeeper, target-broker,
        connect, connect-2...)."""
        return self._rec(self._load(), name)

    # ---- one broker at a time (fault tests: rolling restarts, a broker down) ---------------
    def broker_proc(self, role: str, node_id: int) -> ProcRecord | None:
        return self.proc(broker_name(role, node_id))

    def stop_broker(self, role: str, node_id: int, kill: bool = False) -> ProcRecord:
        """Stop broker ``node_id`` (1-based) of ``role``: SIGTERM (a controlled shutdown, as MSK patching
        does) or, with ``kill``, SIGKILL. Its ports and data stay; :meth:`start_broker` brings it back."""
        state = self._load()
        self._ops(state, role).node(node_id)  # refuses an unknown node
        rec = self._rec(state, broker_name(role, node_id))
        if rec is None:
            raise RuntimeError(f"{broker_name(role, node_id)} was not started")
        if kill and rec.alive():
            os.kill(rec.pid, signal.SIGKILL)
            for _ in range(100):
                if not rec.alive():
                    break
                time.sleep(0.1)
        else:
            stop(rec, timeout=60)
        return rec

    def start_broker(self, role: str, node_id: int) -> ProcRecord:
        """Start broker ``node_id`` of ``role`` again on its ports and wait until it is registered."""
        state = self._load()
        self._ops(state, role).start_nodes([node_id])
        rec = self._rec(state, broker_name(role, node_id))
        assert rec is not None
        return rec

    def zookeeper_proc(self, role: str = "source") -> ProcRecord | None:
        zk = self._load().get("clusters", {}).get(role, {}).get("zookeeper")
        return self.proc(zk["name"]) if zk else None

    def stop_zookeeper(self, role: str = "source", kill: bool = False) -> ProcRecord:
        rec = self.zookeeper_proc(role)
        if rec is None:
            raise RuntimeError(f"the {role} cluster has no ZooKeeper (KRaft)")
        if kill:
            os.kill(rec.pid, signal.SIGKILL)
        else:
            stop(rec)
        return rec

    def start_zookeeper(self, role: str = "source") -> ProcRecord:
        state = self._load()
        self._ops(state, role).ensure_zookeeper()
        rec = self.zookeeper_proc(role)
        assert rec is not None
        return rec

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
        brokers: list[dict[str, Any]] = []
        for role in ("source", "target"):
            rec = procs.get(f"{role}-broker")
            layout = state.get("clusters", {}).get(role)
            if rec:
                ep = self._endpoint(role, state)
                out[role] = {
                    "bootstrap_servers": ep.bootstrap_servers,
                    "kafka_version": state.get("versions", {}).get(role),
                    "pid": rec.pid,
                    "running": rec.alive(),
                    "log": rec.log,
                }
            if rec and layout:
                side = self.shape(state).source if role == "source" else self.shape(state).target
                out[role].update(mode=side.mode, brokers=side.brokers, security=side.security,
                                 auth=ep.auth.mode, replication_factor=side.replication_factor,
                                 min_insync_replicas=side.min_insync_replicas)
                if layout.get("zookeeper"):
                    zk = layout["zookeeper"]
                    zrec = procs.get(zk["name"])
                    if zrec:
                        brokers.append({"name": zk["name"], "role": role, "id": None,
                                        "endpoint": f"127.0.0.1:{zk['port']}", "ports": {"CLIENT": zk["port"]},
                                        "pid": zrec.pid, "running": zrec.alive(), "log": zrec.log})
                for n in layout["nodes"]:
                    nrec = procs.get(n["name"])
                    if nrec:
                        brokers.append({"name": n["name"], "role": role, "id": n["id"],
                                        "endpoint": f"127.0.0.1:{n['ports'][client_listener(side)]}",
                                        "ports": n["ports"], "pid": nrec.pid, "running": nrec.alive(), "log": nrec.log})
                out[role]["running"] = all(b["running"] for b in brokers if b["role"] == role)
        if brokers:
            out["brokers"] = brokers
        if state.get("shape"):
            out["shape"] = state["shape"]
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
        parts = [v for k, v in out.items() if isinstance(v, dict) and k != "shape"] + out.get("workers", [])
        out["running"] = bool(parts) and all(p["running"] for p in parts)
        return out

    def down(self, wipe: bool = False) -> list[str]:
        """Stop what ``up`` started (reverse order). ``wipe`` also deletes the data directory."""
        state = self._load()
        stopped = []
        extra = sorted((n for n in state["procs"] if n.startswith("connect-")), reverse=True)
        nodes = sorted((n for n in state["procs"] if n.startswith(("source-broker-", "target-broker-"))), reverse=True)
        zks = [n for n in state["procs"] if n.endswith("-zookeeper")]
        for name in extra + list(reversed(ORDER))[:2] + nodes + list(reversed(ORDER))[2:] + zks:
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
