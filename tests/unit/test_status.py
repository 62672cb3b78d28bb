"""`msk-migrate status` over a ledger (no cluster: --ledger-only) and the estate rows over a wave plan."""

from __future__ import annotations

import json

import pytest

from msk_migrate.cliutil import json_shape_problems, run_cli
from msk_migrate.commands.root import cli
from msk_migrate.ledger import Change, open_ledger
from msk_migrate.ledger.records import LedgerView
from msk_migrate.runbook.estate import estate_rows
from msk_migrate.runbook.waves import GroupWaves, WavePlan

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
    ledger = open_ledger(str(tmp_path / "lab-ledger"), "lab")
    view = ledger.append(ledger.read(), [Change("topic", "orders", "replicating", wave="first")], "connectors apply")
    ledger.append(view, [Change("group", "billing", "consumers-moved", evidence="/certs/offset-certificate-billing.json", wave="first"),
                         Change("topic", "payments", "fenced", wave="second")], "offsets sync")
    return path


def _run(argv, capfd):
    code = run_cli(cli, argv, "msk-migrate")
    out, err = capfd.readouterr()
    return code, out, err


def test_status_json_is_of_the_one_shape_with_every_record_and_its_evidence(flow_file, capfd):
    code, out, _ = _run(["status", "--config", str(flow_file), "--ledger-only", "--output", "json"], capfd)
    doc = json.loads(out)
    assert code == 0 and doc["exit_code"] == 0 and not json_shape_problems(doc)
    assert doc["ledger"] == str(flow_file.parent / "lab-ledger") and doc["ledger_version"] == 2
    rows = {(r["kind"], r["name"]): r for r in doc["rows"]}
    assert rows["group", "billing"]["state"] == "consumers-moved"
    assert rows["group", "billing"]["evidence"] == "/certs/offset-certificate-billing.json"
    assert rows["topic", "orders"]["command"] == "connectors apply" and "@" in rows["topic", "orders"]["by"]
    assert doc["verdict"] == "2 topic(s): 1 fenced, 1 replicating; 1 group(s): 1 consumers-moved"
    assert (flow_file.parent / "lab-ledger" / "status.html").read_text().count("<tr>") == 4  # header + 3 records


def test_status_of_one_wave_shows_that_wave_and_its_page(flow_file, capfd):
    code, out, _ = _run(["status", "--config", str(flow_file), "--ledger-only", "--wave", "second"], capfd)
    assert code == 0 and "payments" in out and "billing" not in out and "status-second.html" in out


def test_status_of_nothing_is_not_a_pass_and_an_unknown_wave_is_one_line(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("MSK_MIGRATE_LEDGER", raising=False)
    (tmp_path / "lab.yaml").write_text(FLOW)
    code, out, _ = _run(["status", "--config", str(tmp_path / "lab.yaml"), "--ledger-only", "--output", "json"], capfd)
    assert code == 1 and json.loads(out)["verdict"].startswith("nothing to show")
    code, _, err = _run(["status", "--config", str(tmp_path / "lab.yaml"), "--ledger-only", "--wave", "third"], capfd)
    assert code == 2 and err.strip() == "error: --wave: no wave 'third' in migration.waves (waves: first, second) (fix: pass one of: first, second)"


def test_estate_lists_unrecorded_topics_groups_still_on_the_source_and_groups_moving_with_a_later_wave(tmp_path):
    ledger = open_ledger(str(tmp_path), "lab")
    view: LedgerView = ledger.append(ledger.read(), [Change("topic", "orders", "producers-moved", wave="first"),
                                                     Change("topic", "gone", "cleaned-up", wave="first")], "cutover confirm")
    plan = WavePlan(["first", "second"], {"orders": "first", "payments": "second", "audit": None},
                    {"billing": GroupWaves("billing", ["orders", "payments"], ["first", "second"], "second"),
                     "audit-reader": GroupWaves("audit-reader", ["audit"], [], None)})
    rows = {(r.kind, r.name): r for r in estate_rows(view, plan, None)}
    assert rows["topic", "payments"].state == "unrecorded" and rows["topic", "audit"].wave is None
    assert rows["topic", "gone"].note == "not on the source now"
    assert rows["group", "billing"].state == "on-source" and rows["group", "billing"].wave == "second"
    assert rows["group", "billing"].note == "reads waves first, second: moves with second, the later"
    first = {(r.kind, r.name) for r in estate_rows(view, plan, "first")}
    assert first == {("topic", "orders"), ("topic", "gone")}  # billing moves with the second wave
    assert ("group", "billing") in {(r.kind, r.name) for r in estate_rows(view, plan, "second")}
