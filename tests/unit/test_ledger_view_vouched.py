"""current.json is a cache anyone who may append can replace: a reader trusts it only as far as the append-only
event of its version vouches for it (``view_digest``), and otherwise rebuilds the view from the events."""

from __future__ import annotations

import json

from msk_migrate.ledger import Change, open_ledger
from msk_migrate.ledger.book import CURRENT, event_name


def _two_events(tmp_path):
    ledger = open_ledger(str(tmp_path), "mm2")
    view = ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], "connectors apply")
    return ledger, ledger.append(view, [Change("group", "billing", "consumers-moved")], "offsets sync")


def test_every_event_records_the_digest_of_the_view_it_leaves(tmp_path) -> None:
    ledger, view = _two_events(tmp_path)
    event = json.loads((tmp_path / event_name(2)).read_text())
    assert event["view_digest"] == view.records_digest() == ledger.read().records_digest()


def test_a_replaced_current_view_is_not_believed_the_events_are(tmp_path) -> None:
    _, view = _two_events(tmp_path)
    forged = json.loads((tmp_path / CURRENT).read_text())
    forged["records"]["group/billing"]["state"] = "abandoned"  # as if someone declared the group would not move
    forged["records"]["group/billing"]["detail"] = "forged"
    (tmp_path / CURRENT).write_text(json.dumps(forged))
    read = open_ledger(str(tmp_path), "mm2").read()
    billing = read.get("group", "billing")
    assert billing is not None and billing.state == "consumers-moved" and billing.detail is None
    assert read.version == 2 and read.records_digest() == view.records_digest()


def test_a_view_claiming_an_older_version_with_other_records_is_rebuilt_too(tmp_path) -> None:
    _two_events(tmp_path)
    forged = json.loads((tmp_path / CURRENT).read_text())
    forged["version"] = 1
    forged["records"].pop("topic/orders")  # then folding event 2 would leave orders out
    (tmp_path / CURRENT).write_text(json.dumps(forged))
    read = open_ledger(str(tmp_path), "mm2").read()
    assert read.get("topic", "orders") is not None and read.version == 2


def test_a_view_whose_event_carries_no_digest_is_rebuilt_from_the_events(tmp_path) -> None:
    _, view = _two_events(tmp_path)
    path = tmp_path / event_name(2)
    event = json.loads(path.read_text())
    del event["view_digest"]  # a ledger written before events carried one
    path.write_text(json.dumps(event))
    forged = json.loads((tmp_path / CURRENT).read_text())
    forged["records"].pop("group/billing")
    (tmp_path / CURRENT).write_text(json.dumps(forged))
    assert open_ledger(str(tmp_path), "mm2").read().records_digest() == view.records_digest()
