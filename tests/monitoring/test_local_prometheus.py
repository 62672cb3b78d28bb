"""msk_migrate.local.prometheus with a real Prometheus and a stand-in /metrics endpoint (no Kafka).

Shows the mechanics the live test and `msk-migrate local up --with-monitoring` rely on: the local
config derived from prometheus/prometheus.yml passes promtool, Prometheus starts on a free 127.0.0.1
port, scrapes file_sd targets (changeable without restart), evaluates the real rule files, and with
``rules_for_override`` an alert goes pending -> firing -> resolved within seconds.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from msk_migrate.local import prometheus as prom

from .promql import RULES_DIR


class FakeWorker:
    """Serves a Prometheus text exposition that the test can change."""

    def __init__(self):
        self.body = ""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                data = outer.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def set_task_state(self, state: str):
        self.body = (
            "# TYPE kafka_connect_task_status gauge\n"
            f'kafka_connect_task_status{{connector="mm2-source",task="0",status="{state}"}} 1\n'
        )

    def close(self):
        self.server.shutdown()


@pytest.fixture
def fake_worker():
    w = FakeWorker()
    yield w
    w.close()


def _wait(fn, timeout, what):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def test_local_config_reuses_the_ecs_jobs_and_rule_files(tmp_path, promtool):
    cfg = prom.local_config(tmp_path, 9999)
    assert [j["job_name"] for j in cfg["scrape_configs"]] == ["kafka-connect", "msk-migrate-proof", "prometheus"]
    connect = cfg["scrape_configs"][0]
    assert "dns_sd_configs" not in connect and connect["file_sd_configs"][0]["files"] == [str(tmp_path / "targets" / "kafka-connect.json")]
    assert cfg["rule_files"] == [str(RULES_DIR / "*.yml")]
    assert cfg["global"]["scrape_interval"] == "2s" and cfg["global"]["evaluation_interval"] == "2s"
    path = prom.write_local_config(tmp_path, 9999)
    prom.set_targets(tmp_path, ["127.0.0.1:1"])
    assert run_ok([promtool, "check", "config", str(path)])


def run_ok(cmd):
    from .conftest import run

    proc = run(cmd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return True


def test_for_override_copies_change_only_the_for_clauses(tmp_path):
    (copy,) = prom.override_for([str(RULES_DIR / "mm2-alerts.yml")], tmp_path, "3s")
    original = yaml.safe_load((RULES_DIR / "mm2-alerts.yml").read_text())
    copied = yaml.safe_load(Path(copy).read_text())
    for g_orig, g_copy in zip(original["groups"], copied["groups"], strict=False):
        for r_orig, r_copy in zip(g_orig["rules"], g_copy["rules"], strict=False):
            assert r_copy.pop("for") == "3s"
            r_orig.pop("for")
            assert r_copy == r_orig


def test_missing_prometheus_names_the_setup_script(monkeypatch):
    monkeypatch.setattr(prom.Path, "exists", lambda self: False)
    monkeypatch.setattr(prom.shutil, "which", lambda name: None)
    with pytest.raises(Exception, match=r"scripts/setup-monitoring\.sh"):
        prom.prometheus_binary()


def test_prometheus_scrapes_and_a_task_failed_alert_fires_then_resolves(tmp_path, prometheus_bin, fake_worker):
    fake_worker.set_task_state("running")
    started = prom.start_prometheus([f"127.0.0.1:{fake_worker.port}"], tmp_path / "prom", rules_for_override="4s")
    try:
        assert started.url.startswith("http://127.0.0.1:") and started.record.alive()
        _wait(lambda: prom.query(started.url, 'kafka_connect_task_status{status="running"}'), 20, "first scrape")
        up = prom.query(started.url, 'up{job="kafka-connect"}')
        assert up[0]["metric"]["instance"] == f"127.0.0.1:{fake_worker.port}" and up[0]["value"][1] == "1"

        fake_worker.set_task_state("failed")
        seen = set()

        def alert_state():
            for a in prom.query(started.url, 'ALERTS{alertname="KafkaConnectTaskFailed"}'):
                seen.add(a["metric"]["alertstate"])
            return "firing" in seen

        _wait(alert_state, 30, "KafkaConnectTaskFailed firing")
        assert "pending" in seen  # for: 4s with 2s evaluations: pending first, then firing
        fake_worker.set_task_state("running")
        _wait(lambda: not prom.query(started.url, 'ALERTS{alertname="KafkaConnectTaskFailed"}'), 30, "alert resolved")

        # Targets change without a restart (file_sd): an unreachable one shows up as down.
        prom.set_targets(tmp_path / "prom", [f"127.0.0.1:{fake_worker.port}", "127.0.0.1:1"])
        _wait(lambda: prom.query(started.url, 'up{instance="127.0.0.1:1"} == 0'), 30, "second target scraped")
    finally:
        prom.stop_prometheus(started)
    assert not started.record.alive()
