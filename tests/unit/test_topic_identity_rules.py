"""Topic identity rules that need no cluster: positions past the source's end, identities compared, the fix."""

from __future__ import annotations

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.ledger import Change, open_ledger
from msk_migrate.ledger.identity import _compare, check_identity, refuse_changed, replicating_changes


def test_mm2_position_past_the_source_end_is_a_recreated_topic_without_any_ledger():
    changed = check_identity(None, ["orders", "payments"], None, positions={("orders", 1): 500, ("payments", 0): 10},
                             ends={("orders", 1): 100, ("payments", 0): 10})
    assert [c.topic for c in changed] == ["orders"]
    assert "position 500 on partition 1 is past the source's end offset 100" in changed[0].why


def test_refusal_is_one_usage_error_naming_the_topic_the_others_and_the_reset_command():
    with pytest.raises(UsageError) as err:
        refuse_changed(None, ["a", "b"], None, {("a", 0): 9, ("b", 0): 9}, {("a", 0): 1, ("b", 0): 2}, "mm2-source")
    assert err.value.field == "topic a" and "(and 1 more: b)" in err.value.message
    assert err.value.fix and "msk-migrate connectors reset-topic --topic a --topic b" in err.value.fix


@pytest.mark.parametrize(("recorded", "now", "words"), [
    ({"kind": "topic-id", "topic_id": "X", "partitions": 3}, {"kind": "topic-id", "topic_id": "Y", "partitions": 3}, "topic id is Y"),
    ({"kind": "topic-id", "topic_id": "X", "partitions": 3}, {"kind": "topic-id", "topic_id": "X", "partitions": 2}, "fewer than the 3"),
    ({"kind": "first-record", "partitions": 3, "offset": 0}, {"kind": "first-record", "partitions": 1, "offset": 0}, "fewer than the 3"),
])
def test_identities_that_differ_say_why(recorded, now, words):
    why = _compare(recorded, now)
    assert why is not None and words in why


def test_same_identity_and_more_partitions_are_the_same_topic():
    assert _compare({"kind": "topic-id", "topic_id": "X", "partitions": 3}, {"kind": "topic-id", "topic_id": "X", "partitions": 6}) is None


def test_apply_records_new_topics_as_replicating_and_keeps_the_state_of_recorded_ones(tmp_path):
    ledger = open_ledger(str(tmp_path), "m")
    view = ledger.append(ledger.read(), [Change("topic", "fenced-one", "fenced")], "cutover fence")
    ident = {"kind": "topic-id", "topic_id": "X", "partitions": 1}
    changes = replicating_changes(view, {"new-one": ident, "fenced-one": ident}, {"new-one": "first"})
    assert [(c.name, c.state, c.wave) for c in changes] == [("fenced-one", "fenced", None), ("new-one", "replicating", "first")]
    view = ledger.append(view, changes, "connectors apply")
    assert replicating_changes(view, {"new-one": ident, "fenced-one": ident}, {}) == []  # nothing new the second time
