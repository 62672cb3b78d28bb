"""Where the follower's proof of a topic ends: the fence its producers moved behind, read from the ledger."""

from __future__ import annotations

import json

from msk_migrate.ledger import Change, open_ledger
from msk_migrate.validation.follow.fences import fenced_ends


def _fence(tmp_path, topic: str, ends: dict[int, int]):
    doc = tmp_path / f"fence-{topic}.json"
    doc.write_text(json.dumps({"kind": "msk-migrate fence", "fenced_end_offsets": {f"{topic}[{p}]": e for p, e in ends.items()}}))
    return str(doc)


def test_no_ledger_or_no_fence_ends_nothing(tmp_path) -> None:
    assert fenced_ends(None, "m") == {}
    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], "connectors apply")
    assert fenced_ends(str(tmp_path / "ledger"), "m") == {}


def test_a_fenced_topic_ends_at_its_fenced_offsets_and_keeps_them_once_its_producers_moved(tmp_path) -> None:
    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    view = ledger.append(ledger.read(), [Change("topic", "orders", "replicating"), Change("topic", "audit", "replicating")],
                         "connectors apply")
    view = ledger.append(view, [Change("topic", "orders", "fenced", evidence=_fence(tmp_path, "orders", {0: 10, 1: 7}))], "cutover fence")
    assert fenced_ends(str(tmp_path / "ledger"), "m") == {("orders", 0): 10, ("orders", 1): 7}
    ledger.append(view, [Change("topic", "orders", "producers-moved", evidence=str(tmp_path / "certificate.json"))], "cutover confirm")
    assert fenced_ends(str(tmp_path / "ledger"), "m") == {("orders", 0): 10, ("orders", 1): 7}, "from the fenced state in history"


def test_an_unfenced_topic_is_followed_again(tmp_path) -> None:
    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    view = ledger.append(ledger.read(), [Change("topic", "orders", "fenced", evidence=_fence(tmp_path, "orders", {0: 3}))], "cutover fence")
    ledger.append(view, [Change("topic", "orders", "unfenced")], "cutover unfence")
    assert fenced_ends(str(tmp_path / "ledger"), "m") == {}
