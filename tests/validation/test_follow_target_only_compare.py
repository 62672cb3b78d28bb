"""The comparer's side of a record only on the target (no server): past the source's records it is
``unexpected`` (or a ``duplicates`` re-delivery) and stops the mark at it, and a pair held while the sides are
read is named as the batch diff names it once the source's records are known."""

from __future__ import annotations

from msk_migrate.validation.follow.compare import LOOKAHEAD, PartitionCompare, record
from msk_migrate.validation.follow.mark import PartitionMark


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
