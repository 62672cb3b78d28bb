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
    t = translate_position(b, 4, a, frm_alias="b", to_alias="a")
    assert t.proven and t.exact and t.offset == 4
    assert t.consumed == {"a": 2, "b": 2} and t.covered == {"a": 2, "b": 2}
    assert t.redelivered == () and exact_offsets(b, 4, a) == [4]


def test_without_an_aligned_point_the_largest_offset_that_skips_nothing_and_the_exact_redelivery():
    b = side("ab" "ba")  # B: position 2 consumed a0 b0
    a = side("bbaa")  # A: b0 b1 a0 a1 -> no prefix is exactly {a0, b0}
    assert exact_offsets(b, 2, a) == []
    t = translate_position(b, 2, a, frm_alias="b", to_alias="a")
    assert t.proven and not t.exact
    assert t.offset == 1  # before b1 (not consumed); a0 at offset 2 is read again
    assert t.covered == {"a": 0, "b": 1}
    (r,) = t.redelivered
    assert (r.origin, r.count, r.pending, r.first_offset, r.last_offset) == ("a", 1, 0, 2, 2)
    assert [x.fp for x in r.records] == [1000]


def test_copies_not_yet_on_the_other_side_are_pending_redelivery_not_skipped():
    b = side("bbb")  # three B natives consumed on B
    a = side("b")  # only b0 copied to A so far
    t = translate_position(b, 3, a, frm_alias="b", to_alias="a")
    assert t.proven and not t.exact and t.offset == 1
    (r,) = t.redelivered
    assert (r.origin, r.count, r.pending, len(r.records)) == ("b", 2, 2, 0)


def test_empty_partitions_translate_to_the_start():
    t = translate_position([], 0, [], frm_alias="b", to_alias="a")
    assert t.proven and t.exact and t.offset == 0 and t.consumed == {} and t.covered == {}


def test_a_position_at_the_start_resumes_at_the_first_record_of_the_other_side():
    a = side("ab", start=7)
    t = translate_position(side("ba"), 0, a, frm_alias="b", to_alias="a")
    assert t.exact and t.offset == 7


def test_one_origin_only_is_the_plain_translation_on_the_same_record():
    b = side("aaaaa")  # B holds only copies of A's natives
    a = side("aaaaa", start=3)  # A's own log starts at 3 (retention), markers nowhere
    t = translate_position(b, 2, a, frm_alias="b", to_alias="a")
    assert t.exact and t.offset == 5 and t.consumed == {"a": 2}


def test_transaction_markers_leave_holes_and_the_answer_is_the_next_record():
    b = side("ab" "ab")
    a = side("ab" "ab", holes=frozenset({1, 3}))  # a0@0 b0@2 a1@4 b1@5
    t = translate_position(b, 2, a, frm_alias="b", to_alias="a")
    assert t.exact and t.offset == 4


def test_everything_consumed_resumes_at_the_other_sides_end_offset():
    b = side("abab")
    a = side("aabb")
    t = translate_position(b, 4, a, to_end=9, frm_alias="b", to_alias="a")  # 9: markers after the last record
    assert t.exact and t.offset == 9


def test_a_lost_copy_refuses_the_translation_and_names_the_origin():
    b = side("abab")
    a = [r for r in side("aabb") if r.fp != 2000]  # b0's copy never reached A
    t = translate_position(b, 4, a, frm_alias="b", to_alias="a")
    assert not t.proven and t.offset is None and "origin b" in t.reason and "#0" in t.reason


def test_a_log_out_of_offset_order_is_a_programming_error():
    with pytest.raises(ValueError, match="offset order"):
        translate_position([OriginRec(1, "a", 1), OriginRec(0, "a", 2)], 1, [], frm_alias="b", to_alias="a")


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
    t = translate_position(b, position, a, frm_alias="b", to_alias="a")
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


def _with_restarts(natives: list[OriginRec], rnd: random.Random, chance: float = 0.2) -> list[OriginRec]:
    """The copies MM2 writes of ``natives`` under at-least-once with restarts: now and then it resumes from an
    earlier committed offset and copies the last few records again, in order, before going on."""
    out, i = [], 0
    while i < len(natives):
        if i and rnd.random() < chance:
            for k in range(rnd.randint(max(0, i - 4), i - 1), i):
                out.append(natives[k])
        out.append(natives[i])
        i += 1
    return out


def _log(order: str, recs: dict[str, list[OriginRec]]) -> list[OriginRec]:
    it = {o: iter(rs) for o, rs in recs.items()}
    return [OriginRec(off, c, next(it[c]).fp) for off, c in enumerate(order)]


@pytest.mark.parametrize("seed", range(60))
def test_mm2_restart_duplicates_are_placed_by_identity_and_never_skip_or_inflate_a_translation(seed):
    rnd = random.Random(1000 + seed)
    na, nb = rnd.randint(0, 14), rnd.randint(0, 14)
    a_nat = [OriginRec(i, "a", 1000 + i) for i in range(na)]
    b_nat = [OriginRec(i, "b", 2000 + i) for i in range(nb)]
    a_on_b, b_on_a = _with_restarts(a_nat, rnd), _with_restarts(b_nat, rnd)

    def interleave(x: list[OriginRec], y: list[OriginRec]) -> str:
        order, i, j = [], 0, 0
        while i < len(x) or j < len(y):
            if j >= len(y) or (i < len(x) and rnd.random() < 0.5):
                order.append(x[0].origin)
                i += 1
            else:
                order.append(y[0].origin)
                j += 1
        return "".join(order)

    b = _log(interleave(b_nat, a_on_b) if b_nat and a_on_b else "b" * nb + "a" * len(a_on_b), {"b": b_nat, "a": a_on_b})
    a = _log(interleave(a_nat, b_on_a) if a_nat and b_on_a else "a" * na + "b" * len(b_on_a), {"a": a_nat, "b": b_on_a})
    position = rnd.randint(0, len(b))
    t = translate_position(b, position, a, frm_alias="b", to_alias="a")
    assert t.proven and t.offset is not None, t.reason
    consumed = {r.fp for r in b if r.offset < position}
    assert t.consumed == {o: n for o, n in (("a", len({f for f in consumed if f < 2000})), ("b", len({f for f in consumed if f >= 2000}))) if n}
    assert all(r.fp in consumed for r in a if r.offset < t.offset)  # nothing skipped
    at = [r for r in a if r.offset >= t.offset]
    assert not at or at[0].fp not in consumed  # the largest such offset
    seen_before = {r.fp for r in a if r.offset < t.offset}
    firsts_after, dups_after = [], 0
    for r in at:
        if r.fp in seen_before:
            dups_after += r.fp in consumed
        else:
            seen_before.add(r.fp)
            if r.fp in consumed:
                firsts_after.append(r)
    assert [x for red in t.redelivered for x in red.records] == sorted(firsts_after, key=lambda r: (r.origin, r.offset))
    assert t.duplicates_ahead == dups_after
    assert t.duplicates == {k: v for k, v in (("source", len(a_on_b) - na), ("target", len(b_on_a) - nb)) if v}
    # exact by the definition, over distinct records: an offset before which lies exactly what the group consumed
    exact = [o for o in sorted({r.offset for r in a} | {len(a)}) if {r.fp for r in a if r.offset < o} == consumed]
    assert t.exact == bool(exact) and (not exact or t.offset == max(exact))


def test_a_restart_re_run_is_counted_and_the_group_placed_exactly_past_it():
    # A: a0 a1 | b0 b1 b2 b1 b2 b3 (MM2 restarted after b2 and re-copied b1 b2)
    a = [OriginRec(0, "a", 1000), OriginRec(1, "a", 1001)] + [OriginRec(2 + i, "b", 2000 + k) for i, k in enumerate([0, 1, 2, 1, 2, 3])]
    b = [OriginRec(i, "b", 2000 + i) for i in range(4)] + [OriginRec(4, "a", 1000), OriginRec(5, "a", 1001)]
    t = translate_position(b, 6, a, frm_alias="b", to_alias="a")
    assert t.exact and t.offset == 8 and t.duplicates == {"target": 2} and t.duplicates_ahead == 0
    assert "restart duplicates recognised by identity and position: 2" in t.reason


def test_identical_natives_that_make_a_restart_ambiguous_refuse_the_partition():
    natives = [OriginRec(i, "b", fp) for i, fp in enumerate([7, 8, 7, 8, 9])]
    # copies x y x y x y z: new 0 1 2, then y could be native 3 or a re-run from native 1
    a = [OriginRec(i, "b", fp) for i, fp in enumerate([7, 8, 7, 8, 7, 8, 9])]
    t = translate_position(natives, 5, a, frm_alias="b", to_alias="a")
    assert not t.proven and "cannot be placed by identity" in t.reason and "origin b on the target side" in t.reason
