"""What the target cluster can hold: replication factors against its broker count."""

from __future__ import annotations

from ..access.admin import AdminSession
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..errors import UsageError


def require_replication_factors(target: ClusterEndpoint, migration: MigrationSpec, worker: WorkerSpec | None = None) -> None:
    """Refuse (exit 2, nothing applied) replication factors the target cluster cannot honour."""
    brokers = AdminSession.for_endpoint("target", target).broker_count()
    fields = {"migration.replication_factor": migration.replication_factor,
              "migration.internal_replication_factor": migration.internal_replication_factor}
    if worker is not None:
        fields["worker.replication_factor"] = worker.replication_factor
    for name, rf in fields.items():
        if rf > brokers:
            raise UsageError(name, f"{rf} is above the target's {brokers} broker(s)", f"set it to at most {brokers}")
