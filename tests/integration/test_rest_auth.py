"""Connect REST lockdown against real workers: basic auth (Kafka's BasicAuthSecurityRestExtension), HTTPS
served by the worker, the env provider limited to the MM2 secret variables, no file provider, and
connector client overrides only through our MirrorMakerOverridePolicy (MM2 connectors, allowlisted keys,
``bootstrap.servers`` only toward the pinned source cluster)."""

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
from msk_migrate.connectors.render import render_connectors, reverse_producer
from msk_migrate.connectors.worker_env import RestSecurity, health_check_command
from msk_migrate.errors import UnreachableError
from msk_migrate.local.classpath import classpath
from msk_migrate.local.connect_worker import local_rest_credentials, local_worker_spec, rest_url, start_connect_worker, wait_connect_ready
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR

from .conftest import TEST_MIGRATION
from .pki import ThrowawayCA

RUN = uuid.uuid4().hex[:6]

#: A connector that is not MM2 (what anyone allowed to create connectors could run), compiled for the test
#: and put on the HTTPS worker's classpath: the override policy must refuse its client overrides.
OTHER_CONNECTOR = "io.mskmigrate.test.OtherSourceConnector"
OTHER_CONNECTOR_JAVA = """package io.mskmigrate.test;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

public class OtherSourceConnector extends SourceConnector {
    public void start(Map<String, String> props) { }
    public Class<? extends Task> taskClass() { return null; }
    public List<Map<String, String>> taskConfigs(int maxTasks) { return List.of(); }
    public void stop() { }
    public ConfigDef config() { return new ConfigDef(); }
    public String version() { return "test"; }
}
"""


def _compile_other_connector(out, cp: str) -> None:
    src = out / "src" / "OtherSourceConnector.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(OTHER_CONNECTOR_JAVA)
    javac = shutil.which("javac")
    assert javac, "javac (the JDK Maven builds with) is needed to compile the test connector"
    subprocess.run([javac, "-nowarn", "-cp", cp, "-d", str(out / "classes"), str(src)],
                   check=True, timeout=180, capture_output=True)


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
    cp = classpath("connect")
    _compile_other_connector(base / "other", cp)
    rec = start_connect_worker(
        local_env.target(), base / "connect", worker, name="connect-https", source=source, rest=rest,
        secret_env={wenv.ENV_REST_TLS_KEYSTORE: keystore, wenv.ENV_REST_TLS_KEYSTORE_PASSWORD: keystore_password,
                    "MM2_SOURCE_SASL_USERNAME": "3", "MM2_SOURCE_SASL_PASSWORD": "unused"},
        extra_env={"SOMETHING_ELSE": "2", "CONNECT_CLASSPATH": f"{cp}:{base / 'other' / 'classes'}"},
    )
    url = rest_url(worker, rest)
    try:
        client = ConnectClient(url, ca=str(base / "rest-ca.pem"))
        wait_connect_ready(rec, url, timeout=240, client=client)
        yield SimpleNamespace(url=url, ca=str(base / "rest-ca.pem"), client=client, source=source,
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
    with pytest.raises(UnreachableError):  # the worker's certificate is not trusted without its CA
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


def _source_connector(local_env, **overrides) -> dict[str, str]:
    configs = render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION.model_copy(update={"name": f"ra{RUN}"}))
    (src,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorSourceConnector")]
    return {**src, **overrides}


def _errors_of(errors: list[str], key: str) -> list[str]:
    return [e for e in errors if e.startswith(key + ":")]


def test_mm2_producer_tuning_overrides_are_accepted_by_the_worker(local_env, https_worker):
    cfg = _source_connector(local_env, **{"producer.override.linger.ms": "20", "producer.override.max.request.size": "4194304"})
    assert [k for k in cfg if k.startswith("producer.override.")]  # the rendered tuning profile is there too
    assert https_worker.client.validate(cfg) == []


def test_reverse_flow_producer_toward_the_pinned_source_is_accepted(local_env, https_worker):
    # the reverse connectors' producer writes to the source with the source's (SCRAM) settings
    reverse = reverse_producer(https_worker.source)
    assert reverse["producer.override.bootstrap.servers"] == local_env.source().bootstrap_servers
    assert "producer.override.sasl.jaas.config" in reverse
    assert https_worker.client.validate(_source_connector(local_env, **reverse)) == []


def test_mm2_bootstrap_servers_other_than_the_pinned_source_are_refused(local_env, https_worker):
    reverse = {**reverse_producer(https_worker.source), "producer.override.bootstrap.servers": "evil:9092"}
    errors = https_worker.client.validate(_heartbeat(local_env, **reverse))
    assert [e for e in _errors_of(errors, "producer.override.bootstrap.servers") if "evil:9092" in e], errors
    # the security settings are refused too: they only go with the pinned cluster
    assert _errors_of(errors, "producer.override.sasl.jaas.config"), errors


def test_mm2_overrides_outside_the_allowlist_are_refused(local_env, https_worker):
    errors = https_worker.client.validate(_source_connector(local_env, **{
        "producer.override.interceptor.classes": "org.example.Exfiltrate", "producer.override.acks": "1"}))
    for key in ("producer.override.interceptor.classes", "producer.override.acks"):
        assert [e for e in _errors_of(errors, key) if "not an allowed producer override" in e], errors
    assert not _errors_of(errors, "producer.override.linger.ms")  # the rendered tuning stays accepted


def test_a_connector_that_is_not_mm2_may_override_no_client_setting(local_env, https_worker):
    base = {"name": f"other-{RUN}", "connector.class": OTHER_CONNECTOR, "tasks.max": "1"}
    assert https_worker.client.validate(base) == []  # the class is loaded: only the overrides are refused
    errors = https_worker.client.validate({**base, "producer.override.linger.ms": "20",
                                           "producer.override.bootstrap.servers": local_env.source().bootstrap_servers})
    for key in ("producer.override.linger.ms", "producer.override.bootstrap.servers"):
        assert [e for e in _errors_of(errors, key) if "only MirrorMaker 2 connectors" in e], errors


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
