"""The Protobuf demo's packages (protobuf, grpcio-tools: the ``rehearsal`` extra) stay out of the product: only
:mod:`msk_migrate.rehearsal.protobuf_demo` names them (so neither the Spark job nor the operator image needs them),
and a rehearsal without them stops before anything starts, in one line naming the extra, exit 2."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.rehearsal import protobuf_demo

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "msk_migrate"
FORBIDDEN = ("google.protobuf", "grpc", "grpc_tools", "confluent_kafka.schema_registry.protobuf")
ALLOWED = PACKAGE / "rehearsal" / "protobuf_demo.py"

pytestmark = pytest.mark.unit


def _named(tree: ast.AST) -> set[str]:
    """Modules a file imports, statically or through a call with the module's name as a string."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call):
            out |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return out


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def test_only_the_rehearsals_protobuf_demo_names_protobuf_or_protoc() -> None:
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if path == ALLOWED or not ("protobuf" in text or "grpc" in text):  # parse only the files that could name them
            continue
        hits = sorted(m for m in _named(ast.parse(text)) if _forbidden(m))
        if hits:
            offenders[str(path.relative_to(PACKAGE))] = hits
    assert offenders == {}


def test_a_missing_extra_is_one_line_naming_it_and_the_fix(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "grpc_tools.protoc", None)  # what an import of a missing module raises
    with pytest.raises(UsageError) as caught:
        protobuf_demo.require()
    line = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in line
    assert "`rehearsal` extra" in line and "grpc_tools.protoc" in line and "pip install -e '.[rehearsal]'" in line, line


def test_msk_migrate_rehearse_without_the_extra_exits_2_before_anything_starts(monkeypatch, capfd) -> None:
    from msk_migrate.cliutil import run_cli
    from msk_migrate.commands.root import cli
    from msk_migrate.rehearsal import run

    def started(*_a, **_k):
        raise AssertionError("the environment was started")

    monkeypatch.setattr(run, "LocalEnvironment", started)
    monkeypatch.setitem(sys.modules, "google.protobuf.message_factory", None)
    assert run_cli(cli, ["rehearse", "--no-monitoring"], "msk-migrate") == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "`rehearsal` extra" in err[0], err
