"""What a topology rehearsal's steps share: the environment, and one :class:`FlowCase` per migration.

Invariant: every flow runs on a Connect worker of its own (the pair's worker for the first flow, a flow worker
of the harness for each other one), as each environment runs its own ECS service; a flow's session, worker
and endpoints are derived from the recorded local state, never stored twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ...connect_api.rest import ConnectClient
from ...local.harness import LocalEnvironment
from ...runbook.session import MigrationSession, session_of
from ..demo import DemoApps
from ..result import RehearsalResult, StepFailed


@dataclass
class FlowCase:
    """One migration of the topology: ``source_role -> target_role`` of the local environment."""

    label: str  #: how the step table names it (the migration's name)
    source_role: str
    target_role: str
    spec: MigrationSpec
    #: None: the environment's own worker; else the flow worker of this name (``ensure_flow_worker``)
    flow_worker: str | None = None
    worker: WorkerSpec | None = None  #: filled when its worker runs
    client: ConnectClient | None = None


@dataclass
class TopologyContext:
    env: LocalEnvironment
    say: Callable[[str], None]
    result: RehearsalResult
    timeout: float  #: how long replication may take to catch up
    flows: dict[str, FlowCase] = field(default_factory=dict)
    apps: DemoApps = field(default_factory=DemoApps)
    #: what the steps measured, per flow label (records per topic on both sides, verdicts), for the outcome
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def work_dir(self) -> Path:
        """Beside the environment: the flow files, reports and logs the rehearsal writes."""
        return self.env.base_dir.parent / "topology-rehearsal"

    def endpoint(self, role: str) -> ClusterEndpoint:
        return {"source": self.env.source, "target": self.env.target, "peer": self.env.peer}[role]()

    def endpoints(self, flow: FlowCase) -> tuple[ClusterEndpoint, ClusterEndpoint]:
        return self.endpoint(flow.source_role), self.endpoint(flow.target_role)

    def connect(self, flow: FlowCase) -> ConnectClient:
        if flow.client is None:
            raise StepFailed(f"flow {flow.label} has no worker yet (step 'environment up' did not run)")
        return flow.client

    def session(self, flow: FlowCase) -> MigrationSession:
        src, tgt = self.endpoints(flow)
        return session_of(src, tgt, flow.spec, flow.worker, self.connect(flow))

    def flow_file(self, flow: FlowCase, spec: MigrationSpec | None = None, suffix: str = "") -> Path:
        """The flow as an operator writes it (``--config``): its clusters, migration and worker sections."""
        src, tgt = self.endpoints(flow)
        doc = {"source": src.model_dump(mode="json", exclude_none=True),
               "target": tgt.model_dump(mode="json", exclude_none=True),
               "migration": (spec or flow.spec).model_dump(mode="json", exclude_none=True),
               "worker": (flow.worker or WorkerSpec()).model_dump(mode="json", exclude_none=True)}
        self.work_dir.mkdir(parents=True, exist_ok=True)
        path = self.work_dir / f"{flow.label}{suffix}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    def cli(self, *args: str, timeout: float = 300) -> tuple[int, dict[str, Any], str]:
        """``msk-migrate ARGS --output json`` as an operator runs it: exit code, the JSON document, stderr."""
        proc = subprocess.run([sys.executable, "-m", "msk_migrate.commands", *args, "--output", "json"],
                              capture_output=True, text=True, timeout=timeout)
        try:
            doc = json.loads(proc.stdout) if proc.stdout.strip() else {}
        except json.JSONDecodeError:
            doc = {}
        return proc.returncode, doc, proc.stderr.strip()
