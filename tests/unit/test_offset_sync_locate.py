"""The alignment behind exact offset translation (pure: records as offset + fingerprint)."""

from __future__ import annotations

from msk_migrate.offset_translation.locate import MORE, Alignment, Rec, align


def recs(pairs):
    return [Rec(o, fp) for o, fp in pairs]


def src(n, start=0):
    return recs((start + i, 1000 + i) for i in range(n))


def test_plain_copy_places_the_group_on_the_same_record():
    s = src(50)
    al = align(s[10:20], s[20:30], recs((o, r.fp) for o, r in enumerate(s)), end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 20 and not al.redelivered


def test_markers_shift_offsets_and_a_commit_on_a_marker_still_finds_the_next_record():
    # source: records at even offsets (odd = markers); target: dense
    s = recs((2 * i, 1000 + i) for i in range(40))
    commit = 21  # on a marker: the next record is offset 22 (fp 1011)
    before = [r for r in s if r.offset < commit][-8:]
    after = [r for r in s if r.offset >= commit][:8]
    tgt = recs((i, 1000 + i) for i in range(40))
    al = align(before, after, tgt, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 11


def test_a_restart_replay_places_the_group_on_the_first_copy_and_declares_the_replayed_past():
    s = src(20)
    fps = [r.fp for r in s[:11]] + [r.fp for r in s[6:]]  # r0..r10, then r6..r19 again
    tgt = recs(enumerate(fps))
    al = align(s[:8], s[8:16], tgt, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 8
    assert [fp - 1000 for _, fp in al.redelivered] == [6, 7]  # consumed before the commit, seen again
    assert [fp - 1000 for _, fp in al.duplicates] == [8, 9, 10]


def test_identical_records_are_told_apart_by_the_records_before_the_commit():
    s = recs((i, 7) for i in range(10))  # ten identical records
    al = align(s[:4], s[4:8], recs((i, 7) for i in range(10)), end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 4


def test_a_commit_at_the_end_resumes_after_the_last_record():
    s = src(10)
    al = align(s[2:10], [], recs((o, r.fp) for o, r in enumerate(s)), end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 10


def test_records_not_replicated_yet_are_not_placed():
    s = src(10)
    assert align(s[2:8], s[8:], recs((o, r.fp) for o, r in enumerate(s[:5])), end_reached=True) is None


def test_an_undecided_window_asks_for_more_instead_of_settling():
    s = src(30)
    tgt = recs((o, r.fp) for o, r in enumerate(s[:12]))
    assert align(s[5:10], s[10:20], tgt, end_reached=False) == MORE


def test_mm2_checkpoint_is_a_lower_bound_of_the_placement():
    s = recs((i, 7) for i in range(10))
    al = align([], s[:2], recs((i, 7) for i in range(10)), min_after=6, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 6


def test_a_compacted_away_record_replicated_earlier_is_skipped_as_an_extra():
    s = recs([(0, 1), (1, 2), (3, 4), (4, 5)])  # offset 2 compacted away on the source
    tgt = recs([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])
    al = align(s[:2], s[2:], tgt, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 3 and not al.extras
