"""Offset translation of a partition fed from both sides (pure: constructed logs of natives and copies)."""

from __future__ import annotations

import random

import pytest

from msk_migrate.offset_translation.two_origin import OriginRec, exact_offsets, translate_position


def side(order: str, start: int = 0, holes: frozenset[int] = frozenset()) -> list[OriginRec]:
    """A partition log from a string of origins: ``"aab"`` = A's record 0, A's record 1, B's record 0. Each origin's
    records get fingerprints 1000 + i (A) / 2000 + i (B), in order, as MM2 keeps one origin's order. ``holes``:
    offsets taken by transaction markers (no record)."""
    out, n, off = [], {"a": 0, "b": 0}, start
    for c in order:
        while off in holes:
            off += 1
        out.append(OriginRec(off, c, (1000 if c == "a" else 2000) + n[c]))
        n[c] += 1
        off += 1
    return out


def test_an_aligned_point_gives_the_exact_offset_with_nothing_redelivered():
    b = side("abba" "ab")  # B: position 4 consumed a0 b0 b1 a1
    a = side("aabb" "ba")  # A: a0 a1 b0 b1 then b2 a2 -> offset 4 covers exactly {a0, a1, b0, b1}
    t = translate_position(b, 4, a)
    assert t.proven and t.exact and t.offset == 4
    assert t.consumed == {"a": 2, "b": 2} and t.covered == {"a": 2, "b": 2}
    assert t.redelivered == () and exact_offsets(b, 4, a) == [4]


def test_without_an_aligned_point_the_largest_offset_that_skips_nothing_and_the_exact_redelivery():
    b = side("ab" "ba")  # B: position 2 consumed a0 b0
    a = side("bbaa")  # A: b0 b1 a0 a1 -> no prefix is exactly {a0, b0}
    assert exact_offsets(b, 2, a) == []
    t = translate_position(b, 2, a)
    assert t.proven and not t.exact
    assert t.offset == 1  # before b1 (not consumed); a0 at offset 2 is read again
    assert t.covered == {"a": 0, "b": 1}
    (r,) = t.redelivered
    assert (r.origin, r.count, r.pending, r.first_offset, r.last_offset) == ("a", 1, 0, 2, 2)
    assert [x.fp for x in r.records] == [1000]


def test_copies_not_yet_on_the_other_side_are_pending_redelivery_not_skipped():
    b = side("bbb")  # three B natives consumed on B
    a = side("b")  # only b0 copied to A so far
    t = translate_position(b, 3, a)
    assert t.proven and not t.exact and t.offset == 1
    (r,) = t.redelivered
    assert (r.origin, r.count, r.pending, len(r.records)) == ("b", 2, 2, 0)


def test_empty_partitions_translate_to_the_start():
    t = translate_position([], 0, [])
    assert t.proven and t.exact and t.offset == 0 and t.consumed == {} and t.covered == {}


def test_a_position_at_the_start_resumes_at_the_first_record_of_the_other_side():
    a = side("ab", start=7)
    t = translate_position(side("ba"), 0, a)
    assert t.exact and t.offset == 7


def test_one_origin_only_is_the_plain_translation_on_the_same_record():
    b = side("aaaaa")  # B holds only copies of A's natives
    a = side("aaaaa", start=3)  # A's own log starts at 3 (retention), markers nowhere
    t = translate_position(b, 2, a)
    assert t.exact and t.offset == 5 and t.consumed == {"a": 2}


def test_transaction_markers_leave_holes_and_the_answer_is_the_next_record():
    b = side("ab" "ab")
    a = side("ab" "ab", holes=frozenset({1, 3}))  # a0@0 b0@2 a1@4 b1@5
    t = translate_position(b, 2, a)
    assert t.exact and t.offset == 4


def test_everything_consumed_resumes_at_the_other_sides_end_offset():
    b = side("abab")
    a = side("aabb")
    t = translate_position(b, 4, a, to_end=9)  # 9: markers after the last record
    assert t.exact and t.offset == 9


def test_a_lost_copy_refuses_the_translation_and_names_the_origin():
    b = side("abab")
    a = [r for r in side("aabb") if r.fp != 2000]  # b0's copy never reached A
    t = translate_position(b, 4, a)
    assert not t.proven and t.offset is None and "origin b" in t.reason and "#0" in t.reason


def test_a_log_out_of_offset_order_is_a_programming_error():
    with pytest.raises(ValueError, match="offset order"):
        translate_position([OriginRec(1, "a", 1), OriginRec(0, "a", 2)], 1, [])


@pytest.mark.parametrize("seed", range(40))
def test_any_interleaving_never_skips_a_record_and_redelivers_exactly_what_was_consumed_after_the_offset(seed):
    rnd = random.Random(seed)
    na, nb = rnd.randint(0, 12), rnd.randint(0, 12)

    def interleave() -> str:
        order, i, j = [], 0, 0
        while i < na or j < nb:
            if j >= nb or (i < na and rnd.random() < 0.5):
                order.append("a")
                i += 1
            else:
                order.append("b")
                j += 1
        return "".join(order)

    b, a = side(interleave()), side(interleave())
    position = rnd.randint(0, len(b))
    t = translate_position(b, position, a)
    consumed = {r.fp for r in b if r.offset < position}
    assert t.proven and t.offset is not None
    before = [r for r in a if r.offset < t.offset]
    assert all(r.fp in consumed for r in before)  # nothing skipped
    again = [r for r in a if r.offset >= t.offset and r.fp in consumed]
    assert [x for red in t.redelivered for x in red.records] == sorted(again, key=lambda r: (r.origin, r.offset))
    nxt = [r for r in a if r.offset >= t.offset]
    assert not nxt or nxt[0].fp not in consumed  # the largest such offset: the next record is unconsumed
    exact = exact_offsets(b, position, a)
    assert t.exact == bool(exact) and (not exact or t.offset == max(exact))
