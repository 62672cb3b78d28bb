"""The per-topic summaries the text output shows at scale: worst first, flat in memory, never ok on nothing."""

from __future__ import annotations

from msk_migrate.runbook.group_offsets import OffsetRow, OffsetSummary
from msk_migrate.runbook.lag import LagRow, summarize


def _lag(topic: str, p: int, behind: int, exact: bool = True) -> LagRow:
    return LagRow(topic, p, topic, 100, 100 - behind, behind, exact, 1.0, 0.0 if not behind else 2.0,
                  "behind" if behind else "in-sync")


def test_lag_summary_lists_topics_behind_first_with_their_worst_partitions():
    rows = [_lag("a", p, 0) for p in range(10)] + [_lag("b", 0, 5), _lag("b", 1, 50), _lag("b", 2, 0)] + \
        [_lag("c", 0, 7, exact=False)]
    s = summarize(rows)
    assert [t.topic for t in s] == ["b", "c", "a"]
    assert (s[0].behind, s[0].behind_partitions, [r.partition for r in s[0].worst]) == (55, 2, [1, 0])
    assert not s[1].exact and s[2].behind_partitions == 0 and s[2].partitions == 10


def _off(group: str, topic: str, p: int, redelivery: int | None, status: str = "ok") -> OffsetRow:
    return OffsetRow(group, topic, p, 1, 2, topic, 1, 2, redelivery, status)


def test_offset_summary_puts_not_ok_topics_first_and_keeps_only_a_few_rows():
    summary = OffsetSummary(keep=2)
    rows = [_off(f"g{g}", "t1", p, 3) for g in range(5) for p in range(4)] + [_off("g9", "t2", 0, -1, "ahead")]
    assert list(summary.feed(iter(rows))) == rows  # streamed through unchanged
    assert summary.count == 21 and summary.group_count == 6 and len(summary.kept) == 2
    topics = summary.topics()
    assert [t.topic for t in topics] == ["t2", "t1"] and topics[0].bad == 1 and topics[1].groups == 5
    assert topics[1].max_redelivery == 3 and len(topics[1].worst) == 3
    assert (summary.verdict(), summary.exit_code()) == ("not-ok", 1)


def test_offset_summary_of_nothing_is_not_ok():
    summary = OffsetSummary()
    list(summary.feed(iter(())))
    assert (summary.verdict(), summary.exit_code()) == ("nothing-compared", 1)
