"""Connect REST lockdown against real workers: basic auth (Kafka's BasicAuthSecurityRestExtension), HTTPS
served by the worker, the env provider limited to the MM2 secret variables, no file provider, and
``connector.client.config.override.policy=None``."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import uuid
from types import SimpleNamespace

import pytest
import requests

from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint
from msk_migrate.connect.rest import ConnectClient, ConnectRestError, RestCredentials, default_credentials
from msk_migrate.connectors import worker_env as wenv
from msk_migrate.connectors.render import render_connectors
from msk_migrate.connectors.worker_env import RestSecurity, health_check_command
from msk_migrate.errors import UsageError
from msk_migrate.local.connect_worker import local_rest_credentials, local_worker_spec, rest_url, start_connect_worker, wait_connect_ready
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR

from .conftest import TEST_MIGRATION
from .pki import ThrowawayCA

RUN = uuid.uuid4().hex[:6]


@pytest.fixture(scope="module")
def https_worker(local_env):
    """A second worker on the shared target: HTTPS with a throwaway CA, basic auth, and a *declared*
    SCRAM source so that MM2_SOURCE_SASL_* are the allowed variables. SOMETHING_ELSE is set in its
    environment but is not an MM2 secret."""
    base = LOCAL_DIR / "test-env" / f"rest-auth-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    ca = ThrowawayCA()
    (base / "rest-ca.pem").write_text(ca.pem)
    keystore_password = uuid.uuid4().hex
    keystore = base64.b64encode(ca.pkcs12(ca.issue("localhost", server=True), keystore_password)).decode()
    source = ClusterEndpoint(alias="source", bootstrap_servers=local_env.source().bootstrap_servers,
                             auth=AuthConfig(mode="scram", secrets_from="env"))
    worker = local_worker_spec(group_id=f"rest-auth-{RUN}")
    rest = RestSecurity(basic_auth=True, tls=True, bind_host="127.0.0.1", advertised_host="127.0.0.1")
    rec = start_connect_worker(
        local_env.target(), base / "connect", worker, name="connect-https", source=source, rest=rest,
        secret_env={wenv.ENV_REST_TLS_KEYSTORE: keystore, wenv.ENV_REST_TLS_KEYSTORE_PASSWORD: keystore_password,
                    "MM2_SOURCE_SASL_USERNAME": "3", "MM2_SOURCE_SASL_PASSWORD": "unused"},
        extra_env={"SOMETHING_ELSE": "2"},
    )
    url = rest_url(worker, rest)
    try:
        client = ConnectClient(url, ca=str(base / "rest-ca.pem"))
        wait_connect_ready(rec, url, timeout=240, client=client)
        yield SimpleNamespace(url=url, ca=str(base / "rest-ca.pem"), client=client,
                              creds=local_rest_credentials(base / "connect"), rec=rec, password=keystore_password)
    finally:
        stop(rec)
        shutil.rmtree(base, ignore_errors=True)


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


def test_https_worker_authenticates_and_serves_operations(local_env, https_worker):
    w = https_worker
    assert w.url.startswith("https://")
    assert requests.get(w.url + "/connectors", verify=w.ca, timeout=10).status_code == 401
    with pytest.raises(UsageError, match="--connect-ca"):  # the worker's certificate is not trusted without its CA
        ConnectClient(w.url, timeout=10).connectors()
    hb = _heartbeat(local_env)
    assert w.client.validate(hb) == []
    w.client.put_config(hb["name"], hb)
    try:
        w.client.wait_state(hb["name"], "RUNNING", timeout=120, min_tasks=1)
        assert hb["name"] in w.client.connectors()
    finally:
        w.client.delete(hb["name"])


def test_connector_configs_cannot_read_variables_outside_the_mm2_allowlist(local_env, https_worker):
    c = https_worker.client
    # An allowed MM2 secret variable is resolved by the worker's env provider (value "3")...
    assert c.validate(_heartbeat(local_env, **{"tasks.max": "${env:MM2_SOURCE_SASL_USERNAME}"})) == []
    # ...a variable outside the allowlist is not, even though the worker's process has it (value "2"),
    # nor the REST password, nor anything through a file provider (none is configured).
    for ref in ("${env:SOMETHING_ELSE}", f"${{env:{wenv.ENV_REST_PASSWORD}}}", "${file:/etc/hostname:x}"):
        errors = c.validate(_heartbeat(local_env, **{"tasks.max": ref}))
        assert [e for e in errors if e.startswith("tasks.max:") and ref in e], (ref, errors)


def test_client_config_overrides_are_refused_by_policy_none(local_env, https_worker):
    errors = https_worker.client.validate(_heartbeat(local_env, **{"producer.override.bootstrap.servers": "evil:9092"}))
    assert [e for e in errors if e.startswith("producer.override.bootstrap.servers:")], errors


def test_cli_reads_rest_credentials_and_ca_from_the_environment(https_worker):
    w = https_worker
    base_env = {**os.environ, "MSK_MIGRATE_CONNECT_CA": w.ca}
    cmd = [sys.executable, "-m", "msk_migrate.cli", "connectors", "status", "--connect-url", w.url, "--output", "json"]
    ok = subprocess.run(cmd, env={**base_env, "MSK_MIGRATE_CONNECT_USER": w.creds.username,
                                  "MSK_MIGRATE_CONNECT_PASSWORD": w.creds.password},
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.strip().startswith("["), ok.stderr
    bad = subprocess.run(cmd, env={**base_env, "MSK_MIGRATE_CONNECT_USER": w.creds.username,
                                   "MSK_MIGRATE_CONNECT_PASSWORD": "wrong"},
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "401" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "wrong" not in bad.stderr and w.creds.password not in ok.stdout + ok.stderr
    assert "secret-b" not in repr(RestCredentials("a", "secret-b"))


def test_cli_reads_rest_credentials_from_secrets_manager(https_worker):
    """--connect-secret-arn against moto's Secrets Manager server (JSON keys username/password)."""
    import json

    import boto3
    from moto.server import ThreadedMotoServer

    from msk_migrate.local.procs import free_port

    w = https_worker
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        aws = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_ENDPOINT_URL_SECRETS_MANAGER": f"http://127.0.0.1:{port}"}
        sm = boto3.client("secretsmanager", region_name="us-east-1", endpoint_url=aws["AWS_ENDPOINT_URL_SECRETS_MANAGER"],
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        arn = sm.create_secret(Name=f"rest-{RUN}", SecretString=json.dumps(
            {"username": w.creds.username, "password": w.creds.password}))["ARN"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MSK_MIGRATE_CONNECT_")}
        env.update(aws, MSK_MIGRATE_CONNECT_CA=w.ca)
        base = [sys.executable, "-m", "msk_migrate.cli", "connectors", "status", "--connect-url", w.url, "--output", "json"]
        ok = subprocess.run([*base, "--connect-secret-arn", arn], env=env, capture_output=True, text=True, timeout=120)
        assert ok.returncode == 0 and ok.stdout.strip().startswith("["), ok.stderr
        # The secret is what authenticates (not the harness's local credentials): a wrong one is refused.
        wrong_pw = sm.create_secret(Name=f"rest-wrong-{RUN}", SecretString=json.dumps(
            {"username": w.creds.username, "password": "wrong"}))["ARN"]
        refused = subprocess.run([*base, "--connect-secret-arn", wrong_pw], env=env, capture_output=True, text=True,
                                 timeout=120)
        assert refused.returncode == 2 and "401" in refused.stderr, refused.stderr
        wrong = arn.replace(":secretsmanager:", ":ssm:")
        bad = subprocess.run([*base, "--connect-secret-arn", wrong], env=env, capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and "--connect-secret-arn" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    finally:
        server.stop()
