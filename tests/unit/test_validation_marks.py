"""The validator's account of copy marks: exactly the trailing mark of the flow's source is removed, nothing else."""

from __future__ import annotations

from msk_migrate.kafka.fingerprint import fingerprint
from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.copy_marks import MarkState, came_from, strip_mark

MARK = (mark_header("onprem"), b"onprem")


def test_the_trailing_mark_with_its_value_is_removed_and_the_copy_fingerprints_as_its_source_record():
    own = [("trace", b"1"), ("trace", None)]
    headers, state = strip_mark([*own, MARK], "onprem")
    assert state is MarkState.OK and headers == own
    assert fingerprint(b"k", b"v", headers, 5) == fingerprint(b"k", b"v", own, 5)


def test_a_copy_of_a_record_without_headers_strips_to_no_headers():
    headers, state = strip_mark([MARK], "onprem")
    assert state is MarkState.OK and headers is None
    assert fingerprint(b"k", b"v", headers, 5) == fingerprint(b"k", b"v", None, 5)


def test_a_record_without_the_mark_is_missing_and_kept_as_is():
    headers, state = strip_mark([("a", b"1")], "onprem")
    assert state is MarkState.MISSING and headers == [("a", b"1")]
    assert strip_mark(None, "onprem") == (None, MarkState.MISSING)


def test_the_mark_with_another_value_or_not_last_is_wrong_and_nothing_is_removed():
    assert strip_mark([(MARK[0], b"msk")], "onprem")[1] is MarkState.WRONG
    moved = [MARK, ("a", b"1")]
    assert strip_mark(moved, "onprem") == (moved, MarkState.WRONG)


def test_only_one_mark_is_removed_and_another_flows_earlier_mark_is_compared():
    forwarded = [("a", b"1"), (mark_header("dc1"), b"dc1"), MARK]
    headers, state = strip_mark(forwarded, "onprem")
    assert state is MarkState.OK and headers == forwarded[:2]
    twice = [("a", b"1"), MARK, MARK]
    assert strip_mark(twice, "onprem") == (twice[:2], MarkState.OK)


def test_a_source_record_that_came_from_the_target_is_recognised_by_its_mark():
    assert came_from([("a", b"1"), (mark_header("msk"), b"msk")], "msk")
    assert not came_from([("a", b"1"), MARK], "msk")
    assert not came_from(None, "msk")
