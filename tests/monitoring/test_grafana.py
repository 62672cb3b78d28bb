"""Grafana dashboards as code: checked-in JSON == generator output; panels, units, variables, provisioning."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from .conftest import run
from .promql import DASHBOARD_DIR, GRAFANA_DIR, MONITORING_DOC, REPO, alert_rules, dashboard_queries, generator

DASHBOARDS = ["mm2-replication.json", "connect-workers.json", "msk-brokers.json"]


def _load(name):
    return json.loads((DASHBOARD_DIR / name).read_text())


def test_checked_in_json_equals_the_generator_output():
    rendered = generator().render()
    assert sorted(rendered) == sorted(p.name for p in DASHBOARD_DIR.glob("*.json"))
    stale = [n for n, text in rendered.items() if (DASHBOARD_DIR / n).read_text() != text]
    assert not stale, f"out of date (run: python grafana/generate.py): {stale}"


def test_generator_check_mode_reports_a_stale_file(tmp_path, capsys):
    gen = generator()
    assert gen.main(["--out", str(tmp_path)]) == 0
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "mm2-replication.json").write_text("{}\n")
    capsys.readouterr()
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1 and "out of date" in capsys.readouterr().err


@pytest.mark.parametrize("name", DASHBOARDS)
def test_dashboard_structure(name):
    d = _load(name)
    assert d["uid"].startswith("msk-migrate-") and d["editable"] is False
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    # No two panels overlap on the 24-column grid.
    cells = set()
    for p in d["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p['title']} overlaps another panel"
                cells.add((x, y))
    for p in d["panels"]:
        if p["type"] == "row":
            continue
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p.get("description"), f"{p['title']}: no description"
        assert p["targets"], p["title"]
        if p["type"] in ("timeseries", "stat"):
            assert p["fieldConfig"]["defaults"].get("unit"), f"{p['title']}: no unit"


def test_units_match_what_the_panels_show():
    units = {}
    for name in DASHBOARDS:
        for p in _load(name)["panels"]:
            if p["type"] in ("timeseries", "stat"):
                units[p["title"]] = p["fieldConfig"]["defaults"]["unit"]
    for title, unit in units.items():
        t = title.lower()
        if "latency" in t or "record age" in t or "duration" in t or "time since" in t:
            assert unit == "s", title
        if "bytes replicated" in t:
            assert unit == "Bps", title
        if "per second" in t or "records/s" in t:
            assert unit in ("cps", "Bps"), title
        if "heap" in t or "non-heap" in t:
            assert unit == "bytes", title
        if t.endswith("lag") or "lag by" in t or "lag, top" in t:
            assert unit == "short", title


def test_required_panels_and_template_variables_exist():
    titles = " | ".join(p["title"].lower() for n in DASHBOARDS for p in _load(n)["panels"])
    for needle in ["replication latency", "record age", "records replicated per second", "bytes replicated",
                   "consumer lag", "checkpoint latency", "connector state", "task state", "rebalanc",
                   "heap", "gc time", "workers up"]:
        assert needle in titles, f"no panel about {needle!r}"
    replication = {v["name"]: v for v in _load("mm2-replication.json")["templating"]["list"]}
    assert {"datasource", "topic", "connector"} <= set(replication)
    for var in ("topic", "connector"):
        assert replication[var]["includeAll"] and replication[var]["multi"] and replication[var]["allValue"] == ".*"
    workers = {v["name"] for v in _load("connect-workers.json")["templating"]["list"]}
    assert {"datasource", "instance", "connector"} <= workers
    # Every query that can be filtered by the variables is.
    for q in dashboard_queries():
        if "kafka_connect_mirror_source_records_total" in q.expr or "replication_latency" in q.expr:
            assert '$topic' in q.expr, q.where


def test_every_panel_query_is_valid_promql(tmp_path, promtool):
    """promtool parses each query (with variables filled in) as a recording rule expression."""
    rules = [{"record": f"panel:q{i}", "expr": q.concrete()} for i, q in enumerate(dashboard_queries())]
    path = tmp_path / "panels.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "panels", "rules": rules}]}))
    proc = run([promtool, "check", "rules", str(path)])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_event_only_panels_are_documented():
    doc = MONITORING_DOC.read_text()
    for name, titles in generator().event_only_panels().items():
        for t in titles:
            assert t in doc, f"event-only panel {t!r} of {name} is not listed in docs/monitoring.md"


def test_provisioning_points_at_the_generated_dashboards_and_the_prometheus_datasource():
    ds = yaml.safe_load((GRAFANA_DIR / "provisioning" / "datasources" / "prometheus.yaml").read_text())
    (prom,) = ds["datasources"]
    assert prom["type"] == "prometheus" and prom["uid"] == generator().DATASOURCE_UID
    assert prom["url"] == "${PROMETHEUS_URL}" and prom["editable"] is False
    # Prometheus refuses anonymous requests: the datasource logs in with the generated credentials.
    assert prom["basicAuth"] is True and prom["basicAuthUser"] == "${PROMETHEUS_BASIC_AUTH_USER}"
    # Prometheus serves HTTPS from the internal CA; Grafana trusts only the CA its task's init container wrote.
    assert prom["secureJsonData"] == {"basicAuthPassword": "${PROMETHEUS_BASIC_AUTH_PASSWORD}",
                                      "tlsCACert": "$__file{/run/serving-cert/tls/ca.pem}"}
    assert prom["jsonData"]["tlsAuthWithCACert"] is True and "tlsSkipVerify" not in prom["jsonData"]
    assert "basicAuthPassword" not in prom.get("jsonData", {}), "the password belongs in secureJsonData only"
    dash = yaml.safe_load((GRAFANA_DIR / "provisioning" / "dashboards" / "msk-migrate.yaml").read_text())
    (provider,) = dash["providers"]
    assert provider["type"] == "file" and provider["allowUiUpdates"] is False
    path = provider["options"]["path"]
    dockerfile = REPO / "images" / "grafana" / "Dockerfile"
    if dockerfile.exists():  # the image copies the generated JSON where the provider looks
        assert re.search(rf"COPY\s+grafana/dashboards/\S*\s+{re.escape(path)}/?", dockerfile.read_text()), path


def test_msk_dashboard_watches_disks_and_partitions_with_the_alert_rules_metrics():
    """The MSK panels use the metrics the MSK alert rules use (same names, same filesystem filter)."""
    d = _load("msk-brokers.json")
    exprs = {p["title"]: p["targets"][0]["expr"] for p in d["panels"] if p["type"] != "row"}
    rules = {r["alert"]: r["expr"] for r in alert_rules()}
    assert 'name="OfflinePartitionsCount"' in exprs["Offline partitions"] and 'name="OfflinePartitionsCount"' in rules["MSKOfflinePartitions"]
    assert 'name="UnderReplicatedPartitions"' in exprs["Under-replicated partitions"]
    assert 'name="UnderReplicatedPartitions"' in rules["MSKUnderReplicatedPartitions"]
    fs_filter = 'fstype!~"tmpfs|devtmpfs|overlay|squashfs|rootfs"'
    assert fs_filter in exprs["Disk usage"] and fs_filter in rules["MSKBrokerDiskUsageHigh"]
    assert {v["name"] for v in d["templating"]["list"]} == {"datasource", "broker"}
    msk_panels = [q for q in dashboard_queries() if q.dashboard == "msk-brokers.json"]
    assert msk_panels and all(q.needs_msk for q in msk_panels)
    assert not [q for q in dashboard_queries() if q.dashboard != "msk-brokers.json" and q.needs_msk]
