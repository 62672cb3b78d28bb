"""The rehearsal's step context: what the steps share, typed, filled in step order."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..access.admin import AdminSession
from ..config.migration import ClusterEndpoint, MigrationSpec
from ..connect_api.rest import ConnectClient
from ..local.harness import LocalEnvironment
from ..runbook.session import MigrationSession
from .demo import DemoApps
from .result import RehearsalResult, StepFailed


@dataclass
class RehearsalContext:
    env: LocalEnvironment
    migration: MigrationSpec  #: the rehearsal's flow, at the target's replication factor
    say: Callable[[str], None]
    result: RehearsalResult
    timeout: float  #: how long replication may take to catch up
    validate: bool  #: the validation steps run (and the cutover gate reads their report)
    apps: DemoApps = field(default_factory=DemoApps)
    # Filled by "environment up":
    source: ClusterEndpoint | None = None
    target: ClusterEndpoint | None = None
    client: ConnectClient | None = None
    registries: dict[str, str] = field(default_factory=dict)  #: role -> the local registry's Confluent API URL
    # Filled by "produce demo data": the operator's view of the migration (the MM2 user on a secured source).
    session: MigrationSession | None = None
    # Filled on the way:
    report_dir: str | None = None  #: the forward validation's report, read by the cutover gate
    unmet: list = field(default_factory=list)  #: the cutover conditions not met at the last look
    rollback_commit: dict[int, int] = field(default_factory=dict)  #: partition -> the rolled-back group's target commit
    rollback_wait: str | None = None  #: why the rollback's placement is still waiting
    moved_schema_id: int | None = None  #: the schema the moved producers registered on the target registry
    straggler_records: int = 0  #: records the forgotten producer wrote to the source before the fence stopped it
    # The proof follower (proof_steps.py), from "apply connectors" to "cleanup":
    follower: subprocess.Popen | None = None  #: the `validate --follow` process while it runs
    proof_mark: str | None = None  #: its mark: the gates' evidence
    proof_metrics: str | None = None  #: its metrics endpoint (proof lag)
    proof_at_gates: dict[str, dict[str, float]] = field(default_factory=dict)  #: gate -> proof lag as it passed

    @property
    def logs(self) -> Path:
        """Where the JVM's and librdkafka's start-up lines of in-process work go."""
        return self.env.base_dir.parent / "rehearsal-logs" / "stderr.log"

    @property
    def work_dir(self) -> Path:
        """Beside the environment: reports and certificates the rehearsal writes."""
        return self.env.base_dir.parent

    def clusters(self) -> tuple[ClusterEndpoint, ClusterEndpoint]:
        if self.source is None or self.target is None:
            raise StepFailed("the clusters are not up (step 'environment up' did not run)")
        return self.source, self.target

    def migration_session(self) -> MigrationSession:
        if self.session is None:
            raise StepFailed("no admin sessions (step 'produce demo data' did not run)")
        return self.session

    def sessions(self) -> tuple[AdminSession, AdminSession]:
        s = self.migration_session()
        return s.source, s.target

    def connect(self) -> ConnectClient:
        if self.client is None:
            raise StepFailed("no Connect worker (step 'environment up' did not run)")
        return self.client
