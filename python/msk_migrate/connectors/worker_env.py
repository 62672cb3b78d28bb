"""The environment contract of images/kafka-connect/entrypoint.sh.

The entrypoint is the single source of worker.properties: it turns these variables into the file.
ECS task definitions (infra) and the local harness both build the variables here, so the worker is
configured identically in both places. Secret variables (see :mod:`.secrets`) are not part of the
plain environment: ECS injects them through ``secrets``; locally the harness adds them.
"""

from __future__ import annotations

from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from .secrets import secret_refs


def worker_environment(target: ClusterEndpoint, worker: WorkerSpec, source: ClusterEndpoint | None = None,
                       migration: MigrationSpec | None = None) -> dict[str, str]:
    """Plain (non-secret) variables for a Connect worker whose home cluster is ``target``."""
    env = {
        "CONNECT_BOOTSTRAP_SERVERS": target.bootstrap_servers,
        "CONNECT_AUTH_MODE": target.auth.mode,
        "CONNECT_SCRAM_MECHANISM": target.auth.scram_mechanism,
        "CONNECT_SCRAM_TLS": "true" if target.auth.tls else "false",
        "CONNECT_TRUSTSTORE_PEM": "true" if "ca" in secret_refs("target", target.auth) else "false",
        "CONNECT_GROUP_ID": worker.group_id,
        "CONNECT_CONFIG_STORAGE_TOPIC": worker.config_storage_topic,
        "CONNECT_OFFSET_STORAGE_TOPIC": worker.offset_storage_topic,
        "CONNECT_STATUS_STORAGE_TOPIC": worker.status_storage_topic,
        "CONNECT_REPLICATION_FACTOR": str(worker.replication_factor),
        "CONNECT_REST_PORT": str(worker.rest_port),
        "CONNECT_METRICS_PORT": str(worker.metrics_port),
        "CONNECT_HEAP": worker.heap,
        "CONNECT_OFFSET_FLUSH_INTERVAL_MS": str(worker.offset_flush_interval_ms),
    }
    env.update(_mm2_worker_env(worker, migration))
    return env


def _mm2_worker_env(worker: WorkerSpec, migration: MigrationSpec | None) -> dict[str, str]:
    """Exactly-once (KIP-618) and auto-restart of failed tasks (jvm/connect-extensions)."""
    env = {
        "CONNECT_AUTO_RESTART": "true" if worker.auto_restart else "false",
        "CONNECT_AUTO_RESTART_INITIAL_BACKOFF_MS": str(worker.auto_restart_initial_backoff_seconds * 1000),
        "CONNECT_AUTO_RESTART_MAX_BACKOFF_MS": str(worker.auto_restart_max_backoff_seconds * 1000),
        "CONNECT_AUTO_RESTART_MAX_RESTARTS": str(worker.auto_restart_max_restarts),
    }
    if migration is not None and migration.exactly_once:
        env["CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT"] = "enabled"
    return env


def worker_secret_env(target: ClusterEndpoint, source: ClusterEndpoint | None = None) -> dict[str, str]:
    """``{ENV_NAME: ecs valueFrom}`` for every secret the worker and its connectors reference."""
    out: dict[str, str] = {}
    for role, ep in (("target", target), ("source", source)):
        if ep is None:
            continue
        for ref in secret_refs(role, ep.auth).values():
            out[ref.env] = ref.ecs_value_from
    return out
