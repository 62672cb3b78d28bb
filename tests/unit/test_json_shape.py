"""One JSON shape: every command offering ``--output json`` prints an object with ``talked_to``, ``rows``,
``verdict`` and ``exit_code`` (msk_migrate.cliutil.JSON_SHAPE).

The click tree is walked here: a command offering --output json must be run by the scale tier
(tests/integration/test_scale.py: RUN_AT_SCALE, against the local clusters) or have its document
checked by the test named in ASSERTED_IN. A new command listed in neither fails with what to add.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import click

from msk_migrate.cliutil import JSON_SHAPE, emit_json_stream, json_shape_problems
from msk_migrate.commands.root import cli
from msk_migrate.outcome import json_document

REPO = Path(__file__).resolve().parents[2]

#: Commands tests/integration/test_scale.py runs with --output json (and checks the shape of).
RUN_AT_SCALE = {
    "local up", "local status", "local down", "connectors apply", "connectors status", "connectors restart",
    "connectors pause", "connectors resume", "connectors delete", "preflight", "offsets", "offsets verify", "lag",
    "cutover check", "rollback plan", "cleanup",
}
#: Commands too heavy or too disruptive for that tour: the test file that checks their document's shape.
ASSERTED_IN = {
    "offsets sync": "tests/integration/test_runbook_commands.py",  # needs MM2's checkpoints of a group
    "acls plan": "tests/integration/test_acls_plan.py",  # a SCRAM source with the ACL authorizer on
    "rollback apply": "tests/integration/test_runbook_commands.py",  # reverses a live flow
    "validate": "tests/validation/test_validation_cli.py",  # Spark
    "build-images": "tests/images/test_build_images.py",  # buildah, ECR
    "offsets snapshot": "tests/integration/test_runbook_commands.py",  # writes a file of the source's ends
    "rehearse": "python/msk_migrate/rehearsal/report.py",  # the whole runbook (minutes): an Outcome built there
    **{f"cutover {c}": "tests/unit/test_producer_commands.py"  # fence, gate and step outcomes built without a cluster
       for c in ("fence", "unfence", "run", "confirm", "abort", "abandon-group")},
    **{f"schemas {c}": "tests/integration/test_schemas_copy.py" for c in ("plan", "copy", "verify")},  # two registries
    "status": "tests/unit/test_status.py",  # the ledger alone (--ledger-only); with the source: tests/integration/test_topic_identity.py
    "connectors reset-topic": "tests/integration/test_topic_identity.py",  # a recreated source topic under a live flow
    "topology check": "tests/unit/test_topology_plan.py",  # offline from flow files; on clusters: tests/integration/test_consolidation.py
}


def json_commands(cmd: click.Command = cli, path: tuple[str, ...] = ()) -> list[str]:
    """Every command path of the CLI whose --output offers json."""
    out = []
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            out += json_commands(sub, (*path, name))
    if any(p.name == "output" and isinstance(p.type, click.Choice) and "json" in p.type.choices for p in cmd.params):
        out.append(" ".join(path))
    return out


def test_every_command_offering_json_output_has_its_shape_checked():
    found = json_commands()
    assert len(found) >= 20, found  # the walk reaches the nested groups
    unchecked = [c for c in found if c not in RUN_AT_SCALE and c not in ASSERTED_IN]
    assert not unchecked, (
        f"`msk-migrate {unchecked[0]}` offers --output json but nothing checks that its document is of the one shape "
        f"{JSON_SHAPE} (build it with msk_migrate.outcome.json_document): add it to RUN_AT_SCALE in "
        f"tests/unit/test_json_shape.py and an invocation to CASES in tests/integration/test_scale.py, or name the "
        f"test asserting json_shape_problems(...) on its output in ASSERTED_IN")
    stale = sorted((RUN_AT_SCALE | set(ASSERTED_IN)) - set(found))
    assert not stale, f"listed but no longer a command offering --output json: {stale}"


def test_commands_checked_elsewhere_are_checked_there():
    for command, where in ASSERTED_IN.items():
        text = (REPO / where).read_text()
        needles = ("json_document(", "Outcome(") if where.startswith("python/") else ("json_shape_problems(",)
        assert any(n in text for n in needles), \
            f"{where} does not check the JSON shape of `msk-migrate {command}` ({' or '.join(needles)} not found)"


def test_json_document_is_of_the_shape_and_converts_rows():
    class Row:
        def to_dict(self):
            return {"a": 1}

    doc = json_document({"source": "h:9092"}, [Row(), {"b": 2}], "ok", 0, extra=True)
    assert json_shape_problems(doc) == [] and doc["rows"] == [{"a": 1}, {"b": 2}] and doc["extra"] is True
    assert json_document(None, [], "nothing", 1)["talked_to"] == {}


def test_shape_problems_name_what_is_wrong():
    assert json_shape_problems([{"a": 1}]) == ["the document is a list, not an object with talked_to, rows, verdict, exit_code"]
    problems = json_shape_problems({"talked_to": {}, "rows": [1], "verdict": True})
    assert "no 'exit_code' key" in problems and "'verdict' is a bool, not a str" in problems
    assert "'rows' holds items that are not objects" in problems


def test_streamed_document_is_valid_json_of_the_shape_with_the_verdict_after_the_rows():
    seen = []

    def rows():
        for i in range(3):
            seen.append(i)
            yield {"i": i}

    buf = io.StringIO()
    with redirect_stdout(buf):
        emit_json_stream({"talked_to": {"source": "h:1"}}, rows(), lambda: {"verdict": f"{len(seen)} rows", "exit_code": 0})
    doc = json.loads(buf.getvalue())
    assert json_shape_problems(doc) == [] and doc["rows"] == [{"i": 0}, {"i": 1}, {"i": 2}] and doc["verdict"] == "3 rows"
    buf = io.StringIO()
    with redirect_stdout(buf):
        emit_json_stream({"talked_to": {}}, iter(()), lambda: {"verdict": "nothing", "exit_code": 1})
    assert json.loads(buf.getvalue())["rows"] == []


def test_no_runbook_command_checks_the_output_format_itself():
    """The renderer (msk_migrate/render.py) is the one place that tells text from JSON."""
    text = (REPO / "python/msk_migrate/commands/runbook.py").read_text()
    for needle in ('== "json"', '!= "json"', "emit_json", "json_document("):
        assert needle not in text, f"commands/runbook.py has {needle}: return an Outcome and let render() print it"


def _rendered(outcome, output: str) -> tuple[int, str, str]:
    import pytest

    from msk_migrate.render import render

    out, err = io.StringIO(), io.StringIO()
    from contextlib import redirect_stderr

    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as exc:
        render(outcome, output)
    return int(exc.value.code or 0), out.getvalue(), err.getvalue()


def test_a_streamed_outcome_in_text_holds_no_row_and_prints_the_views_its_end_sets():
    from msk_migrate.outcome import Outcome, View, col

    held: list[int] = []
    seen = {"n": 0}

    def rows():
        for i in range(10_000):
            seen["n"] += 1
            yield {"i": i}

    def end(o: Outcome) -> None:
        held.append(len(o.rows))
        o.views = [View("summary", [col("rows", "n", numeric=True)], [{"n": seen["n"]}])]

    o = Outcome("t", "nothing", 1, stream=rows(), end=end, tail=lambda: {"verdict": "ok", "exit_code": 0})
    code, out, _ = _rendered(o, "text")
    assert code == 0 and held == [0] and "10,000" in out and "summary" in out


def test_an_outcome_with_an_error_prints_its_tables_then_one_error_line_with_its_code():
    from msk_migrate.outcome import Outcome

    o = Outcome("preflight", "failed", 2, [{"check": "acl", "status": "fail"}], error="source ACLs: grant READ on topic t")
    code, out, err = _rendered(o, "json")
    doc = json.loads(out)
    assert code == 2 and json_shape_problems(doc) == [] and doc["exit_code"] == 2
    assert err.strip().splitlines() == ["error: source ACLs: grant READ on topic t"]
