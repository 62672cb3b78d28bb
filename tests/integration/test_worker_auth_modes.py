"""A real Connect worker (the image entrypoint, the rendered worker.properties) joins a target cluster in
every auth mode the local machine can offer: SCRAM over TLS and mTLS against a KRaft broker with those
listeners (throwaway CA, SCRAM users from ``kafka-storage format --add-scram``). IAM needs AWS: its
rendered client settings are loaded by the real Kafka client with the real aws-msk-iam-auth jar.
The SCRAM worker also carries the REST lockdown checks that need a worker of their own (HTTPS served by
the worker, the env provider's allowlist with an allowed and a forbidden variable present); the ones
the harness worker can show are in test_rest_auth.py."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from confluent_kafka.admin import AdminClient

from msk_migrate import versions
from msk_migrate.access.client_security import admin_config
from msk_migrate.access.secrets import SecretResolver
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec
from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError
from msk_migrate.connectors import worker_env as wenv
from msk_migrate.connectors.render import render_connectors
from msk_migrate.connectors.worker_env import CLIENT_PREFIXES, RestSecurity, worker_properties
from msk_migrate.errors import UsageError
from msk_migrate.local.broker import BrokerSecurity, BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.connect_worker import (
    LOCAL_REST,
    local_rest_credentials,
    local_worker_spec,
    rest_url,
    start_connect_worker,
    wait_connect_ready,
)
from msk_migrate.local.procs import free_port, stop
from msk_migrate.paths import LOCAL_DIR

from .pki import ThrowawayCA

RUN = uuid.uuid4().hex[:6]
#: Names where the CA would live on ECS; locally MM2_TARGET_TLS_CA is set on the worker directly.
CA_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:local-test-ca"


@pytest.fixture(scope="module")
def secure_target():
    base = LOCAL_DIR / "test-env" / f"auth-modes-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    ca = ThrowawayCA()
    (base / "ca.pem").write_text(ca.pem)
    password = uuid.uuid4().hex
    security = BrokerSecurity(
        ca_pem=base / "ca.pem",
        keystore_pem=ca.write_keystore_pem(ca.issue("localhost", server=True), base / "broker-keystore.pem"),
        scram_users={"mm2": password},
    )
    spec = BrokerSpec("target", versions.kafka_target_version(), classpath("kafka-target"), base / "target",
                      auto_create_topics=False, security=security)
    rec, port = start_broker(spec)
    procs = [rec]
    try:
        wait_broker_ready(rec, port)
        yield SimpleNamespace(spec=spec, ca=ca, password=password, client=ca.issue("mm2-client", server=False),
                              base=base, procs=procs)
    finally:
        workers = [threading.Thread(target=stop, args=(p,)) for p in procs[1:]]
        for th in workers:  # workers stop in parallel, the broker last
            th.start()
        for th in workers:
            th.join()
        stop(rec)
        shutil.rmtree(base, ignore_errors=True)


def _endpoint_and_secrets(t, mode: str) -> tuple[ClusterEndpoint, dict[str, str]]:
    if mode == "scram":
        auth = AuthConfig(mode="scram", secrets_from="env", ca_secret_arn=CA_ARN)
        secrets = {"MM2_TARGET_SASL_USERNAME": "mm2", "MM2_TARGET_SASL_PASSWORD": t.password}
        port = t.spec.ports["SASL_SSL"]
    else:
        auth = AuthConfig(mode="mtls", secrets_from="env", ca_secret_arn=CA_ARN)
        secrets = {"MM2_TARGET_TLS_CERTIFICATE_CHAIN": t.client.cert_pem, "MM2_TARGET_TLS_PRIVATE_KEY": t.client.key_pem}
        port = t.spec.ports["SSL"]
    secrets["MM2_TARGET_TLS_CA"] = t.ca.pem
    return ClusterEndpoint(alias="target", bootstrap_servers=f"127.0.0.1:{port}", auth=auth), secrets


@pytest.fixture(scope="module")
def workers(secure_target):
    """One worker per mode, both JVMs booting at once. The SCRAM worker also serves its REST API over HTTPS
    (keystore from the throwaway CA) and declares a SCRAM source, so MM2_SOURCE_SASL_* are allowed variables;
    SOMETHING_ELSE is in its environment but is no MM2 secret."""
    t = secure_target
    (t.base / "rest-ca.pem").write_text(t.ca.pem)
    keystore_password = uuid.uuid4().hex
    keystore = base64.b64encode(t.ca.pkcs12(t.ca.issue("localhost", server=True), keystore_password)).decode()
    started = {}
    for mode in ("scram", "mtls"):
        target, secrets = _endpoint_and_secrets(t, mode)
        worker = local_worker_spec(group_id=f"auth-{mode}-{RUN}")
        kw: dict = {}
        rest = LOCAL_REST
        if mode == "scram":
            rest = RestSecurity(basic_auth=True, tls=True, bind_host="127.0.0.1", advertised_host="127.0.0.1")
            kw = {"source": ClusterEndpoint(alias="source", bootstrap_servers="127.0.0.1:9",
                                            auth=AuthConfig(mode="scram", secrets_from="env")),
                  "rest": rest, "extra_env": {"SOMETHING_ELSE": "2"}}
            secrets = {**secrets, wenv.ENV_REST_TLS_KEYSTORE: keystore,
                       wenv.ENV_REST_TLS_KEYSTORE_PASSWORD: keystore_password,
                       "MM2_SOURCE_SASL_USERNAME": "3", "MM2_SOURCE_SASL_PASSWORD": "unused"}
        rec = start_connect_worker(target, t.base / f"connect-{mode}", worker, secret_env=secrets,
                                   name=f"connect-{mode}", **kw)
        t.procs.append(rec)
        url = rest_url(worker, rest)
        client = ConnectClient(url, ca=str(t.base / "rest-ca.pem")) if rest.tls else ConnectClient(url)
        started[mode] = SimpleNamespace(target=target, source=kw.get("source"), secrets=secrets, worker=worker, rec=rec, url=url,
                                        client=client, ca=str(t.base / "rest-ca.pem"),
                                        creds=local_rest_credentials(t.base / f"connect-{mode}"))
    for w in started.values():
        wait_connect_ready(w.rec, w.url, timeout=240, client=w.client)
    return started


def test_workers_join_scram_and_mtls_targets_from_the_rendered_configuration(secure_target, workers):
    for mode, w in workers.items():
        assert worker_properties(w.target, w.worker)["security.protocol"] == {"scram": "SASL_SSL", "mtls": "SSL"}[mode]
        # The worker reached the cluster only through the authenticated listener: its internal topics exist,
        # seen by an admin client configured by the product's own client settings for that mode.
        admin = AdminClient(admin_config("target", w.target, SecretResolver(environ=w.secrets)))
        internal = {w.worker.config_storage_topic, w.worker.offset_storage_topic, w.worker.status_storage_topic}
        deadline = time.monotonic() + 60  # REST answers before the worker has created all three (seen on a loaded machine)
        while not internal <= (topics := set(admin.list_topics(timeout=30).topics)) and time.monotonic() < deadline:
            time.sleep(1)
        assert internal <= topics, (mode, sorted(topics))
        log = Path(w.rec.log).read_text(errors="replace")
        assert secure_target.password not in log and "BEGIN PRIVATE KEY" not in log


def _heartbeat(source: ClusterEndpoint, target: ClusterEndpoint, **overrides) -> dict[str, str]:
    """The rendered heartbeat connector between the worker's own clusters (the only ones it accepts, issue 37)."""
    configs = render_connectors(source, target, MigrationSpec(name=f"am{RUN}", topics=["am-.*"]))
    (hb,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorHeartbeatConnector")]
    return {**hb, **overrides}


def test_https_worker_refuses_unauthenticated_and_untrusted_clients(workers):
    w = workers["scram"]
    assert w.url.startswith("https://")
    assert requests.get(w.url + "/connectors", verify=w.ca, timeout=10).status_code == 401
    with pytest.raises(UsageError, match="--connect-ca"):  # the worker's certificate is not trusted without its CA
        ConnectClient(w.url, timeout=10).connectors()
    assert isinstance(w.client.connectors(), list)


def test_connector_configs_name_secret_variables_only_in_the_rendered_cluster_settings(workers):
    w = workers["scram"]
    # The rendered config passes: its SCRAM JAAS entries name the allowed MM2 variables...
    assert w.client.validate(_heartbeat(w.source, w.target)) == []
    # ...any variable anywhere else is refused before the worker resolves it, an allowed one (value "3")
    # included, as are one outside the allowlist (value "2"), the REST password and a file provider's.
    for ref in ("${env:MM2_SOURCE_SASL_USERNAME}", "${env:SOMETHING_ELSE}", f"${{env:{wenv.ENV_REST_PASSWORD}}}",
                "${file:/etc/hostname:x}"):
        with pytest.raises(ConnectRestError) as err:
            w.client.validate(_heartbeat(w.source, w.target, **{"tasks.max": ref}))
        assert err.value.status == 400 and err.value.message.startswith("'tasks.max' names a config provider variable"), ref


def test_cli_reaches_an_https_worker_with_its_ca_and_env_credentials(workers):
    w = workers["scram"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSK_MIGRATE_CONNECT_")}
    env.update(MSK_MIGRATE_CONNECT_CA=w.ca, MSK_MIGRATE_CONNECT_USER=w.creds.username,
               MSK_MIGRATE_CONNECT_PASSWORD=w.creds.password)
    cmd = [sys.executable, "-m", "msk_migrate.commands", "connectors", "status", "--connect-url", w.url, "--output", "json"]
    ok = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and isinstance(json.loads(ok.stdout)["rows"], list), ok.stderr


@pytest.fixture(scope="module")
def internal_ca_workers(secure_target):
    """Two workers of one group, each serving its REST API over HTTPS with a certificate it made at start
    from the same internal-CA seed (the deployed posture, ECS_REST): the CA files stay in each worker's
    config directory, as on ECS."""
    t = secure_target
    target, secrets = _endpoint_and_secrets(t, "scram")
    # The pinned-config filter accepts a connector only between the worker's declared clusters, each under its own
    # alias and secret variables: the same SCRAM cluster is declared as the source too, with MM2_SOURCE_* secrets.
    source = ClusterEndpoint(alias="source", bootstrap_servers=target.bootstrap_servers,
                             auth=AuthConfig(mode="scram", secrets_from="env", ca_secret_arn=CA_ARN))
    secrets = {**secrets, "MM2_SOURCE_SASL_USERNAME": secrets["MM2_TARGET_SASL_USERNAME"],
               "MM2_SOURCE_SASL_PASSWORD": secrets["MM2_TARGET_SASL_PASSWORD"], "MM2_SOURCE_TLS_CA": secrets["MM2_TARGET_TLS_CA"]}
    rest = RestSecurity(basic_auth=True, tls=True, internal_ca=True, bind_host="127.0.0.1", advertised_host="127.0.0.1")
    seed = uuid.uuid4().hex + uuid.uuid4().hex
    group = f"auth-ca-{RUN}"
    out = []
    for name in ("ca-a", "ca-b"):
        worker = local_worker_spec(group_id=group)
        rec = start_connect_worker(target, t.base / f"connect-{name}", worker, rest=rest, name=f"connect-{name}", source=source,
                                   secret_env={**secrets, wenv.ENV_REST_TLS_CA_SEED: seed},
                                   credentials_dir=t.base / "connect-ca-credentials")
        t.procs.append(rec)
        out.append(SimpleNamespace(worker=worker, source=source, target=target, rec=rec, url=rest_url(worker, rest), seed=seed,
                                   tls_dir=t.base / f"connect-{name}" / "config" / wenv.REST_TLS_DIR))
    creds = local_rest_credentials(t.base / "connect-ca-credentials")
    anchor = out[0].tls_dir / "ca.pem"  # the first worker's CA file: the one anchor the clients use for both
    for w in out:
        wait_for_file = time.monotonic() + 120
        while not anchor.exists() and time.monotonic() < wait_for_file:
            time.sleep(0.5)
        w.client = ConnectClient(w.url, ca=str(anchor), auth=creds)
        wait_connect_ready(w.rec, w.url, timeout=240, client=w.client)
    return out


def test_workers_with_certificates_made_at_start_trust_each_other_and_forward_requests(internal_ca_workers):
    a, b = internal_ca_workers
    assert a.url.startswith("https://") and b.url.startswith("https://")
    # Two different certificates (a fresh key each), one CA: the client trusts b with a's CA file.
    assert (a.tls_dir / "cert.pem").read_text() != (b.tls_dir / "cert.pem").read_text()
    # One of the two is not the group's leader: a connector created through each is forwarded once, over
    # HTTPS verified against the internal CA (a forwarding failure answers 500).
    names = [f"ca-hb-{RUN}-{i}" for i in range(2)]
    try:
        for w, name in zip((a, b), names, strict=True):
            w.client.put_config(name, _heartbeat(w.source, w.target, **{"name": name}))
        for w in (a, b):
            # each worker learns the other's connector from the config topic: a moment after the PUT answered
            deadline, listed = time.monotonic() + 60, set()
            while time.monotonic() < deadline and not set(names) <= listed:
                listed = set(w.client.connectors())
                time.sleep(0.5)
            assert set(names) <= listed, (w.url, listed)
    finally:
        for name in names:
            with contextlib.suppress(Exception):  # cleanup only
                a.client.delete(name)
    # Neither the seed nor the keystore password reaches the worker's log.
    for w in (a, b):
        log = Path(w.rec.log).read_text(errors="replace")
        assert w.seed not in log and (w.tls_dir / "store-password").read_text().strip() not in log
    # An untrusted client (no CA) is refused by the certificate check, not by a missing password.
    with pytest.raises(UsageError, match="--connect-ca"):
        ConnectClient(a.url, timeout=10).connectors()


IAM_CHECK = textwrap.dedent("""
    import java.io.FileReader;
    import java.util.Properties;
    import org.apache.kafka.clients.admin.Admin;
    public class IamCheck {
        public static void main(String[] args) throws Exception {
            for (String file : args) {
                Properties p = new Properties();
                p.load(new FileReader(file));
                try (Admin admin = Admin.create(p)) {
                    System.out.println("CREATED " + file);
                } catch (Exception e) {
                    System.out.println("REFUSED " + file + ": " + e);
                }
            }
        }
    }
""")


def test_iam_worker_settings_load_aws_msk_iam_auth_in_a_real_kafka_client(tmp_path):
    """The rendered IAM settings (bare and producer./consumer./admin.) configure a real Kafka client with
    the Connect classpath's aws-msk-iam-auth: login module and callback handler load, SASL mechanism
    AWS_MSK_IAM is accepted. (Authentication itself needs an MSK cluster and AWS credentials.)"""
    target = ClusterEndpoint(alias="target", bootstrap_servers=f"127.0.0.1:{free_port()}", auth=AuthConfig(mode="iam"))
    props = worker_properties(target, local_worker_spec())
    files = []
    for prefix in CLIENT_PREFIXES:
        client = {k[len(prefix):]: v for k, v in props.items()
                  if k.startswith(prefix) and k[len(prefix):].startswith(("sasl.", "security."))}
        assert client["sasl.mechanism"] == "AWS_MSK_IAM" and len(client) == 4, client
        files.append(tmp_path / f"client-{prefix.rstrip('.') or 'worker'}.properties")
        files[-1].write_text("".join(f"{k}={v}\n" for k, v in {**client, "bootstrap.servers": target.bootstrap_servers}.items()))
    # A misspelt login module is refused by the same check (so the check can fail).
    bad = tmp_path / "bad.properties"
    bad.write_text(files[0].read_text().replace("IAMLoginModule", "IAMLoginModul"))
    src = tmp_path / "IamCheck.java"
    src.write_text(IAM_CHECK)
    r = subprocess.run(["java", "-cp", classpath("connect"), str(src), *map(str, files), str(bad)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert [f"CREATED {f}" for f in files] == [ln for ln in lines if ln.startswith("CREATED")], r.stdout
    assert any(ln.startswith(f"REFUSED {bad}") for ln in lines), r.stdout
