"""The follower's per-origin comparison where copies are marked (issue 47): each record gets its origin as it is read,
the source's origin is paired in order, the target's is counted; a wrong mark and a re-delivered copy are named
(no server)."""

from __future__ import annotations

import pytest

from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.follow.compare import BAD_MARK, COMPARED, LEFT_OUT, NATIVE, Origins, PartitionCompare
from msk_migrate.validation.follow.mark import Mark, PartitionMark, TopicMark
from msk_migrate.validation.follow.metrics import exposition
from msk_migrate.validation.follow.run import origin_counts

SRC, TGT = "onprem", "msk"
ORIGINS = Origins(SRC, TGT)
MARK = (mark_header(SRC), SRC.encode())


def native(i: int, origin: str = SRC):
    return (f"{origin}-{i}".encode(), f"v{i}".encode(), [("trace", b"t")] if i % 2 else None, 1000 + i)


def src_rec(offset, rec, from_target=False):
    k, v, h, ts = rec
    if from_target:
        h = [*(h or []), (mark_header(TGT), TGT.encode())]
    return ORIGINS.source(offset, k, v, h, ts, False)


def tgt_rec(offset, rec, headers=None):
    k, v, h, ts = rec
    return ORIGINS.target(offset, k, v, headers if headers is not None else [*(h or []), MARK], ts, False)


def tgt_native(offset, rec):
    k, v, h, ts = rec
    return ORIGINS.target(offset, k, v, h, ts, False)


def compare(src, tgt, allow_duplicates=False):
    c = PartitionCompare(PartitionMark(0, 0, origin_target={"source": 0, "target": 0}), allow_duplicates)
    c.src.extend(src)
    c.tgt.extend(tgt)
    c.step()
    return c


def test_each_record_gets_its_origin_from_its_marks():
    assert src_rec(0, native(0)).kind == COMPARED
    assert src_rec(0, native(0, TGT), from_target=True).kind == LEFT_OUT
    copy = tgt_rec(0, native(1))
    assert copy.kind == COMPARED and copy.fp == src_rec(0, native(1)).fp  # the mark removed, nothing else
    assert tgt_native(0, native(0, TGT)).kind == NATIVE
    k, v, h, ts = native(1)
    for wrong in ([MARK, *h], [*h, (mark_header(SRC), b"other")], [*h, MARK, MARK]):  # misplaced, other value, twice
        assert ORIGINS.target(0, k, v, wrong, ts, False).kind == BAD_MARK, wrong


def test_both_origins_interleaved_differently_on_each_side_are_proven_per_origin_and_counted():
    a = [native(i) for i in range(4)]
    b = [native(i, TGT) for i in range(3)]
    src = [src_rec(0, a[0]), src_rec(1, b[0], True), src_rec(2, b[1], True), src_rec(3, a[1]), src_rec(4, a[2]),
           src_rec(5, b[2], True), src_rec(6, a[3])]
    tgt = [tgt_native(0, b[0]), tgt_rec(1, a[0]), tgt_rec(2, a[1]), tgt_native(3, b[1]), tgt_native(4, b[2]),
           tgt_rec(5, a[2]), tgt_rec(6, a[3])]
    c = compare(src, tgt)
    m = c.mark
    assert (m.state, m.compared, m.source_next, m.target_next) == ("following", 4, 7, 7)
    assert m.origin_target == {"source": 3, "target": 3}
    assert origin_counts(m, {"source_alias": SRC, "target_alias": TGT}) == {
        SRC: {"source": 4, "target": 4, "compared": True}, TGT: {"source": 3, "target": 3, "compared": False}}


def test_an_origins_records_in_another_order_are_reordered_within_that_origin():
    a = [native(i) for i in range(3)]
    c = compare([src_rec(i, r) for i, r in enumerate(a)],
                [tgt_native(0, native(0, TGT)), tgt_rec(1, a[0]), tgt_rec(2, a[2]), tgt_rec(3, a[1])])
    assert c.mark.state == "mismatch" and c.mark.mismatch["category"] == "reordered"  # type: ignore[index]
    assert (c.mark.mismatch["source_offset"], c.mark.mismatch["target_offset"]) == (1, 2)  # type: ignore[index]


def test_a_wrong_or_misplaced_mark_stops_the_partition_at_that_record_even_with_nothing_else_read():
    a = [native(i) for i in range(3)]
    k, v, h, ts = a[1]
    bad = ORIGINS.target(2, k, v, [MARK, *h], ts, False)
    c = compare([src_rec(0, a[0])], [tgt_rec(0, a[0]), tgt_native(1, native(0, TGT)), bad])
    m = c.mark
    assert m.state == "mismatch" and m.mismatch["category"] == "copy_mark", m.mismatch  # type: ignore[index]
    assert (m.source_next, m.target_next, m.compared) == (1, 2, 1)
    assert "wrong or misplaced" in m.mismatch["reason"]  # type: ignore[index]


@pytest.mark.parametrize("allow", [False, True])
def test_a_copy_re_delivered_by_an_mm2_restart_is_a_duplicate_named_or_passed_over_and_counted(allow):
    a = [native(i) for i in range(4)]
    src = [src_rec(i, r) for i, r in enumerate(a)]
    # the restarted task copies a1, a2 again, a target native lands between the two runs
    tgt = [tgt_rec(0, a[0]), tgt_rec(1, a[1]), tgt_rec(2, a[2]), tgt_native(3, native(0, TGT)), tgt_rec(4, a[1]),
           tgt_rec(5, a[2]), tgt_rec(6, a[3])]
    m = compare(src, tgt, allow_duplicates=allow).mark
    if not allow:
        assert m.state == "mismatch" and m.mismatch["category"] == "duplicates" and m.target_next == 4  # type: ignore[index]
        return
    assert (m.state, m.compared, m.duplicates, m.target_next, m.origin_target) == \
        ("following", 4, 2, 7, {"source": 0, "target": 1})
    assert origin_counts(m, {"source_alias": SRC, "target_alias": TGT})[SRC] == {"source": 4, "target": 6, "compared": True}


def test_a_target_native_after_the_last_copy_is_counted_never_unexpected():
    a = [native(0)]
    c = compare([src_rec(0, a[0])], [tgt_rec(0, a[0]), tgt_native(1, native(0, TGT)), tgt_native(2, native(1, TGT))])
    c.target_only()
    assert (c.mark.state, c.mark.target_next, c.mark.origin_target) == ("following", 3, {"source": 0, "target": 2})


def test_a_copy_with_no_source_record_is_still_unexpected():
    c = compare([], [tgt_native(0, native(0, TGT)), tgt_rec(1, native(9))])
    c.target_only()
    assert c.mark.state == "mismatch" and c.mark.mismatch["category"] == "unexpected"  # type: ignore[index]
    assert c.mark.mismatch["target_offset"] == 1 and c.mark.origin_target == {"source": 0, "target": 1}  # type: ignore[index]


def test_the_mark_document_keeps_the_comparison_and_the_origin_counts():
    pm = PartitionMark(5, 6, compared=3, origin_target={"source": 2, "target": 3})
    mark = Mark("m", "S", "T", {"t": TopicMark("t", 1, 1, partitions={0: pm})}, copy_marks={"source_alias": SRC, "target_alias": TGT})
    doc = mark.to_dict()
    assert doc["compare"] == "per-origin" and doc["copy_marks"] == {"source_alias": SRC, "target_alias": TGT}
    back = Mark.from_dict(doc)
    assert back.copy_marks == mark.copy_marks and back.partition("t", 0).origin_target == {"source": 2, "target": 3}
    assert Mark.from_dict(Mark("m", "S", "T").to_dict()).compare == "records"


def test_the_metrics_say_the_comparison_is_per_origin_and_give_each_origins_records():
    from msk_migrate.validation.follow.metrics import PartitionSample

    text = exposition([PartitionSample("t", 0, 0, 0.0, 4, False, False, 2, 3, 1)], 1.0,
                      {"source_alias": SRC, "target_alias": TGT})
    assert f'msk_migrate_proof_compare_per_origin{{source_alias="{SRC}",target_alias="{TGT}"}} 1' in text
    for origin, side, n in ((SRC, "source", 4), (SRC, "target", 6), (TGT, "source", 3), (TGT, "target", 1)):
        assert f'msk_migrate_proof_origin_records_total{{topic="t",partition="0",origin="{origin}",side="{side}"}} {n}' in text
    assert 'msk_migrate_proof_duplicates_total{topic="t",partition="0"} 2' in text
    assert "per_origin" not in exposition([PartitionSample("t", 0, 0, 0.0, 4, False, False)], 1.0)
