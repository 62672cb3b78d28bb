"""A real Connect worker (the image entrypoint, the rendered worker.properties) joins a target cluster in
every auth mode the local machine can offer: SCRAM over TLS and mTLS against a KRaft broker with those
listeners (throwaway CA, SCRAM users from ``kafka-storage format --add-scram``). IAM needs AWS: its
rendered client settings are loaded by the real Kafka client with the real aws-msk-iam-auth jar."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
import threading
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from confluent_kafka.admin import AdminClient

from msk_migrate import versions
from msk_migrate.clients import SecretResolver, admin_config
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint
from msk_migrate.connectors.worker_env import CLIENT_PREFIXES, worker_properties
from msk_migrate.local.broker import BrokerSecurity, BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.connect_worker import local_worker_spec, rest_url, start_connect_worker, wait_connect_ready
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


def test_workers_join_scram_and_mtls_targets_from_the_rendered_configuration(secure_target):
    t = secure_target
    started = {}
    for mode in ("scram", "mtls"):  # both JVMs boot at once: half the wall time
        target, secrets = _endpoint_and_secrets(t, mode)
        worker = local_worker_spec(group_id=f"auth-{mode}-{RUN}")
        props = worker_properties(target, worker)
        assert props["security.protocol"] == {"scram": "SASL_SSL", "mtls": "SSL"}[mode]
        rec = start_connect_worker(target, t.base / f"connect-{mode}", worker, secret_env=secrets,
                                   name=f"connect-{mode}")
        t.procs.append(rec)
        started[mode] = (target, secrets, worker, rec)
    for mode, (target, secrets, worker, rec) in started.items():
        wait_connect_ready(rec, rest_url(worker), timeout=240)
        # The worker reached the cluster only through the authenticated listener: its internal topics exist,
        # seen by an admin client configured by the product's own client settings for that mode.
        admin = AdminClient(admin_config("target", target, SecretResolver(environ=secrets)))
        topics = set(admin.list_topics(timeout=30).topics)
        internal = {worker.config_storage_topic, worker.offset_storage_topic, worker.status_storage_topic}
        assert internal <= topics, (mode, sorted(topics))
        log = Path(rec.log).read_text(errors="replace")
        assert t.password not in log and "BEGIN PRIVATE KEY" not in log


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
