"""`cutover fence|unfence|run|confirm|abort|abandon-group` and `check --producers`: bad input is one line, exit 2,
before any cluster is asked (the flow's clusters here answer nothing: 127.0.0.1:9). The rollback's ledger rule
and the fence's ACL are checked without a cluster too."""

from __future__ import annotations

import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from msk_migrate.errors import UsageError
from msk_migrate.ledger import Change, open_ledger
from msk_migrate.runbook.producers import fence
from msk_migrate.runbook.rollback import topics_to_roll_back

FLOW = """\
source: {alias: source, bootstrap_servers: "127.0.0.1:9"}
target: {alias: target, bootstrap_servers: "127.0.0.1:9"}
migration: {name: lab, waves: {first: [orders], second: ["pay.*"]}}
"""


@pytest.fixture
def flow_file(tmp_path, monkeypatch):
    monkeypatch.delenv("MSK_MIGRATE_LEDGER", raising=False)
    path = tmp_path / "lab.yaml"
    path.write_text(FLOW)
    return path


@pytest.mark.parametrize("argv", [["fence"], ["unfence"], ["run"], ["confirm"], ["abort"],
                                  ["abandon-group", "--group", "g", "--reason", "gone"], ["check", "--producers"]])
def test_an_unknown_wave_is_one_line_exit_2_before_any_cluster(flow_file, capfd, argv):
    code = run_cli(cli, ["cutover", *argv, "--config", str(flow_file), "--wave", "third"], "msk-migrate")
    _, err = capfd.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "--wave" in lines[0] and "third" in lines[0] and "first, second" in lines[0], lines


def test_a_ledger_that_does_not_parse_is_refused_before_any_cluster(flow_file, capfd):
    ledger_dir = flow_file.parent / "lab-ledger"
    ledger_dir.mkdir()
    (ledger_dir / "current.json").write_text("{not json")
    code = run_cli(cli, ["cutover", "fence", "--config", str(flow_file), "--wave", "first"], "msk-migrate")
    _, err = capfd.readouterr()
    assert code == 2 and "ledger" in err and "Traceback" not in err, err


def test_check_without_group_or_producers_names_both(flow_file, capfd):
    code = run_cli(cli, ["cutover", "check", "--config", str(flow_file)], "msk-migrate")
    _, err = capfd.readouterr()
    assert code == 2 and "--group" in err and "--producers" in err, err


def test_the_fence_is_one_deny_write_for_every_principal_and_unfence_filters_exactly_it():
    b, f = fence.binding("orders"), fence.exact_filter("orders")
    assert (b.name, b.principal, b.host, b.operation.name, b.permission_type.name, b.resource_pattern_type.name) == (
        "orders", "User:*", "*", "WRITE", "DENY", "LITERAL")
    # an exact filter: no ANY/MATCH that would delete another ACL of the topic
    assert (f.name, f.principal, f.host, f.operation.name, f.permission_type.name, f.resource_pattern_type.name) == (
        "orders", "User:*", "*", "WRITE", "DENY", "LITERAL")


def test_rollback_reads_the_ledger_and_refuses_topics_whose_producers_never_moved(tmp_path):
    book = open_ledger(str(tmp_path / "ledger"), "lab")
    view = book.append(book.read(), [Change("topic", "orders", "producers-moved", wave="first"),
                                     Change("topic", "payments", "fenced", wave="second")], "cutover confirm")
    assert topics_to_roll_back(view, book.location, ["orders", "payments"], []) == ["orders"]
    with pytest.raises(UsageError, match="payments's producers never moved"):
        topics_to_roll_back(view, book.location, ["orders", "payments"], ["payments"])
    with pytest.raises(UsageError, match="no topic"):
        topics_to_roll_back(view, book.location, ["payments"], [])


def test_the_fence_outcomes_are_of_the_one_json_shape_and_never_say_fenced_without_an_authorizer():
    from msk_migrate.cliutil import json_shape_problems
    from msk_migrate.runbook.producers.fence_result import FenceResult
    from msk_migrate.runbook.producers.operations import fence_outcome
    from msk_migrate.runbook.producers.watch import Moved, WatchResult

    quiet_watch = WatchResult({("orders", 0): 5}, {("orders", 0): 5}, [], 10.0, 10.0, 10.0)
    fenced = fence_outcome("cutover fence", FenceResult(fence.FenceState("h:9", "c1", True, ["orders"], ["orders"], ["x"]),
                                                        quiet_watch, "first"), {"source": "h:9"})
    assert (fenced.verdict, fenced.exit_code) == ("fenced", 0) and not json_shape_problems(fenced.document())
    moved = Moved("orders", 0, 5, 9, "kafka-transactions.sh ...")
    writing = WatchResult({("orders", 0): 5}, {("orders", 0): 9}, [moved], 2.0, 10.0, 30.0)
    seen = fence_outcome("cutover fence", FenceResult(fence.FenceState("h:9", "c1", True, ["orders"], ["orders"]), writing, "first"), {})
    assert (seen.verdict, seen.exit_code) == ("writes-seen", 1) and "orders[0]: 4 record(s)" in " ".join(seen.notes)
    # written while the ACL reached the brokers, then quiet for the period: fenced, the partition still named
    settled = WatchResult({("orders", 0): 5}, {("orders", 0): 9}, [moved], 10.0, 10.0, 12.0)
    late = fence_outcome("cutover fence", FenceResult(fence.FenceState("h:9", "c1", True, ["orders"], ["orders"]), settled, "first"), {})
    assert (late.verdict, late.exit_code) == ("fenced", 0) and "orders[0]: 4 record(s)" in " ".join(late.notes)
    bare = fence_outcome("cutover fence", FenceResult(fence.FenceState("h:9", "c1", False, ["orders"]), quiet_watch, "first"), {})
    assert (bare.verdict, bare.exit_code) == ("cannot-fence", 1) and not json_shape_problems(bare.document())
    assert "fenced" not in bare.verdict.replace("cannot-fence", "") and bare.document()["fenced_topics"] == []


def test_a_fence_result_decides_run_on_from_its_fields_and_never_from_its_rendering():
    from msk_migrate.runbook.producers import config_fence
    from msk_migrate.runbook.producers.fence_result import FenceResult
    from msk_migrate.runbook.producers.operations import fence_notes, fence_outcome
    from msk_migrate.runbook.producers.watch import Moved, WatchResult

    quiet_watch = WatchResult({("orders", 0): 5}, {("orders", 0): 5}, [], 10.0, 10.0, 10.0)
    moved = Moved("orders", 0, 5, 9, "kafka-transactions.sh ...")
    writing = WatchResult({("orders", 0): 5}, {("orders", 0): 9}, [moved], 2.0, 10.0, 30.0)
    no_authorizer = fence.FenceState("h:9", "c1", False, ["orders"])
    # nothing can fence this source: cutover run goes on only when the watch stayed quiet (detection alone)
    assert FenceResult(no_authorizer, quiet_watch, "first").holds
    assert not FenceResult(no_authorizer, writing, "first").holds
    # a transaction open on a config-fenced topic: not fenced, never run on, both reasons told
    cfg = config_fence.ConfigFenceState(["orders"], open_transactions=["orders[0]"])
    tx = FenceResult(no_authorizer, None, "first", cfg, use_acl=False, transaction_open="nothing was changed")
    assert (tx.verdict, tx.exit_code, tx.holds, tx.mechanisms) == ("transaction-open", 1, False, [])
    notes = fence_notes(tx)
    assert notes[0].startswith("cannot fence") and "a transaction is open on orders[0]" in notes[-1], notes
    # the config fence on every topic of a source without an authorizer fences it; its evidence is told last
    on = config_fence.ConfigFenceState(["orders"], fenced=["orders"], changed=["orders"],
                                       previous={"orders": {"value": "1048588", "explicit": False}})
    res = FenceResult(no_authorizer, quiet_watch, "first", on, use_acl=False, evidence="s3://b/fence-first.json", ledger="s3://b/l")
    assert (res.verdict, res.holds, res.mechanisms) == ("fenced", True, ["config"])
    o = fence_outcome("cutover fence", res, {})
    assert o.verdict == "fenced" and o.notes[-1].endswith("evidence s3://b/fence-first.json") and o.extra["fence"] == ["config"]
