"""A local Kafka Connect worker started through the image's own entrypoint script."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..connect_api.rest import ConnectClient, RestCredentials, save_local_credentials
from ..connectors import worker_env as wenv
from ..connectors.worker_env import RestSecurity, worker_environment
from ..kafka.names import CHECKPOINT_CONNECTOR_CLASS, HEARTBEAT_CONNECTOR_CLASS, SOURCE_CONNECTOR_CLASS
from ..paths import CONNECT_ENTRYPOINT, JMX_EXPORTER_RULES
from .classpath import classpath, jar_in
from .procs import ProcRecord, free_port, launch, wait_ready
from .settings import LocalSettings

MIRROR_CLASSES = {SOURCE_CONNECTOR_CLASS, CHECKPOINT_CONNECTOR_CLASS, HEARTBEAT_CONNECTOR_CLASS}


#: -Xmx of a local worker when nothing sizes it (no heap setting, no MSK_MIGRATE_LOCAL_WORKER_HEAP, no known partitions).
LOCAL_WORKER_HEAP = "512m"


def local_worker_spec(group_id: str = "mm2-connect", rest_port: int | None = None, metrics_port: int | None = None) -> WorkerSpec:
    return WorkerSpec(
        group_id=group_id,
        config_storage_topic=f"{group_id}-configs",
        offset_storage_topic=f"{group_id}-offsets",
        status_storage_topic=f"{group_id}-status",
        replication_factor=1,
        rest_port=rest_port or free_port(),
        metrics_port=metrics_port or free_port(),
        heap=LOCAL_WORKER_HEAP,
        offset_flush_interval_ms=2000,
        # A local worker killed on purpose (fault suite) is restarted at once: its tasks need not wait 5 min.
        scheduled_rebalance_max_delay_ms=20000,
    )


#: The local worker's REST posture: the product default (basic auth on) on the loopback interface.
LOCAL_REST = RestSecurity(basic_auth=True, tls=False, bind_host="127.0.0.1", advertised_host="127.0.0.1")


def rest_url(worker: WorkerSpec, rest: RestSecurity = LOCAL_REST) -> str:
    return f"{'https' if rest.tls else 'http'}://127.0.0.1:{worker.rest_port}"


def local_rest_credentials(data_dir: Path) -> RestCredentials:
    """This worker's REST credentials: generated once per environment, kept 0600 under .local/."""
    path = data_dir / "rest-credentials.json"
    if path.exists():
        data = json.loads(path.read_text())
        return RestCredentials(data["username"], data["password"])
    data_dir.mkdir(parents=True, exist_ok=True)
    creds = RestCredentials("msk-migrate", secrets.token_urlsafe(24))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"username": creds.username, "password": creds.password}, fh)
    return creds


def start_connect_worker(
    target: ClusterEndpoint,
    data_dir: Path,
    worker: WorkerSpec,
    kafka_version: str | None = None,
    secret_env: dict[str, str] | None = None,
    name: str = "connect",
    *,
    source: ClusterEndpoint | None = None,
    rest: RestSecurity = LOCAL_REST,
    extra_env: dict[str, str] | None = None,
    migration: MigrationSpec | None = None,
    credentials_dir: Path | None = None,
    from_image: bool | None = None,
    others: Mapping[str, ClusterEndpoint] | None = None,
) -> ProcRecord:
    """Run images/kafka-connect/entrypoint.sh with the worker environment (same as ECS).

    With basic auth (the default), the worker's credentials are generated under ``credentials_dir``
    (default ``data_dir``) and recorded for :class:`ConnectClient` (``.local/connect-credentials/<port>.json``).
    Workers of one group must share ``credentials_dir``: a follower forwards a write to the leader with
    the caller's Authorization header, so every worker of the group must accept the same credentials
    (on ECS they all read the one Secrets Manager secret).
    ``secret_env``: values of the MM2_* secret variables (and, for HTTPS, the REST keystore ones).
    ``from_image``: run the same environment in the built kafka-connect image instead (local/image_worker.py);
    None = as the operator's shell says (MSK_MIGRATE_WORKER=image, for `msk-migrate local up`).
    ``others``: more clusters the worker pins beside ``source`` and ``target`` (the harness's peer).
    """
    switches = LocalSettings.from_env()
    if from_image is None:
        from_image = switches.worker_from_image
    # In the image the worker writes its config under the image's own writable dir (IMAGE_CONFIG_DIR).
    env = (worker_environment(target, worker, source, rest=rest, migration=migration, others=others) if from_image
           else worker_environment(target, worker, source, rest=rest, config_dir=str(data_dir / "config"),
                                   migration=migration, others=others))
    data_dir.mkdir(parents=True, exist_ok=True)
    if rest.basic_auth:
        creds = local_rest_credentials(credentials_dir or data_dir)
        env[wenv.ENV_REST_USERNAME], env[wenv.ENV_REST_PASSWORD] = creds.username, creds.password
        save_local_credentials(rest_url(worker, rest), creds)
    if from_image:
        from .image_worker import start_image_worker

        return start_image_worker({**env, **(secret_env or {}), **(extra_env or {})}, data_dir, name,
                                  kafka_version=kafka_version)
    cp = classpath("connect", kafka_version)
    env.update(
        {
            "CONNECT_CLASSPATH": cp,
            "CONNECT_METRICS_BIND_HOST": "127.0.0.1",
            "JMX_AGENT_JAR": jar_in(cp, "jmx_prometheus_javaagent"),
            "JMX_EXPORTER_CONFIG": switches.jmx_rules if switches.jmx_rules is not None else str(JMX_EXPORTER_RULES),
            **(secret_env or {}),
            **(extra_env or {}),
        }
    )
    return launch(name, ["bash", str(CONNECT_ENTRYPOINT)], data_dir / "connect.log", env=env)


def wait_connect_ready(rec: ProcRecord, url: str, timeout: float = 180.0, client: ConnectClient | None = None) -> None:
    """Ready = REST answers (authenticated), the MM2 connector plugins are loaded and the worker joined its group."""
    client = client or ConnectClient(url, timeout=3)

    def probe() -> bool:
        if not {p["class"] for p in client.plugins()} >= MIRROR_CLASSES:
            return False
        return isinstance(client.connectors(), list)

    wait_ready(rec, probe, timeout, interval=1.0, log_lines=40)
