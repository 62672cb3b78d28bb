"""The alignment's plain-copy case (a run of the target equal to the wanted records) is decided at once; these
show that what the record-by-record walk exists for is still caught around it: MM2's checkpoint refusing an
earlier copy, a replayed record inside the run counted as re-delivered, a second copy of an after-commit
record counted as a duplicate."""

from __future__ import annotations

from msk_migrate.offset_translation.locate import Alignment, Rec, align


def source(n: int) -> list[Rec]:
    return [Rec(i, 1000 + i) for i in range(n)]


def dense(records: list[Rec]) -> list[Rec]:
    """The records as the target holds them: the same identities at consecutive offsets from 0."""
    return [Rec(o, r.fp) for o, r in enumerate(records)]


def test_a_plain_copy_places_the_group_on_the_record_after_the_commit_point():
    s = source(30)
    al = align(s[10:20], s[20:30], dense(s), end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 20
    assert al.matched == [(i, i, 1000 + i) for i in range(10, 30)]
    assert not al.redelivered and not al.duplicates and not al.extras


def test_a_plain_copy_below_the_checkpoint_is_refused_and_the_replayed_copy_above_it_is_the_placement():
    s = source(30)
    target = dense(s + s[10:30])  # a restart re-copied records 10..29 at offsets 30..49
    al = align(s[10:20], s[20:30], target, min_after=35, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 40
    assert al.matched == [(i, i + 20, 1000 + i) for i in range(10, 30)]


def test_a_record_from_before_the_commit_point_replayed_inside_the_run_is_counted_as_re_delivered():
    s = source(30)
    target = dense([*s[:22], s[15], *s[22:]])  # record 15 written again after record 21
    al = align(s[10:20], s[20:30], target, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 20
    assert al.redelivered == [(22, 1015)] and not al.duplicates


def test_a_second_copy_of_a_record_after_the_commit_point_inside_the_run_is_a_duplicate():
    s = source(30)
    target = dense([*s[:25], s[22], *s[25:]])  # record 22 written twice
    al = align(s[10:20], s[20:30], target, end_reached=True)
    assert isinstance(al, Alignment) and al.target_offset == 20
    assert al.duplicates == [(25, 1022)] and not al.redelivered
