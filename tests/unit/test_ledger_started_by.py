"""Every ledger event names the person who started the command (issue 42, part 4).

Inside the operator ECS task the writer's AWS identity (``by``) is the task role; the entrypoint passes the
person from the task's ``msk-migrate:started-by`` tag in ``MSK_MIGRATE_STARTED_BY`` and every event keeps
``by`` and adds ``started_by``. A local directory ledger: the event format is the store's business only.
"""

from __future__ import annotations

import json

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.ledger import Change, open_ledger
from msk_migrate.ledger.book import event_name
from msk_migrate.ledger.storage import STARTED_BY_ENV, os_identity, started_by

PERSON = "AROAEXAMPLEROLEID:alice@example.com"


def test_the_variable_name_is_the_one_the_operator_entrypoint_sets() -> None:
    assert STARTED_BY_ENV == "MSK_MIGRATE_STARTED_BY"


def test_an_event_keeps_the_writer_and_adds_the_person_who_started_the_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(STARTED_BY_ENV, PERSON)
    ledger = open_ledger(str(tmp_path), "m1")
    view = ledger.append(ledger.read(), [Change("group", "billing", "consumers-moved")], command="offsets sync")
    event = json.loads((tmp_path / event_name(1)).read_text())
    assert event["by"] == os_identity() and event["started_by"] == PERSON
    rec = view.get("group", "billing")
    assert rec is not None and (rec.by, rec.started_by) == (os_identity(), PERSON)
    # A reader folds the same record from the files (the view cache and the events).
    again = open_ledger(str(tmp_path), "m1").read().get("group", "billing")
    assert again is not None and again.started_by == PERSON


def test_the_person_of_an_earlier_state_stays_in_the_history_and_a_stale_writer_is_told_who_was_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(STARTED_BY_ENV, PERSON)
    ledger = open_ledger(str(tmp_path), "m1")
    first = ledger.read()
    view = ledger.append(first, [Change("group", "billing", "consumers-moved")], command="offsets sync")
    monkeypatch.delenv(STARTED_BY_ENV)
    laptop = open_ledger(str(tmp_path), "m1")
    view = laptop.append(view, [Change("group", "billing", "rolled-back")], command="offsets rollback")
    rec = view.get("group", "billing")
    assert rec is not None and rec.started_by is None and rec.history[-1]["started_by"] == PERSON
    with pytest.raises(UsageError) as stale:
        laptop.append(first, [Change("group", "billing", "consumers-moved")], command="offsets sync")
    assert f"started by {PERSON}" in str(stale.value)


def test_without_the_variable_an_event_has_no_person_and_the_view_keeps_its_shape(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(STARTED_BY_ENV, raising=False)
    ledger = open_ledger(str(tmp_path), "m1")
    ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], command="connectors apply")
    assert "started_by" not in json.loads((tmp_path / event_name(1)).read_text())
    view = json.loads((tmp_path / "current.json").read_text())
    assert "started_by" not in view["records"]["topic/orders"]


@pytest.mark.parametrize("value", ["alice\nbob", "a" * 257, "alice; rm -rf /", "\x1b[31malice"])
def test_a_value_that_is_not_an_aws_user_id_stops_the_command_before_the_ledger_is_read(tmp_path, monkeypatch, value: str) -> None:
    monkeypatch.setenv(STARTED_BY_ENV, value)
    with pytest.raises(UsageError) as refused:
        open_ledger(str(tmp_path), "m1")
    assert STARTED_BY_ENV in str(refused.value) and "\n" not in str(refused.value)
    assert not list(tmp_path.iterdir()), "nothing read or written"


@pytest.mark.parametrize("value", ["AIDAEXAMPLEUSERID", PERSON, "123456789012", "123456789012:federated-bob", "  AIDAX  "])
def test_every_form_of_aws_userid_is_accepted(value: str) -> None:
    assert started_by({STARTED_BY_ENV: value}) == value.strip()
    assert started_by({STARTED_BY_ENV: ""}) is None and started_by({}) is None
