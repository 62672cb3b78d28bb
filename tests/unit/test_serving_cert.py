"""images/kafka-connect/serving-cert.sh: every task of an environment issues its own TLS certificate from one
internal CA derived from a seed, so the tasks' clients (Connect workers calling each other, Grafana calling
Prometheus) verify certificates made elsewhere; another environment's seed is not trusted. Real openssl and
keytool, run outside a container."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, WorkerSpec
from msk_migrate.connectors.worker_env import (
    CA_SEED_KEY,
    ECS_REST,
    ENV_REST_TLS_CA_SEED,
    REST_TLS_DIR,
    RestSecurity,
    health_check_command,
    required_variables,
    worker_environment,
    worker_properties,
    worker_secret_env,
)
from msk_migrate.paths import CONNECT_ENTRYPOINT

SCRIPT = CONNECT_ENTRYPOINT.with_name("serving-cert.sh")
SEED = "x7Q2mVt9LpR4sWk8ZbN3cHf6JdY1gTe5Ua0o"
OTHER_SEED = "Other0environment0seed0Other0environment0"


def make(out: Path, *args: str, seed: str = SEED) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "SEED": seed}
    return subprocess.run(["bash", str(SCRIPT), "--out", str(out), "--seed-env", "SEED", *args],
                          env=env, capture_output=True, text=True, timeout=60)


def verify(ca: Path, cert: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "verify", "-CAfile", str(ca), str(cert)], capture_output=True, text=True)


def leaf(cert: Path) -> Path:
    """The first certificate of cert.pem (leaf, then CA)."""
    text = cert.read_text()
    out = cert.parent.parent / f"{cert.parent.name}-leaf.pem"
    out.write_text(text[: text.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")] + "\n")
    return out


def test_tasks_of_one_environment_trust_each_others_certificates_and_no_other_environment(tmp_path):
    a, b, other = tmp_path / "a", tmp_path / "b", tmp_path / "other"
    for out, ip, seed in ((a, "10.0.1.5", SEED), (b, "10.0.2.6", SEED), (other, "10.0.3.7", OTHER_SEED)):
        r = make(out, "--ip", ip, "--dns", "prometheus.msk-migrate-prod.internal", seed=seed)
        assert r.returncode == 0, r.stderr
    # Two tasks, two fresh keys, one CA: a's certificate verifies with b's copy of the CA, and back.
    assert (a / "key.pem").read_text() != (b / "key.pem").read_text()
    assert verify(b / "ca.pem", leaf(a / "cert.pem")).returncode == 0
    assert verify(a / "ca.pem", leaf(b / "cert.pem")).returncode == 0
    # Another environment's seed is another CA: refused both ways.
    assert verify(other / "ca.pem", leaf(a / "cert.pem")).returncode != 0
    assert verify(a / "ca.pem", leaf(other / "cert.pem")).returncode != 0
    text = subprocess.run(["openssl", "x509", "-in", str(a / "cert.pem"), "-noout", "-text"],
                          capture_output=True, text=True, check=True).stdout
    for san in ("IP Address:10.0.1.5", "IP Address:127.0.0.1", "DNS:localhost", "DNS:prometheus.msk-migrate-prod.internal"):
        assert san in text
    assert "CA:FALSE" in text and "TLS Web Server Authentication" in text
    for f in a.iterdir():
        assert f.stat().st_mode & 0o077 == 0, f  # the key and everything else: owner only
    assert SEED not in r.stdout + r.stderr


def test_pkcs12_stores_hold_the_key_chain_and_the_ca_as_a_trusted_entry(tmp_path):
    r = make(tmp_path / "t", "--ip", "127.0.0.1", "--pkcs12")
    assert r.returncode == 0, r.stderr
    password = (tmp_path / "t" / "store-password").read_text().strip()
    assert len(password) >= 32
    listing = subprocess.run(["keytool", "-list", "-keystore", str(tmp_path / "t" / "truststore.p12"), "-storepass", password],
                             capture_output=True, text=True)
    assert listing.returncode == 0 and "trustedCertEntry" in listing.stdout, listing.stdout + listing.stderr
    keys = subprocess.run(["keytool", "-list", "-keystore", str(tmp_path / "t" / "keystore.p12"), "-storepass", password],
                          capture_output=True, text=True)
    assert keys.returncode == 0 and "PrivateKeyEntry" in keys.stdout, keys.stdout + keys.stderr


@pytest.mark.parametrize(("args", "seed", "word"), [
    ((), "short", "at least 32"),
    (("--ip", "10.0.0.x"), SEED, "--ip"),
    (("--ip", "427efcd7a2d2"), SEED, "--ip"),  # hex digits without a colon: not an IPv6 address
    (("--dns", "bad name!"), SEED, "--dns"),
    (("--bogus",), SEED, "unknown argument"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, seed, word):
    r = make(tmp_path / "out", *args, seed=seed)
    assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def _target() -> ClusterEndpoint:
    return ClusterEndpoint(alias="target", bootstrap_servers="b-1:9098", auth=AuthConfig(mode="iam"))


def test_deployed_workers_serve_https_from_the_internal_ca_and_verify_each_other():
    props = worker_properties(_target(), WorkerSpec(), rest=ECS_REST, config_dir="/tmp/connect")
    assert props["listeners"].startswith("https://") and props["rest.advertised.listener"] == "https"
    tls = f"/tmp/connect/{REST_TLS_DIR}"
    assert props["listeners.https.ssl.keystore.location"] == f"{tls}/keystore.p12"
    # The same prefix configures the client a worker forwards requests with: it trusts the CA, checks the name.
    assert props["listeners.https.ssl.truststore.location"] == f"{tls}/truststore.p12"
    assert props["listeners.https.ssl.endpoint.identification.algorithm"] == "https"
    assert not any("password" in k for k in props)  # the entrypoint adds the fresh store password
    assert ENV_REST_TLS_CA_SEED in required_variables(props, ECS_REST)
    secrets = worker_secret_env(_target(), rest_ca_seed_secret_arn="arn:aws:secretsmanager:eu-west-1:1:secret:ca")
    assert secrets[ENV_REST_TLS_CA_SEED].endswith(f":{CA_SEED_KEY}::")
    check = health_check_command(WorkerSpec(), ECS_REST)[1]
    assert f"--cacert /tmp/connect/{REST_TLS_DIR}/ca.pem" in check and " -k" not in check and "https://localhost" in check
    with pytest.raises(ValueError, match="internal_ca"):
        RestSecurity(tls=False, internal_ca=True)


def test_entrypoint_makes_the_rest_certificate_and_writes_the_store_passwords_masked_in_dry_run(tmp_path):
    env = {**worker_environment(_target(), WorkerSpec(), rest=ECS_REST, config_dir=str(tmp_path)),
           "PATH": os.environ["PATH"], "CONNECT_DRY_RUN": "1", "CONNECT_REST_ADVERTISED_HOST": "10.0.4.9",
           "CONNECT_REST_USERNAME": "ops", "CONNECT_REST_PASSWORD": "p", ENV_REST_TLS_CA_SEED: SEED}
    r = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    written = (tmp_path / "worker.properties").read_text()
    password = (tmp_path / REST_TLS_DIR / "store-password").read_text().strip()
    assert f"listeners.https.ssl.keystore.password={password}" in written
    assert f"listeners.https.ssl.truststore.password={password}" in written
    assert password not in r.stdout and "listeners.https.ssl.truststore.password=*****" in r.stdout
    text = subprocess.run(["openssl", "x509", "-in", str(tmp_path / REST_TLS_DIR / "cert.pem"), "-noout", "-text"],
                          capture_output=True, text=True, check=True).stdout
    assert "IP Address:10.0.4.9" in text  # the address other workers reach it by (rest.advertised.host.name)
    missing = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env={**env, ENV_REST_TLS_CA_SEED: ""},
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and ENV_REST_TLS_CA_SEED in missing.stderr


@pytest.mark.parametrize(("host", "san"), [
    ("10.0.4.9", "IP Address:10.0.4.9"),
    ("fd00::2", "IP Address:FD00:0:0:0:0:0:0:2"),
    ("427efcd7a2d2", "DNS:427efcd7a2d2"),  # a container id as hostname (hex digits only) is a name
])
def test_the_advertised_host_is_named_in_the_certificate_as_an_address_or_a_name(tmp_path, host, san):
    env = {**worker_environment(_target(), WorkerSpec(), rest=ECS_REST, config_dir=str(tmp_path)),
           "PATH": os.environ["PATH"], "CONNECT_DRY_RUN": "1", "CONNECT_REST_ADVERTISED_HOST": host,
           "CONNECT_REST_USERNAME": "ops", "CONNECT_REST_PASSWORD": "p", ENV_REST_TLS_CA_SEED: SEED}
    r = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = subprocess.run(["openssl", "x509", "-in", str(tmp_path / REST_TLS_DIR / "cert.pem"), "-noout", "-ext",
                           "subjectAltName"], capture_output=True, text=True, check=True).stdout
    assert san in text, text
