"""prometheus/entrypoint.sh with MM2_PROMETHEUS_TLS_DIR, run with the real (Debian) Prometheus and a
certificate made by images/kafka-connect/serving-cert.sh, as the ECS task does: Prometheus serves HTTPS
only, behind basic auth; a client holding the environment's CA verifies it, one holding another
environment's CA does not; Prometheus scrapes itself over HTTPS verifying the CA; the health check's
client config carries the same login and CA."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml

from msk_migrate.local.procs import free_port
from msk_migrate.paths import CONNECT_ENTRYPOINT

from .promql import PROM_DIR, RULES_DIR

SCRIPT = CONNECT_ENTRYPOINT.with_name("serving-cert.sh")
USER, PASSWORD = "mm2-operator", "LettersAndDigits0nlyPassw0rd"


def serving_cert(out: Path, seed: str) -> None:
    subprocess.run(["bash", str(SCRIPT), "--out", str(out), "--seed-env", "SEED", "--dns", "prometheus.test.internal"],
                   env={"PATH": os.environ["PATH"], "SEED": seed}, check=True, capture_output=True, timeout=60)


def bcrypt_hash(password: str) -> str:
    """The hash Terraform's bcrypt() writes into the secret, made by htpasswd (apache2-utils, make setup)."""
    out = subprocess.run(["htpasswd", "-nbB", "-C", "10", "u", password], capture_output=True, text=True, check=True)
    return out.stdout.strip().split(":", 1)[1]


@pytest.fixture
def tls_prometheus(tmp_path, prometheus_bin, promtool):
    port = free_port()
    serving_cert(tmp_path / "tls", "a" * 20 + "Seed0fThisEnvironment0")
    serving_cert(tmp_path / "other", "b" * 20 + "Seed0fAnotherEnvironment")
    template = (PROM_DIR / "prometheus.yml").read_text().replace('"localhost:9090"', f'"localhost:{port}"')
    (tmp_path / "prometheus.yml").write_text(template)
    (tmp_path / "rules").mkdir()
    for r in RULES_DIR.glob("*.yml"):
        (tmp_path / "rules" / r.name).write_text(r.read_text())
    env = {
        "PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": prometheus_bin,
        "PROMETHEUS_RENDERED_CONFIG": str(tmp_path / "rendered.yml"),
        "MM2_PROMETHEUS_WEB_USER": USER, "MM2_PROMETHEUS_WEB_PASSWORD": PASSWORD,
        "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": bcrypt_hash(PASSWORD),
        "MM2_PROMETHEUS_TLS_DIR": str(tmp_path / "tls"),
    }
    proc = subprocess.Popen(
        ["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))  # noqa: SIM115
    url = f"https://localhost:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{url}/-/healthy", auth=(USER, PASSWORD), verify=str(tmp_path / "tls" / "ca.pem"), timeout=2).ok:
                break
        except requests.RequestException:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "prometheus.log").read_text()[-2000:]
        time.sleep(0.5)
    yield url, tmp_path
    proc.terminate()
    proc.wait(timeout=30)


def test_prometheus_serves_https_only_to_clients_that_trust_the_environments_ca(tls_prometheus):
    url, tmp = tls_prometheus
    ca, other_ca = str(tmp / "tls" / "ca.pem"), str(tmp / "other" / "ca.pem")
    assert requests.get(f"{url}/-/healthy", verify=ca, timeout=5).status_code == 401  # TLS ok, login still required
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(f"{url}/-/healthy", auth=(USER, PASSWORD), verify=other_ca, timeout=5)
    # Plain HTTP is answered only with Go's refusal, never with content.
    plain = requests.get(url.replace("https://", "http://") + "/api/v1/status/config", auth=(USER, PASSWORD), timeout=5)
    assert plain.status_code == 400 and "HTTPS" in plain.text and "scrape_configs" not in plain.text


def test_prometheus_scrapes_itself_over_https_and_the_health_check_client_config_matches(tls_prometheus):
    url, tmp = tls_prometheus
    ca = str(tmp / "tls" / "ca.pem")
    deadline = time.monotonic() + 60
    up = None
    while time.monotonic() < deadline:
        result = requests.get(f"{url}/api/v1/query", params={"query": 'up{job="prometheus"}'}, auth=(USER, PASSWORD),
                              verify=ca, timeout=5).json()["data"]["result"]
        if result:
            up = result[0]["value"][1]
            if up == "1":
                break
        time.sleep(2)
    assert up == "1", "the self-scrape over HTTPS with the CA did not succeed"
    client = yaml.safe_load((tmp / "promtool-http.yml").read_text())
    assert client["tls_config"] == {"ca_file": f"{tmp}/tls/ca.pem"}
    assert client["basic_auth"]["username"] == USER and Path(client["basic_auth"]["password_file"]).read_text() == PASSWORD
    assert oct((tmp / "promtool-http.yml").stat().st_mode & 0o777) == "0o600"


def test_a_tls_directory_without_its_files_is_one_line_exit_2(tmp_path, promtool):
    (tmp_path / "prometheus.yml").write_text((PROM_DIR / "prometheus.yml").read_text())
    env = {"PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": "/bin/echo",
           "PROMETHEUS_RENDERED_CONFIG": str(tmp_path / "rendered.yml"), "MM2_PROMETHEUS_WEB_AUTH": "none",
           "MM2_PROMETHEUS_TLS_DIR": str(tmp_path / "missing")}
    r = subprocess.run(["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={tmp_path / 'prometheus.yml'}"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "MM2_PROMETHEUS_TLS_DIR" in r.stderr and len(r.stderr.strip().splitlines()) == 1
