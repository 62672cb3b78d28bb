"""The comparer's side of a record only on the target (no server): past the source's records it is
``unexpected`` (or a ``duplicates`` re-delivery) and stops the mark at it, and a pair held while the sides are
read is named as the batch diff names it once the source's records are known. A target partition the source does
not have is followed, is never listed on the source, and its mismatch fails the gate of its topic."""

from __future__ import annotations

from msk_migrate.runbook.proof_mark import mark_condition
from msk_migrate.validation.follow.compare import LOOKAHEAD, PartitionCompare, record
from msk_migrate.validation.follow.follower import source_ends_of
from msk_migrate.validation.follow.mark import ClusterFacts, Mark, PartitionMark, TopicFacts, add_missing, sourceless


def rec(offset: int, key: bytes, value: bytes, ts: int = 1000):
    return record(offset, key, value, None, ts, False)


def compare(src, tgt, allow_duplicates=False, wait=False):
    c = PartitionCompare(PartitionMark(0, 0), allow_duplicates)
    c.src.extend(src)
    c.tgt.extend(tgt)
    c.step(wait=wait)
    return c


def test_a_target_record_past_the_sources_records_waits_until_the_source_is_known_then_is_unexpected():
    c = compare([rec(0, b"a", b"1")], [rec(0, b"a", b"1"), rec(1, b"x", b"only on the target", 7)])
    # paired what both hold; the extra record waits (the caller has not yet read the source to a later end)
    assert (c.mark.state, c.mark.compared, c.target_ahead, len(c.tgt)) == ("following", 1, True, 1)
    c.target_only()
    assert c.mark.state == "mismatch" and not c.target_ahead
    assert (c.mark.source_next, c.mark.target_next) == (1, 1)
    m = c.mark.mismatch or {}
    assert (m["category"], m["source_offset"], m["target_offset"], m["timestamp"], m["target_timestamp"]) == \
        ("unexpected", 1, 1, None, 7)


def test_a_redelivery_past_the_sources_records_is_a_duplicate_passed_over_only_with_allow_duplicates():
    src = [rec(0, b"a", b"1"), rec(1, b"b", b"2")]
    tgt = [*src, rec(2, b"b", b"2")]
    strict = compare(src, tgt)
    strict.target_only()
    assert strict.mark.state == "mismatch" and (strict.mark.mismatch or {})["category"] == "duplicates"
    assert strict.mark.target_next == 2
    lenient = compare(src, tgt, allow_duplicates=True)
    lenient.target_only()
    assert (lenient.mark.state, lenient.mark.compared, lenient.mark.duplicates, lenient.mark.target_next) == \
        ("following", 2, 1, 3)


def test_a_target_merely_behind_is_never_target_only():
    c = compare([rec(0, b"a", b"1"), rec(1, b"b", b"2")], [rec(0, b"a", b"1")])
    assert not c.target_ahead and not c.held
    c.target_only()
    assert (c.mark.state, c.mark.compared, len(c.src)) == ("following", 1, 1)


def test_an_unequal_pair_is_held_while_reading_and_named_as_the_batch_names_it():
    inserted = rec(1, b"x", b"only on the target", 7)
    c = compare([rec(0, b"a", b"1"), rec(1, b"b", b"2")], [rec(0, b"a", b"1"), inserted], wait=True)
    assert c.held and c.mark.state == "following" and c.mark.compared == 1  # the next target record may still come
    # the source read to an end listed after the target record was read: another key, no source record
    c.step(source_complete=True)
    m = c.mark.mismatch or {}
    assert (c.mark.state, m["category"], m["source_offset"], m["target_offset"]) == ("mismatch", "unexpected", 1, 1)
    # the same key is a record changed in place, as before
    c = compare([rec(0, b"a", b"1")], [rec(0, b"a", b"2")], wait=True)
    c.step(source_complete=True)
    assert (c.mark.mismatch or {})["category"] == "changed"


def test_a_held_pair_is_named_once_either_side_holds_the_lookahead():
    src = [rec(i, b"s%d" % i, b"v") for i in range(LOOKAHEAD)]
    c = compare(src, [rec(0, b"x", b"w")], wait=True)
    assert c.mark.state == "mismatch" and (c.mark.mismatch or {})["category"] == "changed"


def _facts(source_partitions: int, target_partitions: int) -> ClusterFacts:
    src, tgt = range(source_partitions), range(target_partitions)
    return ClusterFacts("m", "S", "T", {"t": TopicFacts("t", source_partitions, target_partitions, None, None,
                                                       dict.fromkeys(src, 0), dict.fromkeys(src, 10),
                                                       dict.fromkeys(tgt, 10), {p: 3 * p for p in tgt})})


def test_every_target_partition_is_followed_those_the_source_does_not_have_from_source_offset_0():
    mark = Mark("m", "S", "T")
    assert add_missing(mark, _facts(2, 3)) == [("t", 0), ("t", 1), ("t", 2)]
    assert (mark.partition("t", 2).source_next, mark.partition("t", 2).target_next) == (0, 6)
    assert [sourceless(mark, "t", p) for p in range(3)] == [False, False, True]
    # a source partition the target does not have yet is not followed (MM2 adds it; the changed count is refused)
    fewer = Mark("m", "S", "T")
    assert add_missing(fewer, _facts(3, 2)) == [("t", 0), ("t", 1)]


def test_the_source_is_listed_only_for_partitions_it_has_and_holds_nothing_on_the_others():
    asked: list[list] = []

    def listed(tps):
        asked.append(tps)
        return dict.fromkeys(tps, 10)

    tps = [("t", 0), ("t", 2)]
    assert source_ends_of(tps, lambda tp: tp[1] >= 2, listed) == {("t", 0): 10, ("t", 2): 0}
    assert asked == [[("t", 0)]]
    assert source_ends_of([("t", 2)], lambda tp: True, listed) == {("t", 2): 0} and len(asked) == 1


def test_the_chained_runs_judge_a_target_record_past_the_source_where_nothing_can_come_for_it():
    from msk_migrate.validation.follow.spark_chain import PartitionAdvance, judge_target_extra

    advances = {("t", p): PartitionAdvance("t", p, 0, 5, 5, target_extra=5) for p in range(4)}
    read_to = {("t", p): 5 for p in range(4)}
    # 0: the source did not grow; 1: it grew (a copy may be on its way); 2: on the target only; 3: no listed end
    out = judge_target_extra(advances, read_to, {("t", 0): 5, ("t", 1): 6}, lambda tp: tp[1] == 2)
    assert {tp[1]: (a.mismatch or {}).get("category") for tp, a in out.items()} == \
        {0: "unexpected", 1: None, 2: "unexpected", 3: None}
    assert (out[("t", 2)].target_next, (out[("t", 2)].mismatch or {})["target_offset"]) == (5, 5)


def test_a_mismatch_on_a_target_partition_the_source_does_not_have_fails_the_gate_of_its_topic():
    mark = Mark("m", "S", "T", updated_ms=1_000)
    add_missing(mark, _facts(2, 3))
    for p in (0, 1):
        mark.partition("t", p).source_next = 10
    required = {("t", 0): 10, ("t", 1): 10}
    assert mark_condition(mark, "mark.json", required, "the end offsets", 600, now_ms=2_000).ok
    pm = mark.partition("t", 2)
    pm.state, pm.mismatch = "mismatch", {"category": "unexpected", "source_offset": 0, "target_offset": 6}
    gate = mark_condition(mark, "mark.json", required, "the end offsets", 600, now_ms=2_000)
    assert not gate.ok and "t[2] (on the target only) mismatch: unexpected at target offset 6" in gate.evidence


def test_a_fenced_topics_partition_the_source_does_not_have_is_cut_over_as_its_producers_may_write_there():
    from msk_migrate.validation.follow.follower import Follower, FollowOptions

    mark = Mark("m", "S", "T")
    add_missing(mark, _facts(2, 3))
    mark.partition("t", 0).source_next = 10
    fences = {("t", 0): 10, ("t", 1): 10}
    f = Follower(None, None, mark, FollowOptions(mark="mark.json", migration="m", fences=lambda: fences))  # type: ignore[arg-type]
    assert f.apply_fences() == [("t", 0), ("t", 2)]
    assert [mark.partition("t", p).state for p in range(3)] == ["cut-over", "following", "cut-over"]
    # not fenced: the target-only partition is followed (a record there is one only on the target)
    mark2 = Mark("m", "S", "T")
    add_missing(mark2, _facts(2, 3))
    assert Follower(None, None, mark2, FollowOptions(mark="m.json", migration="m", fences=dict)).apply_fences() == []  # type: ignore[arg-type]
