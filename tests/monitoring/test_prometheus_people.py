"""prometheus/entrypoint.sh with one login per person (``connect.people``), run with the real (Debian)
Prometheus: each person signs in with their own password and no one else's; the machine login keeps
working for Grafana's datasource and the health check; a person variable with a bad name or a value that
is not a bcrypt hash stops the entrypoint with one line naming the variable, before Prometheus starts."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
import requests
import yaml

from msk_migrate.local.procs import free_port

from .promql import PROM_DIR
from .test_prometheus_tls import bcrypt_hash

MACHINE, MACHINE_PASSWORD = "mm2-operator", "MachineL0ginPassw0rdOnlyForGrafana"
PEOPLE = {"alice": "Al1cesOwnPassw0rdNotShared", "j-smith": "JSm1thsOwnPassw0rdNotShared"}


def _env(tmp_path, promtool: str, prometheus_bin: str, people: dict[str, str]) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": prometheus_bin,
        "PROMETHEUS_RENDERED_CONFIG": str(tmp_path / "rendered.yml"),
        "MM2_PROMETHEUS_WEB_USER": MACHINE, "MM2_PROMETHEUS_WEB_PASSWORD": MACHINE_PASSWORD,
        "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": bcrypt_hash(MACHINE_PASSWORD),
        **{f"MM2_PROMETHEUS_PERSON_{name.upper().replace('-', '_')}_BCRYPT": value for name, value in people.items()},
    }


def _template(tmp_path, port: int) -> str:
    template = tmp_path / "prometheus.yml"
    template.write_text((PROM_DIR / "prometheus.yml").read_text().replace('"localhost:9090"', f'"localhost:{port}"'))
    (tmp_path / "rules").mkdir(exist_ok=True)
    return str(template)


@pytest.fixture
def people_prometheus(tmp_path, prometheus_bin, promtool):
    port = free_port()
    env = _env(tmp_path, promtool, prometheus_bin, {n: bcrypt_hash(p) for n, p in PEOPLE.items()})
    proc = subprocess.Popen(
        ["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={_template(tmp_path, port)}",
         f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))  # noqa: SIM115
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{url}/-/healthy", auth=(MACHINE, MACHINE_PASSWORD), timeout=2).ok:
                break
        except requests.RequestException:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "prometheus.log").read_text()[-2000:]
        time.sleep(0.5)
    yield url, tmp_path
    proc.terminate()
    proc.wait(timeout=30)


def test_each_person_signs_in_with_their_own_password_and_no_one_elses(people_prometheus):
    url, tmp = people_prometheus
    query = f"{url}/api/v1/query"
    for name, password in PEOPLE.items():
        assert requests.get(query, params={"query": "1"}, auth=(name, password), timeout=5).status_code == 200, name
    assert requests.get(query, params={"query": "1"}, auth=("alice", PEOPLE["j-smith"]), timeout=5).status_code == 401
    assert requests.get(query, params={"query": "1"}, auth=("j-smith", MACHINE_PASSWORD), timeout=5).status_code == 401
    assert requests.get(query, params={"query": "1"}, timeout=5).status_code == 401
    assert requests.get(query, params={"query": "1"}, auth=(MACHINE, MACHINE_PASSWORD), timeout=5).status_code == 200
    users = yaml.safe_load((tmp / "web.yml").read_text())["basic_auth_users"]
    assert sorted(users) == sorted([MACHINE, *PEOPLE])
    assert oct((tmp / "web.yml").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(("people", "named"), [
    ({"alice": "not-a-bcrypt-hash"}, "MM2_PROMETHEUS_PERSON_ALICE_BCRYPT is not a bcrypt hash"),
    ({"_alice": "$2y$10$" + "a" * 53}, "MM2_PROMETHEUS_PERSON__ALICE_BCRYPT: '-alice' is not a person's name"),
    ({"mm2-operator": "$2y$10$" + "a" * 53}, "'mm2-operator' is the machine login's name"),
])
def test_a_bad_person_variable_is_one_line_exit_2_before_prometheus_starts(tmp_path, promtool, people, named):
    env = _env(tmp_path, promtool, "/bin/false", {})
    env.update({f"MM2_PROMETHEUS_PERSON_{n.upper().replace('-', '_')}_BCRYPT": v for n, v in people.items()})
    r = subprocess.run(["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={_template(tmp_path, free_port())}"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert named in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "web.yml").exists()
