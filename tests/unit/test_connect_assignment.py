"""MirrorSourceConnector's task assignment read back (connect_api/assignment.py)."""

from __future__ import annotations

import pytest

from msk_migrate.connect_api.assignment import TASK_PARTITIONS, assignment, parse_partitions, topic_copies


def test_a_topic_name_with_dashes_splits_at_the_last_one() -> None:
    assert parse_partitions("orders-eu-0, orders-eu-11,") == [("orders-eu", 0), ("orders-eu", 11)]


@pytest.mark.parametrize("bad", ["orders", "orders-x", "-3"])
def test_an_entry_without_a_partition_number_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=TASK_PARTITIONS):
        parse_partitions(bad)


def test_a_partition_held_by_no_task_or_by_a_task_not_running_is_not_ok() -> None:
    held = assignment({0: {TASK_PARTITIONS: "a-0,b-0"}, 1: {TASK_PARTITIONS: "a-1"}, 2: {}})
    rows = {r.topic: r for r in topic_copies({"a": 3, "b": 1}, held, {0: "RUNNING", 1: "FAILED"})}
    assert (rows["a"].tasks, rows["a"].states, rows["a"].unassigned, rows["a"].ok) == ([0, 1], ["RUNNING", "FAILED"], [2], False)
    assert (rows["b"].tasks, rows["b"].ok) == ([0], True)
    assert topic_copies({"b": 1}, held, {})[0].states == ["UNASSIGNED"]
