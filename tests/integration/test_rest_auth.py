"""Connect REST lockdown against the harness's real worker (the product posture): basic auth (Kafka's
BasicAuthSecurityRestExtension), the env provider limited to the MM2 secret variables, no file provider,
connector client overrides only through our MirrorMakerOverridePolicy (MM2 connectors, allowlisted keys,
``bootstrap.servers`` only toward the pinned source cluster), the CLI's credential sources. HTTPS served by the worker
and an allowed variable resolving need a worker of their own: the SCRAM worker of test_worker_auth_modes.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
import requests

from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError, RestCredentials, default_credentials
from msk_migrate.connectors import worker_env as wenv
from msk_migrate.connectors.render import render_connectors, reverse_producer
from msk_migrate.connectors.worker_env import health_check_command

from .conftest import TEST_MIGRATION

RUN = uuid.uuid4().hex[:6]


def _heartbeat(local_env, **overrides) -> dict[str, str]:
    configs = render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION.model_copy(update={"name": f"ra{RUN}"}))
    (hb,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorHeartbeatConnector")]
    return {**hb, **overrides}


def test_the_local_harness_worker_refuses_unauthenticated_requests(local_env, connect):
    url = local_env.status()["connect"]["url"]
    for path in ("/", "/connectors", "/connector-plugins"):
        assert requests.get(url + path, timeout=10).status_code == 401
    assert requests.get(url + "/connectors", auth=("msk-migrate", "wrong"), timeout=10).status_code == 401
    with pytest.raises(ConnectRestError) as err:
        ConnectClient(url, auth=False).connectors()
    assert err.value.status == 401
    assert isinstance(connect.connectors(), list)  # the harness's generated credentials work


def test_ecs_health_check_command_passes_with_the_task_credentials_only(local_env):
    worker = local_env.worker_spec()
    creds = default_credentials(local_env.status()["connect"]["url"])
    cmd = health_check_command(worker)
    assert cmd[0] == "CMD-SHELL" and creds.password not in cmd[1]
    env = {"PATH": os.environ["PATH"], wenv.ENV_REST_USERNAME: creds.username}
    ok = subprocess.run(["sh", "-c", cmd[1]], env={**env, wenv.ENV_REST_PASSWORD: creds.password}, timeout=60)
    bad = subprocess.run(["sh", "-c", cmd[1]], env={**env, wenv.ENV_REST_PASSWORD: "wrong"}, timeout=60,
                         capture_output=True)
    assert ok.returncode == 0 and bad.returncode != 0


def test_authenticated_operations_work_on_the_harness_worker(local_env, connect):
    hb = _heartbeat(local_env)
    assert connect.validate(hb) == []
    connect.put_config(hb["name"], hb)
    try:
        connect.wait_state(hb["name"], "RUNNING", timeout=120, min_tasks=1)
        assert hb["name"] in connect.connectors()
    finally:
        connect.delete(hb["name"])


def test_connector_configs_cannot_read_the_workers_other_variables(local_env, connect):
    """The harness worker has PATH and CONNECT_REST_PASSWORD in its environment; neither is an MM2 secret,
    and a provider variable outside the rendered cluster settings is refused before the worker resolves
    anything (the pinned-config filter, issue 37; test_pinned_configs_real_worker.py). No file provider."""
    for ref in ("${env:PATH}", f"${{env:{wenv.ENV_REST_PASSWORD}}}", "${file:/etc/hostname:x}"):
        with pytest.raises(ConnectRestError) as err:
            connect.validate(_heartbeat(local_env, **{"tasks.max": ref}))
        assert err.value.status == 400 and err.value.message.startswith("'tasks.max' names a config provider variable"), ref


def _source_connector(local_env, **overrides) -> dict[str, str]:
    configs = render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION.model_copy(update={"name": f"ra{RUN}"}))
    (src,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorSourceConnector")]
    return {**src, **overrides}


def _errors_of(errors: list[str], key: str) -> list[str]:
    return [e for e in errors if e.startswith(key + ":")]


def test_mm2_producer_tuning_overrides_are_accepted_by_the_worker(local_env, connect):
    cfg = _source_connector(local_env, **{"producer.override.linger.ms": "20", "producer.override.max.request.size": "4194304"})
    assert [k for k in cfg if k.startswith("producer.override.")]  # the rendered tuning profile is there too
    assert connect.validate(cfg) == []


def test_reverse_flow_producer_toward_the_pinned_source_is_accepted(local_env, connect):
    reverse = reverse_producer(local_env.source())
    assert reverse["producer.override.bootstrap.servers"] == local_env.source().bootstrap_servers
    assert connect.validate(_source_connector(local_env, **reverse)) == []


def test_mm2_bootstrap_servers_other_than_the_pinned_source_are_refused(local_env, connect):
    # The pinned-config filter refuses it before the herder (and the override policy behind it) sees it.
    reverse = {**reverse_producer(local_env.source()), "producer.override.bootstrap.servers": "evil:9092"}
    with pytest.raises(ConnectRestError) as err:
        connect.validate(_heartbeat(local_env, **reverse))
    assert err.value.status == 400
    assert err.value.message.startswith("'producer.override.bootstrap.servers' names no cluster of this environment"), err.value


def test_mm2_overrides_outside_the_allowlist_are_refused(local_env, connect):
    errors = connect.validate(_source_connector(local_env, **{
        "producer.override.interceptor.classes": "org.example.Exfiltrate", "producer.override.acks": "1"}))
    for key in ("producer.override.interceptor.classes", "producer.override.acks"):
        assert [e for e in _errors_of(errors, key) if "not an allowed producer override" in e], errors
    assert not _errors_of(errors, "producer.override.linger.ms")  # the rendered tuning stays accepted


def test_cli_reads_rest_credentials_from_the_environment(local_env):
    url = local_env.status()["connect"]["url"]
    creds = default_credentials(url, environ={})
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSK_MIGRATE_CONNECT_")}
    cmd = [sys.executable, "-m", "msk_migrate.commands", "connectors", "status", "--connect-url", url, "--output", "json"]
    ok = subprocess.run(cmd, env={**env, "MSK_MIGRATE_CONNECT_USER": creds.username,
                                  "MSK_MIGRATE_CONNECT_PASSWORD": creds.password},
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and isinstance(json.loads(ok.stdout)["rows"], list), ok.stderr
    # The environment wins over the harness's recorded credentials: a wrong password is refused.
    bad = subprocess.run(cmd, env={**env, "MSK_MIGRATE_CONNECT_USER": creds.username,
                                   "MSK_MIGRATE_CONNECT_PASSWORD": "wrong"},
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "401" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "wrong" not in bad.stderr and creds.password not in ok.stdout + ok.stderr
    assert "secret-b" not in repr(RestCredentials("a", "secret-b"))


def test_cli_reads_rest_credentials_from_secrets_manager(local_env):
    """--connect-secret-arn against moto's Secrets Manager server (JSON keys username/password)."""
    import boto3
    from moto.server import ThreadedMotoServer

    from msk_migrate.local.procs import free_port

    url = local_env.status()["connect"]["url"]
    creds = default_credentials(url, environ={})
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        aws = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_ENDPOINT_URL_SECRETS_MANAGER": f"http://127.0.0.1:{port}"}
        sm = boto3.client("secretsmanager", region_name="us-east-1", endpoint_url=aws["AWS_ENDPOINT_URL_SECRETS_MANAGER"],
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        arn = sm.create_secret(Name=f"rest-{RUN}", SecretString=json.dumps(
            {"username": creds.username, "password": creds.password}))["ARN"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MSK_MIGRATE_CONNECT_")}
        env.update(aws)
        base = [sys.executable, "-m", "msk_migrate.commands", "connectors", "status", "--connect-url", url, "--output", "json"]
        ok = subprocess.run([*base, "--connect-secret-arn", arn], env=env, capture_output=True, text=True, timeout=120)
        assert ok.returncode == 0 and isinstance(json.loads(ok.stdout)["rows"], list), ok.stderr
        # The secret is what authenticates (not the harness's local credentials): a wrong one is refused.
        wrong_pw = sm.create_secret(Name=f"rest-wrong-{RUN}", SecretString=json.dumps(
            {"username": creds.username, "password": "wrong"}))["ARN"]
        refused = subprocess.run([*base, "--connect-secret-arn", wrong_pw], env=env, capture_output=True, text=True,
                                 timeout=120)
        assert refused.returncode == 2 and "401" in refused.stderr, refused.stderr
        wrong = arn.replace(":secretsmanager:", ":ssm:")
        bad = subprocess.run([*base, "--connect-secret-arn", wrong], env=env, capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and "--connect-secret-arn" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    finally:
        server.stop()
