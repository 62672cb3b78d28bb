"""The ledger: records and history, a second writer refused (directory and S3), files that do not parse."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.ledger import Change, LedgerUnreadable, StaleLedger, open_ledger
from msk_migrate.ledger.book import CURRENT, event_name


def test_changes_become_records_with_who_when_evidence_and_history(tmp_path):
    ledger = open_ledger(str(tmp_path), "mm2")
    view = ledger.read()
    assert view.version == 0 and not view.records
    view = ledger.append(view, [Change("topic", "orders", "replicating", wave="first", identity={"kind": "topic-id", "topic_id": "abc"})],
                         "connectors apply")
    view = ledger.append(view, [Change("group", "billing", "consumers-moved", evidence="/r/offset-certificate-billing.json"),
                                Change("topic", "orders", "fenced")], "cutover fence")
    again = open_ledger(str(tmp_path), "mm2").read()
    assert again.version == 2
    orders = again.get("topic", "orders")
    assert orders is not None and orders.state == "fenced" and orders.command == "cutover fence" and orders.version == 2
    assert orders.wave == "first" and orders.identity == {"kind": "topic-id", "topic_id": "abc"}  # kept from earlier states
    assert [h["state"] for h in orders.history] == ["replicating"] and "@" in orders.by
    billing = again.get("group", "billing")
    assert billing is not None and billing.evidence == "/r/offset-certificate-billing.json"
    assert sorted(p.name for p in (tmp_path / "events").iterdir()) == [Path(event_name(1)).name, Path(event_name(2)).name]


def test_a_state_that_does_not_exist_for_its_kind_is_refused():
    with pytest.raises(ValueError, match="not a topic state"):
        Change("topic", "orders", "abandoned")


def test_a_writer_that_read_an_older_version_is_refused_and_nothing_is_recorded(tmp_path):
    first, second = open_ledger(str(tmp_path), "mm2"), open_ledger(str(tmp_path), "mm2")
    seen_first, seen_second = first.read(), second.read()
    first.append(seen_first, [Change("topic", "orders", "fenced")], "cutover fence")
    with pytest.raises(StaleLedger) as err:
        second.ensure_latest(seen_second)
    with pytest.raises(StaleLedger) as err:
        second.append(seen_second, [Change("topic", "orders", "producers-moved")], "cutover confirm")
    assert err.value.field == f"ledger {tmp_path}" and "version 1 was written by" in err.value.message
    assert "(cutover fence)" in err.value.message and err.value.fix and err.value.fix.startswith("re-run the command")
    view = first.read()
    assert view.version == 1 and view.state_of("topic", "orders") == "fenced"


def _race(root: str, name: str, barrier, results) -> None:
    ledger = open_ledger(root, "mm2")
    view = ledger.read()
    barrier.wait()  # every writer has read version 0 before any writes
    try:
        ledger.append(view, [Change("group", name, "abandoned")], f"writer {name}")
        results.put((name, "written"))
    except StaleLedger:
        results.put((name, "refused"))


def test_writers_racing_in_separate_processes_one_wins_the_others_are_refused(tmp_path):
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(tmp_path), f"g{i}", barrier, results)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    outcomes = dict(results.get(timeout=5) for _ in procs)
    assert sorted(outcomes.values()) == ["refused", "refused", "refused", "written"]
    view = open_ledger(str(tmp_path), "mm2").read()
    (winner,) = [n for n, o in outcomes.items() if o == "written"]
    assert view.version == 1 and [r.name for r in view.of_kind("group")] == [winner]


def test_a_current_view_behind_the_events_is_brought_up_to_date_and_rebuilt_when_deleted(tmp_path):
    ledger = open_ledger(str(tmp_path), "mm2")
    v1 = ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], "a")
    stale_view = (tmp_path / CURRENT).read_text()
    ledger.append(v1, [Change("topic", "orders", "fenced")], "b")
    (tmp_path / CURRENT).write_text(stale_view)  # an earlier writer's view landed last
    assert ledger.read().state_of("topic", "orders") == "fenced"
    (tmp_path / CURRENT).unlink()
    assert ledger.read().version == 2


@pytest.mark.parametrize(("damage", "words"), [
    (lambda root: (root / CURRENT).write_text("{not json"), "current.json does not parse"),
    (lambda root: (root / CURRENT).write_text(json.dumps({"format": "other"})), "is not a msk-migrate-ledger/1 document"),
    (lambda root: (root / event_name(1)).write_text("]"), f"{event_name(1)} does not parse"),
    (lambda root: (root / event_name(1)).rename(root / event_name(7)), "out of sequence"),
])
def test_a_ledger_that_does_not_parse_is_one_line_naming_the_file_and_the_fix(tmp_path, damage, words):
    ledger = open_ledger(str(tmp_path), "mm2")
    ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], "connectors apply")
    if "current" not in words and "format" not in words:
        (tmp_path / CURRENT).unlink()  # make the reader fold the damaged event
    damage(tmp_path)
    with pytest.raises(LedgerUnreadable) as err:
        ledger.read()
    assert err.value.exit_code == 2 and words in err.value.message and err.value.fix
    assert err.value.field == f"ledger {tmp_path}"


def test_another_migrations_ledger_is_refused(tmp_path):
    ledger = open_ledger(str(tmp_path), "mm2")
    ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], "connectors apply")
    with pytest.raises(LedgerUnreadable, match="records migration 'mm2', not 'other'"):
        open_ledger(str(tmp_path), "other").read()


def test_a_file_in_place_of_the_directory_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        open_ledger(str(tmp_path / "f"), "mm2")


@pytest.fixture
def bucket(moto_url, monkeypatch, unique):
    """A fresh bucket on moto's server, reached through the default boto3 clients the ledger uses."""
    import boto3

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": moto_url, "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(key, value)
    name = f"ledger-{unique}"
    boto3.client("s3").create_bucket(Bucket=name)
    return name


def test_s3_ledger_refuses_the_second_writer_by_a_conditional_write_and_names_the_aws_identity(bucket):
    uri = f"s3://{bucket}/ledger/mm2"
    first, second = open_ledger(uri, "mm2"), open_ledger(uri, "mm2")
    seen_first, seen_second = first.read(), second.read()
    first.append(seen_first, [Change("topic", "orders", "fenced")], "cutover fence")
    with pytest.raises(StaleLedger) as err:
        second.append(seen_second, [Change("topic", "orders", "producers-moved")], "cutover confirm")
    assert err.value.field == f"ledger s3://{bucket}/ledger/mm2/" and "version 1 was written by arn:aws:" in err.value.message
    view = second.read()
    assert view.version == 1 and view.state_of("topic", "orders") == "fenced"
    rec = view.get("topic", "orders")
    assert rec is not None and rec.by.startswith("arn:aws:")  # STS GetCallerIdentity, not the OS user
    view = second.append(view, [Change("topic", "orders", "producers-moved")], "cutover confirm")
    assert open_ledger(uri, "mm2").read().state_of("topic", "orders") == "producers-moved"


def test_s3_ledger_that_does_not_parse_and_a_missing_bucket_are_one_line(bucket):
    import boto3

    boto3.client("s3").put_object(Bucket=bucket, Key="l/current.json", Body=b"{broken")
    with pytest.raises(LedgerUnreadable, match=r"current\.json does not parse"):
        open_ledger(f"s3://{bucket}/l", "mm2").read()
    with pytest.raises(UsageError, match="cannot read it") as err:
        open_ledger(f"s3://{bucket}-absent/l", "mm2").read()
    assert err.value.field == f"ledger s3://{bucket}-absent/l/"
