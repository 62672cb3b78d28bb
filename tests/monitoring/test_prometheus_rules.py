"""Prometheus config and alert rules: promtool check config, promtool test rules, runbook links."""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from .conftest import run
from .promql import PROM_DIR, RULES_DIR, alert_rules, runbook_anchors

#: The alerts issue 6 asks for (names are part of the runbook's contract).
REQUIRED_ALERTS = {
    "KafkaConnectConnectorFailed",
    "KafkaConnectTaskFailed",
    "KafkaConnectNoWorkersUp",
    "MM2ReplicationLatencyHigh",
    "MM2RecordAgeHigh",
    "MM2ConsumerLagHigh",
    "MM2CheckpointsStalled",
    "PrometheusTargetDown",
    "KafkaConnectWorkerRebalancingTooLong",
    # issue 11: the target MSK brokers during the bulk copy
    "MSKBrokerDiskUsageHigh",
    "MSKBrokerDiskUsageCritical",
    "MSKUnderReplicatedPartitions",
    "MSKOfflinePartitions",
}


def test_promtool_check_config_accepts_the_ecs_config_and_its_rule_files(promtool):
    proc = run([promtool, "check", "config", str(PROM_DIR / "prometheus.yml")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The rule files are found through the config (rules/*.yml relative to it) and were checked too.
    assert "mm2-alerts.yml" in proc.stdout + proc.stderr


def test_promtool_check_rules(promtool):
    files = sorted(str(p) for p in RULES_DIR.glob("*.yml"))
    assert files
    proc = run([promtool, "check", "rules", *files])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_promtool_test_rules_unit_tests_pass(promtool):
    tests = sorted(str(p) for p in (RULES_DIR / "tests").glob("*.test.yml"))
    assert tests
    proc = run([promtool, "test", "rules", *tests], cwd=RULES_DIR / "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


def test_every_required_alert_exists_and_has_a_firing_unit_test():
    names = {r["alert"] for r in alert_rules()}
    assert names >= REQUIRED_ALERTS, f"missing alerts: {REQUIRED_ALERTS - names}"
    fired = set()
    for path in (RULES_DIR / "tests").glob("*.test.yml"):
        for t in yaml.safe_load(path.read_text())["tests"]:
            for case in t.get("alert_rule_test", []):
                if case.get("exp_alerts"):
                    fired.add(case["alertname"])
    assert names <= fired, f"alerts without a test where they fire: {sorted(names - fired)}"


def test_every_alert_has_severity_summary_and_a_runbook_anchor_that_exists():
    anchors = runbook_anchors()
    problems = []
    for r in alert_rules():
        name = r["alert"]
        if r.get("labels", {}).get("severity") not in {"critical", "warning"}:
            problems.append(f"{name}: severity label must be critical or warning")
        ann = r.get("annotations", {})
        if not ann.get("summary") or not ann.get("description"):
            problems.append(f"{name}: summary and description annotations are required")
        url = ann.get("runbook_url", "")
        path, _, anchor = url.partition("#")
        if path != "docs/runbooks/alerts.md" or anchor != name.lower():
            problems.append(f"{name}: runbook_url must be docs/runbooks/alerts.md#{name.lower()}, is {url!r}")
        elif anchor not in anchors:
            problems.append(f"{name}: docs/runbooks/alerts.md has no section '## {name}'")
    assert not problems, "\n".join(problems)


def test_ecs_config_discovers_connect_through_cloud_map_dns_without_a_sidecar():
    cfg = yaml.safe_load((PROM_DIR / "prometheus.yml").read_text())
    assert cfg["global"]["scrape_interval"] == "15s"
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert set(jobs) == {"kafka-connect", "prometheus", "msk-migrate-proof"}
    sd = jobs["kafka-connect"]["dns_sd_configs"]
    assert sd == [{"names": ["connect.msk-migrate.internal"], "type": "A", "port": 9404, "refresh_interval": "30s"}]
    assert jobs["prometheus"]["static_configs"] == [{"targets": ["localhost:9090"]}]
    assert cfg["rule_files"] == ["rules/*.yml"]


def _render(tmp_path: Path, promtool: str, env: dict[str, str], *, auth: bool = False):
    for f in ("prometheus.yml",):
        (tmp_path / f).write_text((PROM_DIR / f).read_text())
    (tmp_path / "rules").mkdir(exist_ok=True)
    for r in RULES_DIR.glob("*.yml"):
        (tmp_path / "rules" / r.name).write_text(r.read_text())
    out = tmp_path / "rendered.yml"
    full_env = {
        "PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": "/bin/echo",
        "PROMETHEUS_RENDERED_CONFIG": str(out),
        **({} if auth else {"MM2_PROMETHEUS_WEB_AUTH": "none"}), **env,
    }
    proc = run(["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={tmp_path / 'prometheus.yml'}",
                "--storage.tsdb.path=/prometheus", "--web.enable-lifecycle"], env=full_env)
    return proc, out


def test_entrypoint_renders_the_environment_into_the_config_and_execs_prometheus(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {
        "MM2_CONNECT_DNS_NAME": "connect.msk-migrate-prod.internal",
        "MM2_CONNECT_METRICS_PORT": "9500",
        "MM2_ENVIRONMENT": "prod",
    })
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Prometheus is exec'd with the rendered file and the remaining flags, in order.
    assert proc.stdout.split() == [f"--config.file={out}", "--storage.tsdb.path=/prometheus", "--web.enable-lifecycle"]
    cfg = yaml.safe_load(out.read_text())
    sd = cfg["scrape_configs"][0]["dns_sd_configs"][0]
    assert sd["names"] == ["connect.msk-migrate-prod.internal"] and sd["port"] == 9500
    assert cfg["global"]["external_labels"] == {"environment": "prod"}
    assert cfg["rule_files"] == [f"{tmp_path}/rules/*.yml"]
    assert "SUCCESS" in proc.stderr  # promtool checked the rendered config and its rules


def test_entrypoint_routes_alerts_to_the_configured_alertmanagers(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {"MM2_ALERTMANAGER_TARGETS": "am-1.ops.internal:9093,10.0.0.5:9093",
                                             "MM2_ALERTMANAGER_PATH_PREFIX": "/alertmanager"})
    assert proc.returncode == 0, proc.stderr
    am = yaml.safe_load(out.read_text())["alerting"]["alertmanagers"][0]
    assert am["static_configs"][0]["targets"] == ["am-1.ops.internal:9093", "10.0.0.5:9093"]
    assert am["path_prefix"] == "/alertmanager"
    proc, _ = _render(tmp_path, promtool, {"MM2_ALERTMANAGER_TARGETS": "am:9093]\nscrape_configs: []"})
    assert proc.returncode == 2 and "MM2_ALERTMANAGER_TARGETS" in proc.stderr


def test_entrypoint_without_environment_keeps_the_defaults(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {})
    assert proc.returncode == 0, proc.stderr
    sd = yaml.safe_load(out.read_text())["scrape_configs"][0]["dns_sd_configs"][0]
    assert sd["names"] == ["connect.msk-migrate.internal"] and sd["port"] == 9404


def test_entrypoint_refuses_values_that_would_break_the_config(tmp_path, promtool):
    proc, _ = _render(tmp_path, promtool, {"MM2_CONNECT_DNS_NAME": 'x"; rm -rf /'})
    assert proc.returncode == 2
    assert "not a DNS name" in proc.stderr
    proc, _ = _render(tmp_path, promtool, {"MM2_CONNECT_METRICS_PORT": "94o4"})
    assert proc.returncode == 2


#: A syntactically valid bcrypt hash (cost 10) for the entrypoint's format check; promtool checks the web config.
BCRYPT = "$2b$10$" + "N9qo8uLOickgx2ZMRZoMye" + "IjZAgcfl7p92ldGxad68LJZdL17lhWy"
BROKERS = "b-1.mig.ab12cd.c2.kafka.eu-west-1.amazonaws.com,b-2.mig.ab12cd.c2.kafka.eu-west-1.amazonaws.com"


def test_entrypoint_refuses_to_start_prometheus_without_authentication(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {}, auth=True)
    assert proc.returncode == 2 and not out.exists()
    assert "MM2_PROMETHEUS_WEB_USER" in proc.stderr and "MM2_PROMETHEUS_WEB_AUTH=none" in proc.stderr
    proc, _ = _render(tmp_path, promtool, {"MM2_PROMETHEUS_WEB_USER": "ops", "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": BCRYPT}, auth=True)
    assert proc.returncode == 2 and "go together" in proc.stderr
    proc, _ = _render(tmp_path, promtool, {"MM2_PROMETHEUS_WEB_USER": "ops", "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": "plain",
                                           "MM2_PROMETHEUS_WEB_PASSWORD": "x"}, auth=True)
    assert proc.returncode == 2 and "not a bcrypt hash" in proc.stderr


def test_entrypoint_puts_every_endpoint_behind_basic_auth_and_scrapes_itself_with_it(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {"MM2_PROMETHEUS_WEB_USER": "mm2-operator", "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": BCRYPT,
                                             "MM2_PROMETHEUS_WEB_PASSWORD": "s3cretLettersAndDigits"}, auth=True)
    assert proc.returncode == 0, proc.stderr
    web = tmp_path / "web.yml"
    assert proc.stdout.split()[:2] == [f"--config.file={out}", f"--web.config.file={web}"]
    assert yaml.safe_load(web.read_text()) == {"basic_auth_users": {"mm2-operator": BCRYPT}}
    assert oct(web.stat().st_mode & 0o777) == "0o600"
    jobs = {j["job_name"]: j for j in yaml.safe_load(out.read_text())["scrape_configs"]}
    auth = jobs["prometheus"]["basic_auth"]
    assert auth["username"] == "mm2-operator" and Path(auth["password_file"]).read_text() == "s3cretLettersAndDigits"
    assert "s3cretLettersAndDigits" not in out.read_text() + web.read_text() + proc.stdout + proc.stderr
    assert "web.yml SUCCESS" in proc.stderr  # promtool check web-config accepted it


def test_entrypoint_scrapes_every_msk_broker_on_both_open_monitoring_exporters(tmp_path, promtool):
    proc, out = _render(tmp_path, promtool, {"MM2_MSK_BROKERS": BROKERS})
    assert proc.returncode == 0, proc.stderr
    jobs = {j["job_name"]: j for j in yaml.safe_load(out.read_text())["scrape_configs"]}
    for job, port in (("msk-jmx", 11001), ("msk-node", 11002)):
        assert jobs[job]["static_configs"] == [{"targets": [f"{b}:{port}" for b in BROKERS.split(",")]}]
        (relabel,) = jobs[job]["relabel_configs"]
        assert relabel["target_label"] == "broker"
        assert re.fullmatch(relabel["regex"], f"{BROKERS.split(',')[1]}:{port}").group(1) == "b-2"
    proc, _ = _render(tmp_path, promtool, {"MM2_MSK_BROKERS": 'b-1.x:1"]\n- job_name: evil'})
    assert proc.returncode == 2 and "MM2_MSK_BROKERS" in proc.stderr
    proc, out = _render(tmp_path, promtool, {})
    assert {j["job_name"] for j in yaml.safe_load(out.read_text())["scrape_configs"]} == {"kafka-connect", "prometheus", "msk-migrate-proof"}
