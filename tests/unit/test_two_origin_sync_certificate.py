"""The two-origin certificate of `offsets sync` (a flow that marks its copies): its verdict follows the partitions
exactly (exact only when every one is), re-delivery is counted only where proven, and its digest seals the body."""

from __future__ import annotations

import hashlib
import json

import pytest

from msk_migrate.offset_translation.certificate import check, read, write_json
from msk_migrate.offset_translation.planner import Action
from msk_migrate.offset_translation.request import SyncRequest
from msk_migrate.offset_translation.result import SyncResult
from msk_migrate.offset_translation.two_origin import translate_position
from msk_migrate.offset_translation.two_origin_sync import TwoOriginPlacement, certificate, decide

from .test_two_origin_offsets import side

pytestmark = pytest.mark.unit


def _placement(part: int, frm: str, pos: int, to: str, action: Action = Action.WRITE) -> TwoOriginPlacement:
    return TwoOriginPlacement("app.events", part, translate_position(side(frm), pos, side(to), frm_alias="b", to_alias="a"), None, action)


def test_every_partition_exact_is_an_exact_certificate_whose_digest_seals_the_body():
    cert = certificate("g", "source->target", "s:9092", "t:9092", [_placement(0, "abba" "ab", 4, "aabb" "ba")],
                       written=True, dry_run=False)
    assert cert["verdict"] == "exact" and cert["totals"]["exact"] == 1 and cert["totals"]["redelivered"] == 0
    body = {k: v for k, v in cert.items() if k != "digest"}
    assert cert["digest"] == hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert cert["partitions"][0]["offset"] == 4 and cert["partitions"][0]["exact"] is True


def test_one_partition_with_declared_redelivery_makes_it_partial_and_counts_the_records():
    exact = _placement(0, "abba" "ab", 4, "aabb" "ba")
    redelivering = _placement(1, "ab" "ba", 2, "bbaa")
    cert = certificate("g", "source->target", "s", "t", [exact, redelivering], written=False, dry_run=True)
    assert cert["verdict"] == "partial" and cert["totals"]["redelivered"] == 1 and cert["totals"]["to_write"] == 2
    assert cert["dry_run"] is True and cert["written"] is False


def test_no_placement_is_never_an_exact_certificate():
    assert certificate("g", "source->target", "s", "t", [], written=False, dry_run=False)["verdict"] == "not-proven"


def test_a_two_origin_placement_is_decided_in_the_one_origin_vocabulary():
    exact = translate_position(side("abba" "ab"), 4, side("aabb" "ba"), frm_alias="b", to_alias="a")
    assert exact.proven and exact.offset == 4
    assert decide(exact, None, force=False) is Action.WRITE
    assert decide(exact, 4, force=False) is Action.UNCHANGED
    assert decide(exact, 5, force=False) is Action.BACKWARDS_REFUSED
    assert decide(exact, 5, force=True) is Action.BACKWARDS_FORCED and Action.BACKWARDS_FORCED.writes
    lost = translate_position(side("abab"), 4, [r for r in side("aabb") if r.fp != 2000], frm_alias="b", to_alias="a")
    assert not lost.proven and decide(lost, None, force=True) is Action.NONE


def test_a_sync_result_with_no_partition_is_never_exact_and_exits_1():
    cert = certificate("g", "source->target", "s", "t", [], written=False, dry_run=False)
    res = SyncResult(SyncRequest("g"), "two-origin", (), 0, cert)
    assert not res.exact and res.exit_code == 1 and res.verdict == "not-proven" and res.to_write == 0
    one = _placement(0, "abba" "ab", 4, "aabb" "ba")
    res = SyncResult(SyncRequest("g"), "two-origin", (one,), 1, _written(one))
    assert res.exact and res.exit_code == 0 and res.rows()[0]["action"] == "write"


# ---- the cutover gate's check (`cutover check --certificate`) on a two-origin certificate --------------------------
def _written(*placements: TwoOriginPlacement) -> dict:
    return certificate("g", "source->target", "s", "t", list(placements), written=True, dry_run=False)


def test_the_gate_accepts_an_exact_written_two_origin_certificate_whose_offsets_are_still_committed():
    cert = _written(_placement(0, "abba" "ab", 4, "aabb" "ba"))
    ok, why = check(cert, "g", {("app.events", 0): 4})
    assert ok and "exact by origin" in why, why


@pytest.mark.parametrize("edit, committed, words", [
    (lambda c: c["partitions"][0].update(offset=3), {("app.events", 0): 4}, "digest does not match"),
    (lambda c: None, {("app.events", 0): 5}, "committed 5, certificate wrote 4"),
    (lambda c: None, {}, "committed None, certificate wrote 4"),
])
def test_the_gate_refuses_an_edited_two_origin_certificate_or_one_whose_offsets_moved(edit, committed, words):
    cert = _written(_placement(0, "abba" "ab", 4, "aabb" "ba"))
    edit(cert)
    ok, why = check(cert, "g", committed)
    assert not ok and words in why, why


def test_the_gate_refuses_a_two_origin_certificate_that_re_delivers_or_was_a_dry_run():
    redelivering = _written(_placement(0, "abba" "ab", 4, "aabb" "ba"), _placement(1, "ab" "ba", 2, "bbaa"))
    ok, why = check(redelivering, "g", {("app.events", 0): 4, ("app.events", 1): 0})
    assert not ok and "1 partition(s) not exact, e.g. app.events[1]" in why, why
    dry = certificate("g", "source->target", "s", "t", [_placement(0, "abba" "ab", 4, "aabb" "ba")], written=False, dry_run=True)
    assert check(dry, "g", {("app.events", 0): 4}) == (False, "certificate of a dry run (nothing was written)")


def test_a_two_origin_certificate_is_read_back_as_a_certificate(tmp_path):
    cert = _written(_placement(0, "abba" "ab", 4, "aabb" "ba"))
    write_json(cert, str(tmp_path))
    assert read(str(tmp_path), "g") == cert


def test_a_two_origin_certificate_names_its_clusters_and_the_gate_refuses_another_target():
    cert = certificate("g", "source->target", "s", "t", [_placement(0, "abba" "ab", 4, "aabb" "ba")], written=True,
                       dry_run=False, ids={"from_cluster_id": "A", "to_cluster_id": "B"})
    assert check(cert, "g", {("app.events", 0): 4}, "B")[0]
    ok, why = check(cert, "g", {("app.events", 0): 4}, "C")
    assert not ok and "move to cluster B, not to this flow's C" in why, why
