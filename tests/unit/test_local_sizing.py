"""The local harness is sized by settings, not code edits: broker heap (argument or environment) reaches
the broker's -Xmx, the worker heap reaches the worker spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.local import harness
from msk_migrate.local.broker import BrokerSpec, _java_cmd
from msk_migrate.local.procs import ProcRecord


def _started_heaps(monkeypatch: pytest.MonkeyPatch, env: harness.LocalEnvironment) -> dict[str, str]:
    """Run ``up()`` with broker start-up stubbed out; the -Xmx each broker would have been launched with."""
    heaps: dict[str, str] = {}

    def fake_start(spec: BrokerSpec) -> tuple[ProcRecord, int]:
        xmx = next(a for a in _java_cmd(spec, "kafka.Kafka") if a.startswith("-Xmx"))
        heaps[spec.role] = xmx
        return ProcRecord(name=f"{spec.role}-broker", pid=1, started=0, log=""), 1

    monkeypatch.setattr(harness, "start_broker", fake_start)
    monkeypatch.setattr(harness, "wait_broker_ready", lambda rec, port: None)
    monkeypatch.setattr(harness, "classpath", lambda name: "")
    monkeypatch.setattr(harness.LocalEnvironment, "status", lambda self: {})
    env.up()
    return heaps


def test_broker_heap_argument_sizes_both_brokers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", raising=False)
    env = harness.LocalEnvironment(tmp_path, with_connect=False, broker_heap="2g")
    assert _started_heaps(monkeypatch, env) == {"source": "-Xmx2g", "target": "-Xmx2g"}


def test_broker_heap_comes_from_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", "1536m")
    env = harness.LocalEnvironment(tmp_path, with_connect=False)
    assert _started_heaps(monkeypatch, env) == {"source": "-Xmx1536m", "target": "-Xmx1536m"}


def test_broker_heap_default_is_unchanged_without_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", raising=False)
    env = harness.LocalEnvironment(tmp_path, with_connect=False)
    default = BrokerSpec.__dataclass_fields__["heap"].default
    assert _started_heaps(monkeypatch, env) == {"source": f"-Xmx{default}", "target": f"-Xmx{default}"}
