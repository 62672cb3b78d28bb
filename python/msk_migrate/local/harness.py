"""`msk-migrate local up|status|down`: source cluster, target cluster, N Connect workers in one group
(default 1; tests of rebalancing use 2) and optionally Prometheus, as separate processes on 127.0.0.1,
data under .local/.

:class:`LocalEnvironment` is the lifecycle: it brings the environment to the shape it was asked for
(:mod:`.shape`; a change restarts or starts over what must, :mod:`.reshape`), starts what is missing or dead,
and stops only processes it recorded (pid + kernel start time). What is recorded is a typed
:class:`~.state.LocalState` (:mod:`.state`); endpoints (:mod:`.endpoints`) and status (:mod:`.status`) are
derived from it. Every broker (and the ZooKeeper) is its own process: :meth:`LocalEnvironment.stop_broker` /
:meth:`LocalEnvironment.start_broker` act on one of them.

``up`` is idempotent: a healthy environment of the asked shape is returned as is; dead parts are restarted
on their previous ports.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.migration import ClusterEndpoint, WorkerSpec
from ..kafka.mm2_acls import AclNeed
from ..outcome import quiet
from ..paths import LOCAL_DIR
from ..threads import run_all
from .classpath import classpath
from .cluster import ClusterOps
from .endpoints import cluster_endpoint, read_secrets, worker_secret_env, write_secrets
from .layout import RegistryPorts, broker_name, plan_layout, registry_name
from .procs import ProcRecord, kill, stop
from .reshape import apply_shape
from .scram import ADMIN_USER
from .settings import LocalSettings
from .shape import PEER, EnvironmentShape, default_shape
from .state import FlowWorker, LocalState, StateFile, flow_worker_name
from .status import describe_status
from .status import worker_name as _worker_name
from .workers import plan_workers, start_workers

DEFAULT_DIR = LOCAL_DIR / "env"
#: The MM2 user's secrets of a secured source, by purpose (0600; what its endpoint names).
SECRETS_FILE = Path("source") / "mm2-secrets.json"


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
        with_schema_registry: bool = False,
        flow_partitions: int | None = None,
    ):
        """``workers``: Connect workers in the one group (the first is ``connect``, then ``connect-2``...).
        ``exactly_once``: workers run with exactly.once.source.support=enabled (KIP-618).
        ``worker_settings``: WorkerSpec fields for every worker (e.g. faster auto-restart back-off, ``heap``).
        ``shape``: the clusters (:func:`.shape.make_shape`): ``up`` brings a recorded environment of another
        shape to this one. None = the recorded shape, else the default pair (one 3.9 KRaft broker -> one 4.1
        broker, plaintext).
        ``broker_heap``: -Xmx of every broker of the default pair (e.g. "2g" for 10,000 partitions); default
        :data:`.shape.DEFAULT_HEAP` (the environment variable MSK_MIGRATE_LOCAL_BROKER_HEAP, else 384m).
        Workers: ``heap`` in ``worker_settings``, else MSK_MIGRATE_LOCAL_WORKER_HEAP, else the local
        worker's default. ``worker_from_image``: the workers run from the built kafka-connect image (None: as
        MSK_MIGRATE_WORKER=image in the operator's shell says). ``with_schema_registry``: also one Apicurio
        Registry per side (:mod:`.schema_registry`); without it, registries already running are kept and
        dead ones forgotten. ``flow_partitions``: the partitions of the flow the workers will run, when known:
        workers planned anew without a heap setting get the memory model's heap for them
        (:func:`.workers.sized_heap`; MSK_MIGRATE_LOCAL_FLOW_PARTITIONS says the same from the shell)."""
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.requested_shape = shape
        self.worker_from_image = worker_from_image
        self.base_dir = Path(base_dir)
        self.workers = workers
        self.exactly_once = exactly_once
        self.worker_settings = dict(worker_settings or {})
        self.flow_partitions = flow_partitions
        self.broker_heap = broker_heap or LocalSettings.from_env().broker_heap
        self.with_monitoring = with_monitoring
        self.with_connect = with_connect
        self.with_schema_registry = with_schema_registry
        self.progress = progress or quiet
        self.store = StateFile(self.base_dir)
        self.state_file = self.store.path

    # ---- state ---------------------------------------------------------------------------
    def state(self) -> LocalState:
        """The recorded state, as the file says now."""
        return self.store.load()

    def shape(self, state: LocalState | None = None) -> EnvironmentShape:
        """The shape ``up`` brings the environment to: the requested one, else the recorded one, else the
        default pair. Never a previous run's shape when another was asked for."""
        if self.requested_shape is not None:
            return self.requested_shape
        state = state if state is not None else self.state()
        return state.shape or default_shape(self.broker_heap)

    def _record(self, state: LocalState) -> Callable[[str, ProcRecord | None], None]:
        """How a (possibly concurrent) start records its process: into ``state``, saved at once."""
        def record(name: str, rec: ProcRecord | None) -> None:
            with self.store.lock:
                if rec is None:
                    state.procs.pop(name, None)
                else:
                    state.procs[name] = rec
                self.store.save(state)
        return record

    def _ops(self, state: LocalState, role: str) -> ClusterOps:
        """One side's operations; plans its layout the first time (free ports, a cluster id)."""
        side = self.shape(state).side(role) if state.shape is None else state.side(role)
        if role not in state.clusters:
            state.clusters[role] = plan_layout(side)  # type: ignore[index]
        return ClusterOps(side, state.clusters[role], self.base_dir, self._record(state), state.proc,  # type: ignore[index]
                          self.progress)

    # ---- endpoints -----------------------------------------------------------------------
    def source(self, state: LocalState | None = None) -> ClusterEndpoint:
        """The source as MirrorMaker 2 and the operator tools see it (SCRAM as the MM2 user when secured,
        its secrets named by the endpoint)."""
        return cluster_endpoint(state or self.state(), "source")

    def target(self, state: LocalState | None = None) -> ClusterEndpoint:
        return cluster_endpoint(state or self.state(), "target")

    def peer(self, state: LocalState | None = None) -> ClusterEndpoint:
        """The optional third cluster (``local up --peer-brokers 1``): a second source or target of the
        topology rehearsals. Raises when the environment has none."""
        return cluster_endpoint(state or self.state(), PEER)

    def secret_env(self, role: str = "source", state: LocalState | None = None) -> dict[str, str]:
        """The MM2_<ROLE>_* variables of a secured source (MM2 user's SCRAM credentials and the CA), as
        the Connect worker gets them; {} on a plaintext source."""
        state = state or self.state()
        return worker_secret_env(role, read_secrets(state.secrets_file)) if state.secrets_file else {}

    def client_config(self, role: str, user: str | None = None) -> dict[str, Any]:
        """librdkafka settings (bootstrap included) of an application on ``role``: the harness admin's SCRAM
        user on a secured side (a super user: the demo apps), or ``user`` (e.g. "mm2")."""
        return self._ops(self.state(), role).user_client_conf(user or ADMIN_USER)

    def admin_config(self, role: str) -> dict[str, Any]:
        """librdkafka settings of the harness admin (mTLS super user on a secured side)."""
        return self._ops(self.state(), role).admin_client_conf()

    def grant_acls(self, role: str, principal: str, needs: list[AclNeed]) -> list[str]:
        """Grant ``needs`` to ``principal`` as the harness admin (e.g. the reverse flow's ACLs when a
        rehearsal rolls back); no-op on an unsecured side."""
        from confluent_kafka.admin import AdminClient

        from ..access.admin import quiet
        from .acl import grant

        ops = self._ops(self.state(), role)
        if ops.shape.security != "scram-tls":
            return []
        return grant(AdminClient(quiet(ops.admin_client_conf())), principal, needs)

    def broker_ports(self, role: str) -> list[dict[str, Any]]:
        """Per broker of ``role``: id, process name and ports by listener (PLAINTEXT or SASL_SSL for clients,
        INTERNAL, CONTROLLER)."""
        layout = self.state().clusters.get(role)  # type: ignore[call-overload]
        return [n.model_dump() for n in layout.nodes] if layout else []

    def worker_spec(self, state: LocalState | None = None) -> WorkerSpec:
        worker = (state or self.state()).worker
        if worker is None:
            raise RuntimeError(f"no Connect worker recorded under {self.base_dir} (run `msk-migrate local up`)")
        return worker

    # ---- lifecycle -----------------------------------------------------------------------
    def up(self) -> dict[str, Any]:
        """Bring the environment to its shape and start whatever is missing or dead; returns :meth:`status`."""
        state = self.state()
        with self.store.lock:
            apply_shape(state, self.shape(state), self.base_dir, self.progress)
            for role in self.shape(state).roles:
                self._ops(state, role)  # layouts planned (ports chosen) before anything starts
            self.store.save(state)

        def ensure_cluster(role: str) -> None:
            ops = self._ops(state, role)
            ops.start_nodes()
            ops.secure()
            self.store.save(state)

        calls: list[Callable[[], Any]] = [functools.partial(ensure_cluster, role) for role in self.shape(state).roles]
        if self.with_connect:  # resolve the Connect classpath while brokers boot
            calls.append(lambda: classpath("connect"))
        self._forget_dead_registries(state)
        if self.with_schema_registry:  # the registries start while the brokers boot
            calls += [lambda: self._ensure_registry(state, "source"), lambda: self._ensure_registry(state, "target")]
        run_all(calls)

        secrets = self._ops(state, "source").mm2_secrets()
        if secrets:
            write_secrets(self.base_dir / SECRETS_FILE, secrets)
            state.secrets_file = str((self.base_dir / SECRETS_FILE).resolve())
        self.store.save(state)

        if self.with_connect:
            plan_workers(state, self.workers, self.worker_settings, self.exactly_once, self.flow_partitions)
            self.store.save(state)
            start_workers(state, self.base_dir, self._record(state), self.progress, self.worker_from_image)
        if self.with_monitoring:
            self._ensure_prometheus(state)
        return self.status()

    def _ensure_prometheus(self, state: LocalState) -> None:
        from . import prometheus as prom

        rec = state.proc("prometheus")
        if rec and rec.alive():
            return
        self.progress("starting Prometheus (scraping the Connect worker)")
        worker = self.worker_spec(state)
        started = prom.start_prometheus(targets=[f"127.0.0.1:{worker.metrics_port}"],
                                        data_dir=self.base_dir / "prometheus", port=state.prometheus_port)
        state.prometheus_port = started.port
        self._record(state)("prometheus", started.record)

    # ---- schema registries -------------------------------------------------------------------
    def _ensure_registry(self, state: LocalState, role: str) -> None:
        """Start ``role``'s registry unless it runs; a dead one comes back on its recorded ports (empty:
        in-memory storage)."""
        from .schema_registry import start_registry

        name = registry_name(role)
        rec = state.proc(name)
        if rec is not None and rec.alive() and role in state.registries:
            return
        self.progress(f"starting the {role} schema registry (Apicurio)")
        ports = state.registries.get(role)  # type: ignore[call-overload]
        # generous: it starts while the brokers boot, on a machine that may be busy
        started = start_registry(self.base_dir / "registries", name, port=ports.port if ports else None, timeout_s=180)
        assert started.record is not None
        with self.store.lock:
            state.registries[role] = RegistryPorts(port=started.port,  # type: ignore[index]
                                                   management_port=started.management_port)
        self._record(state)(name, started.record)

    def _forget_dead_registries(self, state: LocalState) -> None:
        """Registry records whose process is gone are dropped (status never shows a registry that is not
        there); a dead one is started again only when registries are asked for."""
        with self.store.lock:
            for role in list(state.registries):
                rec = state.proc(registry_name(role))
                if rec is None or not rec.alive():
                    state.registries.pop(role, None)
                    state.procs.pop(registry_name(role), None)
            self.store.save(state)

    def registry_urls(self, state: LocalState | None = None) -> dict[str, str]:
        """role -> the Confluent API URL of that side's registry (empty when none was started)."""
        return {role: ports.url for role, ports in (state or self.state()).registries.items()}

    @staticmethod
    def worker_name(index: int) -> str:
        """Process name of worker ``index`` (0-based): connect, connect-2, connect-3..."""
        return _worker_name(index)

    def stop_workers(self) -> list[str]:
        """Stop every Connect worker and forget the group, so the next ``up`` starts a new one
        (e.g. with other ``worker_settings`` or ``exactly_once``); brokers keep running."""
        state = self.state()
        stopped = []
        for name in sorted((n for n in state.procs if n == "connect" or n.startswith("connect-")), reverse=True):
            rec = state.procs.pop(name)
            if rec.alive():
                stop(rec)
                stopped.append(name)
        state.workers, state.exactly_once = [], False
        self.store.save(state)
        return stopped

    def restart_worker(self, index: int) -> ProcRecord:
        """Start worker ``index`` again after it died (kill -9 in the fault suite); same ports and group."""
        state = self.state()
        start_workers(state, self.base_dir, self._record(state), self.progress, self.worker_from_image)
        rec = state.proc(self.worker_name(index))
        if rec is None:
            raise RuntimeError(f"worker {self.worker_name(index)} was not started")
        return rec

    def ensure_flow_worker(self, name: str, source_role: str, target_role: str = "target") -> WorkerSpec:
        """Start (or keep) a Connect worker of its own for the migration ``name`` (a group ``<name>-connect`` with
        its own internal topics on ``target_role``'s cluster), pinned to ``source_role`` and ``target_role``: the
        topology rehearsals run each migration on its own worker, as each environment has its own ECS service.
        Recorded in the state (``down`` stops it, ``status`` shows it); returns its spec (REST and metrics ports)."""
        import re

        from .connect_worker import local_worker_spec, rest_url, start_connect_worker, wait_connect_ready

        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,31}", name):
            raise ValueError(f"flow worker name {name!r}: use lower-case letters, digits and hyphens")
        state = self.state()
        for role in (source_role, target_role):
            if role not in state.roles:
                raise ValueError(f"the {role} cluster is not part of this environment (local up --peer-brokers 1 adds the peer)")
        known = state.flow_workers.get(name)
        if known is None or (known.source, known.target) != (source_role, target_role):
            spec = local_worker_spec(group_id=f"{name}-connect").model_copy(
                update={"replication_factor": state.side(target_role).replication_factor})
            with self.store.lock:
                state.flow_workers[name] = FlowWorker(spec=spec, source=source_role, target=target_role)
                self.store.save(state)
        fw = state.flow_workers[name]
        proc = flow_worker_name(name)
        rec = state.proc(proc)
        if not (rec and rec.alive()):
            self.progress(f"starting Kafka Connect worker {proc} ({source_role} -> {target_role})")
            source, target = cluster_endpoint(state, source_role), cluster_endpoint(state, target_role)
            secrets = (worker_secret_env("source", read_secrets(state.secrets_file))
                       if state.secrets_file and source_role == "source" else None)
            rec = start_connect_worker(target, self.base_dir / proc, fw.spec, name=proc, source=source,
                                       credentials_dir=self.base_dir / "connect", secret_env=secrets,
                                       from_image=self.worker_from_image)
            self._record(state)(proc, rec)
        wait_connect_ready(rec, rest_url(fw.spec))
        return fw.spec

    def worker_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{w.rest_port}" for w in self.state().workers]

    def proc(self, name: str) -> ProcRecord | None:
        """The process record of ``name`` (source-broker, source-broker-2, source-zookeeper, target-broker,
        connect, connect-2...)."""
        return self.state().proc(name)

    # ---- one broker at a time (fault tests: rolling restarts, a broker down) ---------------
    def broker_proc(self, role: str, node_id: int) -> ProcRecord | None:
        return self.proc(broker_name(role, node_id))

    def stop_broker(self, role: str, node_id: int, kill: bool = False) -> ProcRecord:
        """Stop broker ``node_id`` (1-based) of ``role``: SIGTERM (a controlled shutdown, as MSK patching
        does) or, with ``kill``, SIGKILL. Its ports and data stay; :meth:`start_broker` brings it back."""
        state = self.state()
        self._ops(state, role).node(node_id)  # refuses an unknown node
        rec = state.proc(broker_name(role, node_id))
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
        state = self.state()
        self._ops(state, role).start_nodes([node_id])
        rec = state.proc(broker_name(role, node_id))
        assert rec is not None
        return rec

    def zookeeper_proc(self, role: str = "source") -> ProcRecord | None:
        state = self.state()
        layout = state.clusters.get(role)  # type: ignore[call-overload]
        return state.proc(layout.zookeeper.name) if layout and layout.zookeeper else None

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
        state = self.state()
        self._ops(state, role).ensure_zookeeper()
        rec = self.zookeeper_proc(role)
        assert rec is not None
        return rec

    def status(self) -> dict[str, Any]:
        """:func:`.status.describe_status` plus ``<role>_registry`` rows for the schema registries."""
        state = self.state()
        out = describe_status(state, self.base_dir)
        for role, ports in state.registries.items():
            rec = state.proc(registry_name(role))
            if rec is None:
                continue
            out[f"{role}_registry"] = {"url": ports.url, "pid": rec.pid, "running": rec.alive(), "log": rec.log}
            out["running"] = bool(out["running"]) and rec.alive()
        return out

    def down(self, wipe: bool = False) -> list[str]:
        """Stop what ``up`` started: workers, then brokers, Prometheus, ZooKeepers. ``wipe`` also deletes
        the data directory, so the brokers and ZooKeepers, whose data goes with it, are killed at once rather
        than shut down in turn (the workers, registries and Prometheus still get SIGTERM: a worker from the
        image stops its container on it)."""
        state = self.state()
        workers = sorted((n for n in state.procs if n == "connect" or n.startswith("connect-")), reverse=True)
        brokers = sorted((n for n in state.procs if "-broker" in n), reverse=True)
        rest = [n for n in state.procs if n not in workers and n not in brokers and not n.endswith("-zookeeper")]
        zks = [n for n in state.procs if n.endswith("-zookeeper")]
        stopped = []
        killed: list[ProcRecord] = []
        for name in workers + brokers + rest + zks:
            rec = state.procs.pop(name)
            if rec.alive():
                if wipe and (name in brokers or name in zks):
                    killed.append(rec)
                else:
                    stop(rec)
                stopped.append(name)
        kill(killed)
        state.registries = {}  # in-memory registries: nothing of them outlives their process
        if self.store.exists():
            self.store.save(state)
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


__all__ = ["DEFAULT_DIR", "LocalEnvironment", "wait_for"]
