"""Proof lag on the monitoring stack: the follower's rules pass promtool's unit tests, the scrape job
and the Grafana panels are there, and a real Prometheus scrapes a follower's endpoint and fires
ProofMismatch from it."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import requests
import yaml

from msk_migrate.local.procs import free_port
from msk_migrate.validation.follow.metrics import Metrics, PartitionSample

from .conftest import run
from .promql import GRAFANA_DIR, PROM_DIR, RULES_DIR, dashboard_queries


def test_the_proof_rules_pass_their_promtool_unit_tests(promtool):
    proc = run([promtool, "test", "rules", "proof-alerts.test.yml"], cwd=RULES_DIR / "tests")
    assert proc.returncode == 0 and "SUCCESS" in proc.stdout, proc.stdout + proc.stderr


def test_the_ecs_config_has_a_scrape_job_for_the_follower():
    jobs = {j["job_name"]: j for j in yaml.safe_load((PROM_DIR / "prometheus.yml").read_text())["scrape_configs"]}
    sd = jobs["msk-migrate-proof"]["dns_sd_configs"][0]
    assert sd["port"] == 9405 and sd["type"] == "A"


def test_proof_lag_panels_sit_beside_replication_lag():
    d = json.loads((GRAFANA_DIR / "dashboards" / "mm2-replication.json").read_text())
    titles = [p["title"] for p in d["panels"]]
    lag_row = titles.index("Lag")
    next_row = next(i for i in range(lag_row + 1, len(d["panels"])) if d["panels"][i]["type"] == "row")
    in_row = titles[lag_row + 1:next_row]
    assert {"MM2 consumer lag by topic", "Proof lag by topic", "Proof lag age by topic"} <= set(in_row)
    exprs = {p["title"]: p["targets"][0]["expr"] for p in d["panels"] if p["type"] != "row"}
    assert "msk_migrate_proof_lag_records" in exprs["Proof lag by topic"] and "$topic" in exprs["Proof lag by topic"]


def test_prometheus_scrapes_the_follower_and_fires_proof_mismatch(tmp_path, prometheus_bin):
    m = Metrics()
    port = m.serve(0)
    m.publish([PartitionSample("orders", 0, 3, 1.5, 97, True, False),
               PartitionSample("orders", 1, 0, 0.0, 100, False, False)], time.time())
    prom_port = free_port()
    cfg = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
           "rule_files": [str(RULES_DIR / "proof-alerts.yml")],
           "scrape_configs": [{"job_name": "msk-migrate-proof", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.Popen([prometheus_bin, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}",
                             "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{prom_port}"

    def q(expr: str) -> list[dict]:
        try:
            return requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=5).json()["data"]["result"]
        except (requests.RequestException, ValueError, KeyError):
            return []

    try:
        deadline = time.time() + 60
        firing: list[dict] = []
        while time.time() < deadline and not firing:
            firing = q('ALERTS{alertname="ProofMismatch", alertstate="firing"}')
            time.sleep(0.5)
        assert [a["metric"]["partition"] for a in firing] == ["0"]
        lag = {r["metric"]["partition"]: r["value"][1] for r in q("msk_migrate_proof_lag_records")}
        assert lag == {"0": "3", "1": "0"}
        # Every dashboard panel fed by the follower shows data from this scrape.
        panels = [p for p in dashboard_queries() if p.needs_follower]
        assert len(panels) >= 3 and [p.where for p in panels if not q(p.concrete())] == []
    finally:
        proc.terminate()
        proc.wait(30)
        m.close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
