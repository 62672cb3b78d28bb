"""Helpers shared by the monitoring tests: dashboard queries, alert rules, metric names in PromQL."""

from __future__ import annotations

import copy
import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PROM_DIR = REPO / "prometheus"
RULES_DIR = PROM_DIR / "rules"
JMX_RULES = PROM_DIR / "jmx-exporter" / "kafka-connect-mm2.yaml"
GRAFANA_DIR = REPO / "grafana"
DASHBOARD_DIR = GRAFANA_DIR / "dashboards"
RUNBOOK = REPO / "docs" / "runbooks" / "alerts.md"
MONITORING_DOC = REPO / "docs" / "monitoring.md"

#: Grafana's built-in variables -> values for running a panel query against Prometheus directly.
BUILTINS = {"$__rate_interval": "30s", "$__interval": "10s", "$__range": "5m"}


def generator():
    """grafana/generate.py as a module."""
    sys.path.insert(0, str(GRAFANA_DIR))
    try:
        import generate  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(GRAFANA_DIR))
    return generate


@dataclass(frozen=True)
class PanelQuery:
    dashboard: str
    panel: str
    ref: str
    expr: str
    event_only: bool
    needs_msk: bool = False  #: fed by MSK open monitoring: no data in the local rehearsal
    needs_follower: bool = False  #: fed by the proof follower's endpoint (tests/monitoring/test_follow_monitoring.py)

    @property
    def where(self) -> str:
        return f"{self.dashboard}: '{self.panel}' [{self.ref}]"

    def concrete(self) -> str:
        """The expression with template variables set to All (.*) and Grafana built-ins filled in."""
        e = self.expr
        for k, v in BUILTINS.items():
            e = e.replace(k, v)
        return re.sub(r"\$\{?(\w+)\}?", ".*", e)


def dashboard_queries() -> list[PanelQuery]:
    out = []
    for path in sorted(DASHBOARD_DIR.glob("*.json")):
        dash = json.loads(path.read_text())
        for p in dash["panels"]:
            event_only = "Event-only:" in p.get("description", "")
            needs_msk = "Source: MSK open monitoring" in p.get("description", "")
            needs_follower = "Source: the proof follower" in p.get("description", "")
            for t in p.get("targets", []):
                out.append(PanelQuery(path.name, p["title"], t["refId"], t["expr"], event_only, needs_msk, needs_follower))
    return out


def alert_rules(only: str | None = None) -> list[dict]:
    """The alert rules of the rule files (``only``: a glob of them), a fresh copy per call."""
    return copy.deepcopy(_alert_rules(only))


@functools.cache
def _alert_rules(only: str | None) -> list[dict]:
    rules = []
    for path in sorted(RULES_DIR.glob(only or "*.yml")):
        for g in yaml.safe_load(path.read_text())["groups"]:
            rules += [r for r in g["rules"] if "alert" in r]
    return rules


_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
    "sum", "min", "max", "avg", "count", "topk", "bottomk", "quantile", "stddev", "stdvar", "count_values", "group",
    "rate", "irate", "increase", "delta", "idelta", "deriv", "absent", "absent_over_time", "vector", "scalar",
    "histogram_quantile", "label_replace", "label_join", "time", "clamp_min", "clamp_max", "abs", "changes",
    "resets", "avg_over_time", "max_over_time", "min_over_time", "sum_over_time", "last_over_time", "inf", "nan",
}


def metric_names(expr: str) -> set[str]:
    """Metric names used by a PromQL expression (selectors), without label names, functions, keywords."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)           # string literals
    e = re.sub(r"\{[^}]*\}", " ", e)                          # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                         # range selectors
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)  # label lists
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word = m.group(0)
        following = e[m.end():].lstrip()[:1]
        if word.lower() in _KEYWORDS or following == "(":
            continue
        names.add(word)
    return names


def github_anchor(heading: str) -> str:
    """The anchor GitHub generates for a Markdown heading."""
    a = heading.strip().lower()
    a = re.sub(r"[^\w\- ]", "", a)
    return a.replace(" ", "-")


def runbook_anchors() -> set[str]:
    return {github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", RUNBOOK.read_text(), re.M)}
