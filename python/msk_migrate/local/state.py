"""The local environment as recorded in ``<dir>/state.json``: one typed, validated model
(:class:`LocalState`) and its file (:class:`StateFile`).

What is recorded is what cannot be derived again: the shape the clusters were started with, each side's
ports (:mod:`.layout`) and schema registry ports (when started), the Connect workers' specs, the processes
started (pid + kernel start time, so
``down`` never signals a stranger), Prometheus's port and where the MM2 user's secrets file is. Endpoints
are derived from these (:mod:`.endpoints`), status from these and the live processes (:mod:`.status`);
neither is stored, so neither can disagree with the shape.

Invariants: ``clusters[role]`` was planned for ``shape.side(role)`` (a shape change replaces the layout of
the side that changed, see :mod:`.reshape`); ``workers[0]`` is the worker named ``connect``; the file is
replaced atomically (a reader never sees half a state); no secret value is in it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..config.migration import WorkerSpec
from ..errors import UsageError
from .layout import ClusterLayout, RegistryPorts
from .procs import ProcRecord
from .shape import ClusterShape, EnvironmentShape

Role = Literal["source", "target", "peer"]
#: The two clusters every environment has (the optional peer: :attr:`LocalState.roles`).
ROLES: tuple[Role, Role] = ("source", "target")


class FlowWorker(BaseModel):
    """A Connect worker of its own for one more migration (the topology rehearsals run each migration on its
    own worker group, as each environment has its own ECS service): pinned to ``source`` and ``target``, its
    group and internal topics on ``target``. Process name: :func:`flow_worker_name`."""

    model_config = ConfigDict(extra="forbid")

    spec: WorkerSpec
    source: Role
    target: Role


def flow_worker_name(name: str) -> str:
    """Process name of the flow worker of migration ``name`` (``connect-flow-<name>``: stopped with the workers)."""
    return f"connect-flow-{name}"


class LocalState(BaseModel):
    """Everything ``local up`` recorded about one environment directory."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    shape: EnvironmentShape | None = None  #: the clusters as started (None: nothing started yet)
    clusters: dict[Role, ClusterLayout] = Field(default_factory=dict)
    workers: list[WorkerSpec] = Field(default_factory=list)  #: Connect workers of the one group, ``connect`` first
    exactly_once: bool = False  #: the workers run with exactly.once.source.support=enabled
    procs: dict[str, ProcRecord] = Field(default_factory=dict)  #: process name -> record
    prometheus_port: int | None = None
    secrets_file: str | None = None  #: the MM2 user's secrets of a secured source (0600 JSON by purpose)
    #: schema registries started by ``up --schema-registry``; recorded only while their process is recorded
    registries: dict[Role, RegistryPorts] = Field(default_factory=dict)
    #: migration name -> its own Connect worker (``LocalEnvironment.ensure_flow_worker``)
    flow_workers: dict[str, FlowWorker] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _earlier_files(cls, raw: Any) -> Any:
        """Read a state.json written before this model (a dict of loose keys): its running processes must
        stay reachable by ``down``. Derived keys it stored (endpoints, versions, client ports) are dropped."""
        if not isinstance(raw, dict) or ("ports" not in raw and "worker" not in raw):
            return raw
        raw = dict(raw)
        ports = raw.pop("ports", None) or {}
        raw.setdefault("prometheus_port", ports.get("prometheus"))
        first = raw.pop("worker", None)
        if first and not raw.get("workers"):
            raw["workers"] = [first]
        for derived in ("endpoints", "versions"):
            raw.pop(derived, None)
        if "secret_env_file" in raw:  # a file of MM2_SOURCE_* names: written again by the next `up`
            raw.pop("secret_env_file")
        return raw

    @property
    def worker(self) -> WorkerSpec | None:
        return self.workers[0] if self.workers else None

    def side(self, role: str) -> ClusterShape:
        if self.shape is None:
            raise RuntimeError("no shape recorded (the environment was never started)")
        return self.shape.side(role)

    @property
    def roles(self) -> tuple[str, ...]:
        """The clusters of the recorded shape (source, target, and the peer when it has one)."""
        return self.shape.roles if self.shape is not None else ()

    def proc(self, name: str) -> ProcRecord | None:
        return self.procs.get(name)

    def running(self) -> list[str]:
        """Names of the recorded processes that are alive now."""
        return [n for n, rec in self.procs.items() if rec.alive()]


class StateFile:
    """``<dir>/state.json``: loaded as a :class:`LocalState`, saved atomically; ``lock`` serialises the
    saves of threads that record processes they started."""

    def __init__(self, base_dir: Path):
        self.base_dir = Path(base_dir)
        self.path = self.base_dir / "state.json"
        self.lock = threading.RLock()

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> LocalState:
        """The recorded state (an empty one when nothing was recorded). A file this model cannot read is
        one line naming it and what to do."""
        if not self.path.is_file():
            return LocalState()
        try:
            return LocalState.model_validate(json.loads(self.path.read_text()))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UsageError("--local-dir", f"{self.path} is not a local environment state msk-migrate can read ({first})",
                             f"stop its processes and remove {self.base_dir}") from None

    def save(self, state: LocalState) -> None:
        with self.lock:
            self.base_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".tmp-{threading.get_ident()}")
            tmp.write_text(state.model_dump_json(indent=2, exclude_none=True))
            tmp.replace(self.path)
