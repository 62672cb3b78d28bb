"""An offline model of how jmx_prometheus_javaagent 1.0.1 applies a rules file to MBean attributes.

Used by the unit tests to check the rules against MBean attributes recorded from real Kafka Connect
3.9.2 and 4.1.2 workers (tests/monitoring/data/) without starting a JVM. It follows the agent's
semantics: each rule's pattern is matched as ``^.*(?:PATTERN).*$`` against
``domain<key=value, ...><>attribute: value``; the first matching rule decides; a non-numeric
attribute yields a sample only when the rule sets ``value``; names and label names go through the
agent's safe-name conversion (illegal characters -> ``_``, runs of ``_`` collapsed) and lowercasing.
The live tests (test_live_monitoring.py) check the real agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

_GROUP_REF = re.compile(r"\$(\d+)")


def _java_replace(template: str, m: re.Match) -> str:
    return _GROUP_REF.sub(lambda g: m.group(int(g.group(1))) or "", template)


def safe_name(name: str) -> str:
    out, prev_us = [], False
    for ch in name:
        legal = ch.isascii() and (ch.isalnum() or ch == ":")
        if not legal or ch == "_":
            if not prev_us:
                out.append("_")
            prev_us = True
        else:
            out.append(ch)
            prev_us = False
    return "".join(out)


@dataclass(frozen=True)
class Sample:
    name: str
    labels: tuple[tuple[str, str], ...]

    @property
    def label_names(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.labels)

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


class Rules:
    def __init__(self, path: Path):
        self.config = yaml.safe_load(Path(path).read_text())
        self.lower_names = bool(self.config.get("lowercaseOutputName"))
        self.lower_labels = bool(self.config.get("lowercaseOutputLabelNames"))
        self.includes = [self._parse_object_name(p) for p in self.config.get("includeObjectNames", [])]
        self.rules = []
        for r in self.config["rules"]:
            self.rules.append((re.compile(r"^.*(?:" + r["pattern"] + r").*$"), r))

    @staticmethod
    def _parse_object_name(pattern: str) -> tuple[str, dict[str, str]]:
        domain, _, props = pattern.partition(":")
        keys = dict(p.split("=", 1) for p in props.split(",") if p and p != "*")
        return domain, keys

    def included(self, line: str) -> bool:
        if not self.includes:
            return True
        domain, _, rest = line.partition("<")
        props = dict(kv.split("=", 1) for kv in rest.split("><>", 1)[0].split(", ") if "=" in kv)
        return any(d == domain and all(props.get(k) == v for k, v in keys.items()) for d, keys in self.includes)

    def apply(self, line: str) -> Sample | None:
        """The sample the agent exports for one pattern-input line, or None."""
        if not self.included(line):
            return None
        value = line.rsplit(": ", 1)[1]
        for pattern, rule in self.rules:
            m = pattern.match(line)
            if not m:
                continue
            if "value" not in rule:
                try:
                    float(value)
                except ValueError:
                    return None  # a string attribute without a constant value: not exported
            name = safe_name(_java_replace(rule["name"], m))
            if self.lower_names:
                name = name.lower()
            labels = []
            for k, v in (rule.get("labels") or {}).items():
                key = safe_name(k).lower() if self.lower_labels else safe_name(k)
                labels.append((key, _java_replace(str(v), m)))
            return Sample(name, tuple(sorted(labels)))
        return None

    def apply_all(self, lines) -> list[Sample]:
        out = []
        for line in lines:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            s = self.apply(line)
            if s is not None:
                out.append(s)
        return out


def recorded(path: Path) -> list[str]:
    return [ln for ln in Path(path).read_text().splitlines() if ln and not ln.startswith("#")]
