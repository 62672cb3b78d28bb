"""The follower's in-order comparison: the batch validator's fingerprint and its categories, the mark
stopping at the first differing record (no server)."""

from __future__ import annotations

import hashlib

from msk_migrate.kafka.fingerprint import fingerprint
from msk_migrate.validation.follow.compare import PartitionCompare, record
from msk_migrate.validation.follow.mark import PartitionMark


def recs(values, start=0, ts=1000, headers=None, no_ts=False):
    return [record(start + i, b"k%d" % i if v is not None else None, v, headers, ts + i, no_ts) for i, v in enumerate(values)]


def cmp(src, tgt, allow_duplicates=False, s0=0, t0=0):
    c = PartitionCompare(PartitionMark(s0, t0), allow_duplicates)
    c.src.extend(src)
    c.tgt.extend(tgt)
    c.step()
    return c


def test_the_record_identity_is_the_batch_validators_fingerprint():
    r = record(5, b"k", b"v", [("h", b"1")], 1234, no_ts=False)
    assert r.fp == fingerprint(b"k", b"v", [("h", b"1")], 1234)
    assert record(5, b"k", b"v", None, 1234, no_ts=True).fp == fingerprint(b"k", b"v", None, 0)


def test_equal_records_in_order_advance_both_marks_past_them_and_count_them():
    c = cmp(recs([b"a", b"b", b"c"], start=10), recs([b"a", b"b", b"c"], start=0))
    assert (c.mark.source_next, c.mark.target_next, c.mark.compared, c.mark.state) == (13, 3, 3, "following")


def test_a_side_ahead_keeps_its_records_pending_and_the_mark_stops_at_the_last_pair():
    c = cmp(recs([b"a", b"b", b"c"]), recs([b"a"]))
    assert (c.mark.source_next, c.mark.target_next, c.mark.compared, len(c.src)) == (1, 1, 1, 2)


def test_a_changed_value_stops_the_mark_at_that_record_and_names_what_differed():
    src = recs([b"a", b"b", b"c"])
    tgt = recs([b"a", b"B", b"c"])
    c = cmp(src, tgt)
    assert c.mark.state == "mismatch" and (c.mark.source_next, c.mark.target_next, c.mark.compared) == (1, 1, 1)
    # The key is named by its sha256, never held (keys can hold personal data; the mark is shared like a report).
    assert c.mark.mismatch == {"category": "changed", "key": hashlib.sha256(b"k1").hexdigest(), "key_encoding": "sha256", "source_offset": 1,
                               "target_offset": 1, "timestamp": 1001, "target_timestamp": 1001, "changed": ["value"]}
    assert c.step() == 0  # stopped: nothing more is proven


def test_header_order_and_timestamps_are_compared_like_the_batch():
    s = [record(0, b"k", b"v", [("a", b"1"), ("b", b"2")], 5, False)]
    t = [record(0, b"k", b"v", [("b", b"2"), ("a", b"1")], 6, False)]
    assert cmp(s, t).mark.mismatch["changed"] == ["header_order", "timestamp"]  # type: ignore[index]


def test_a_redelivered_copy_is_a_duplicate_and_passes_only_with_allow_duplicates():
    src = recs([b"a", b"b", b"c"])
    tgt = [*recs([b"a", b"b"]), record(2, b"k1", b"b", None, 1001, False),
           record(3, b"k2", b"c", None, 1002, False)]
    strict = cmp(src, tgt)
    assert strict.mark.mismatch["category"] == "duplicates" and strict.mark.target_next == 2  # type: ignore[index]
    lenient = cmp(src, tgt, allow_duplicates=True)
    assert (lenient.mark.state, lenient.mark.compared, lenient.mark.duplicates, lenient.mark.target_next) == ("following", 3, 1, 4)


def test_a_record_missing_on_the_target_is_missing():
    c = cmp(recs([b"a", b"b", b"c"]), [record(0, b"k0", b"a", None, 1000, False), record(1, b"k2", b"c", None, 1002, False)])
    assert c.mark.mismatch["category"] == "missing" and c.mark.mismatch["source_offset"] == 1  # type: ignore[index]


def test_an_extra_record_on_the_target_is_unexpected():
    src = recs([b"a", b"b"])
    tgt = [src[0], record(1, b"zz", b"x", None, 1, False), record(2, b"k1", b"b", None, 1001, False)]
    c = cmp(src, tgt)
    assert c.mark.mismatch["category"] == "unexpected" and c.mark.mismatch["target_offset"] == 1  # type: ignore[index]


def test_swapped_records_are_reordered():
    src = recs([b"a", b"b", b"c"])
    tgt = [record(0, b"k0", b"a", None, 1000, False), record(1, b"k2", b"c", None, 1002, False),
           record(2, b"k1", b"b", None, 1001, False)]
    assert cmp(src, tgt).mark.mismatch["category"] == "reordered"  # type: ignore[index]


def test_a_caught_up_side_moves_its_mark_over_transaction_markers_only_with_nothing_pending():
    c = cmp(recs([b"a"]), recs([b"a"]))
    c.caught_up("source", 3)  # offsets 1, 2: a commit marker, an aborted record
    c.caught_up("target", 2)
    assert (c.mark.source_next, c.mark.target_next) == (3, 2)
    c.src.extend(recs([b"b"], start=3))
    c.caught_up("source", 9)
    assert c.mark.source_next == 3


# ---- a re-delivery longer than the ring of recent fingerprints -----------------------------------------------
def _replayed(n_proven: int, replay_from: int, allow_duplicates: bool, store: bool = True, target_ahead: bool = False):
    """``n_proven`` records proven, then the target repeats the source's records from ``replay_from`` up to the
    mark (an at-least-once restart re-sending everything since its last offset commit), then one new record
    (on both sides, unless ``target_ahead``: the source holds nothing new yet)."""
    proven = recs([b"v%d" % i for i in range(n_proven)])
    asked: list[int] = []

    def proven_source(t):  # the follower reads the source back; here the proven records are in memory
        asked.append(t.offset)
        at = [i for i, r in enumerate(proven) if r.fp == t.fp]
        return [r.fp for r in proven[at[-1]:]] if at else None

    c = PartitionCompare(PartitionMark(0, 0), allow_duplicates, proven_source if store else None)
    c.src.extend(proven)
    c.tgt.extend(proven)
    c.step()
    assert c.mark.compared == n_proven and len(c.recent) == 256
    new = recs([b"new"], start=n_proven)[0]
    replay = [record(n_proven + i, r.key, r.value, None, r.ts, False) for i, r in enumerate(proven[replay_from:])]
    c.tgt.extend([*replay, record(n_proven + len(replay), new.key, new.value, None, new.ts, False)])
    if target_ahead:
        c.target_only()
    else:
        c.src.append(new)
        c.step()
    return c, asked, len(replay)


def test_a_redelivery_longer_than_the_recent_ring_is_counted_as_duplicates_and_the_next_record_proven():
    c, asked, n = _replayed(1000, 300, allow_duplicates=True)
    assert n == 700 > 256
    assert (c.mark.state, c.mark.duplicates, c.mark.compared, c.mark.source_next, c.mark.target_next) == \
        ("following", 700, 1001, 1001, 1701)
    assert asked == [1000]  # the source read back once, for the first record the ring did not know


def test_a_long_redelivery_without_allow_duplicates_stops_the_mark_at_its_first_record_as_duplicates():
    c, _, _ = _replayed(1000, 300, allow_duplicates=False)
    assert c.mark.state == "mismatch" and c.mark.mismatch["category"] == "duplicates"  # type: ignore[index]
    assert (c.mark.source_next, c.mark.target_next) == (1000, 1000)


def test_a_long_redelivery_while_the_source_holds_nothing_new_is_counted_the_same_way():
    c, _, _ = _replayed(1000, 300, allow_duplicates=True, target_ahead=True)
    # the re-delivered run passes; the new record has no source record yet: unexpected, as before
    assert c.mark.duplicates == 700 and c.mark.mismatch["category"] == "unexpected"  # type: ignore[index]
    assert c.mark.mismatch["target_offset"] == 1700  # type: ignore[index]


def test_without_the_store_of_proven_records_a_long_redelivery_is_a_false_difference():
    # what the follower did before it read the source back: the ring alone cannot tell a re-delivered record
    c, _, _ = _replayed(1000, 300, allow_duplicates=True, store=False)
    assert c.mark.state == "mismatch" and c.mark.mismatch["category"] != "duplicates"  # type: ignore[index]


def test_a_redelivery_that_breaks_off_is_compared_from_the_record_that_breaks_it():
    proven = recs([b"v%d" % i for i in range(600)])
    c = PartitionCompare(PartitionMark(0, 0), True, lambda t: [r.fp for r in proven[300:]] if t.fp == proven[300].fp else None)
    c.src.extend(proven)
    c.tgt.extend(proven)
    c.step()
    changed = record(900, b"k310", b"other", None, proven[310].ts, False)
    c.tgt.extend([*[record(600 + i, r.key, r.value, None, r.ts, False) for i, r in enumerate(proven[300:310])], changed])
    c.src.extend(recs([b"new"], start=600))
    c.step()
    assert c.mark.duplicates == 10 and c.mark.state == "mismatch" and c.mark.mismatch["target_offset"] == 900  # type: ignore[index]
