"""The local harness is sized by settings, not code edits: broker heap (argument, option or environment)
reaches the -Xmx every broker is launched with; the worker heap reaches the worker spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.local import harness
from msk_migrate.local.broker import BrokerSpec, _java_cmd
from msk_migrate.local.cluster import ClusterOps
from msk_migrate.local.shape import DEFAULT_HEAP


@pytest.fixture(autouse=True)
def _no_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broker classpath is Maven's to resolve (a JVM build, minutes on a fresh machine) and says nothing
    about the heap: these tests take an empty one, so the unit tier never starts Maven."""
    monkeypatch.setattr("msk_migrate.local.cluster.broker_classpath", lambda shape: "")


def _launch_heaps(env: harness.LocalEnvironment) -> dict[str, set[str]]:
    """The -Xmx each broker of each side would be launched with (the specs the cluster operations build)."""
    state = env.state()
    out: dict[str, set[str]] = {}
    for role in ("source", "target"):
        ops: ClusterOps = env._ops(state, role)
        out[role] = {next(a for a in _java_cmd(ops._spec(n), "kafka.Kafka") if a.startswith("-Xmx"))
                     for n in ops.layout.nodes}
    return out


def test_broker_heap_argument_sizes_both_brokers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", raising=False)
    env = harness.LocalEnvironment(tmp_path, with_connect=False, broker_heap="2g")
    assert _launch_heaps(env) == {"source": {"-Xmx2g"}, "target": {"-Xmx2g"}}


def test_broker_heap_comes_from_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", "1536m")
    env = harness.LocalEnvironment(tmp_path, with_connect=False)
    assert _launch_heaps(env) == {"source": {"-Xmx1536m"}, "target": {"-Xmx1536m"}}


def test_broker_heap_default_is_unchanged_without_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MSK_MIGRATE_LOCAL_BROKER_HEAP", raising=False)
    env = harness.LocalEnvironment(tmp_path, with_connect=False)
    assert _launch_heaps(env) == {"source": {f"-Xmx{DEFAULT_HEAP}"}, "target": {f"-Xmx{DEFAULT_HEAP}"}}
    assert BrokerSpec("source", "3.9.2", "", tmp_path, True).heap == DEFAULT_HEAP
