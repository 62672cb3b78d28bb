"""A local Kafka Connect worker started through the image's own entrypoint script."""

from __future__ import annotations

import os
from pathlib import Path

import requests

from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..connectors.worker_env import worker_environment
from ..paths import CONNECT_ENTRYPOINT, JMX_EXPORTER_RULES
from .classpath import classpath, jar_in
from .procs import ProcRecord, free_port, launch, wait_ready

MIRROR_CLASSES = {
    "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
}


def local_worker_spec(group_id: str = "mm2-connect", rest_port: int | None = None, metrics_port: int | None = None) -> WorkerSpec:
    return WorkerSpec(
        group_id=group_id,
        config_storage_topic=f"{group_id}-configs",
        offset_storage_topic=f"{group_id}-offsets",
        status_storage_topic=f"{group_id}-status",
        replication_factor=1,
        rest_port=rest_port or free_port(),
        metrics_port=metrics_port or free_port(),
        heap="512m",
        offset_flush_interval_ms=2000,
    )


def start_connect_worker(
    target: ClusterEndpoint,
    data_dir: Path,
    worker: WorkerSpec,
    kafka_version: str | None = None,
    secret_env: dict[str, str] | None = None,
    name: str = "connect",
    migration: MigrationSpec | None = None,
) -> ProcRecord:
    """Run images/kafka-connect/entrypoint.sh with the worker environment (same as ECS)."""
    cp = classpath("connect", kafka_version)
    env = worker_environment(target, worker, migration=migration)
    env.update(
        {
            "CONNECT_CLASSPATH": cp,
            "CONNECT_CONFIG_DIR": str(data_dir / "config"),
            "CONNECT_REST_BIND_HOST": "127.0.0.1",
            "CONNECT_REST_ADVERTISED_HOST": "127.0.0.1",
            "CONNECT_METRICS_BIND_HOST": "127.0.0.1",
            "JMX_AGENT_JAR": jar_in(cp, "jmx_prometheus_javaagent"),
            "JMX_EXPORTER_CONFIG": os.environ.get("MSK_MIGRATE_JMX_RULES", str(JMX_EXPORTER_RULES)),
            **(secret_env or {}),
        }
    )
    data_dir.mkdir(parents=True, exist_ok=True)
    return launch(name, ["bash", str(CONNECT_ENTRYPOINT)], data_dir / "connect.log", env=env)


def wait_connect_ready(rec: ProcRecord, url: str, timeout: float = 180.0) -> None:
    """Ready = REST answers, the MM2 connector plugins are loaded and the worker joined its group."""

    def probe() -> bool:
        r = requests.get(f"{url}/connector-plugins", timeout=3)
        if r.status_code != 200 or not MIRROR_CLASSES <= {p["class"] for p in r.json()}:
            return False
        return requests.get(f"{url}/connectors", timeout=3).status_code == 200

    wait_ready(rec, probe, timeout, interval=1.0, log_lines=40)
