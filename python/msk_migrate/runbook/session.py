"""What the runbook's functions act on, passed as one value instead of five to eleven loose arguments."""

from __future__ import annotations

from dataclasses import dataclass

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec, WorkerSpec
from ..connect_api.rest import ConnectClient
from ..errors import UsageError


@dataclass(frozen=True)
class MigrationSession:
    """One migration as a command reaches it: the flow's migration and worker settings, an admin session
    per cluster (``source``/``target`` as the flow names them, with their MM2 aliases), and the Connect
    worker when the command reaches one. Built once per command (commands/runbook.py) or per rehearsal."""

    migration: MigrationSpec
    worker: WorkerSpec
    source: AdminSession
    target: AdminSession
    source_alias: str
    target_alias: str
    client: ConnectClient | None = None

    def connect(self) -> ConnectClient:
        """The worker; a command that needs one and was given none is bad input."""
        if self.client is None:
            raise UsageError("--connect-url", "this step needs the Connect worker and none was given",
                             "pass --connect-url https://HOST:8083 (stack output connect_rest_url) or --local")
        return self.client
