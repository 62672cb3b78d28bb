"""The two-origin certificate of `offsets sync` (a flow that marks its copies): its verdict follows the partitions
exactly (exact only when every one is), re-delivery is counted only where proven, and its digest seals the body."""

from __future__ import annotations

import hashlib
import json

import pytest

from msk_migrate.offset_translation.two_origin import translate_position
from msk_migrate.offset_translation.two_origin_sync import TwoOriginPlacement, certificate

from .test_two_origin_offsets import side

pytestmark = pytest.mark.unit


def _placement(part: int, frm: str, pos: int, to: str, action: str = "write") -> TwoOriginPlacement:
    return TwoOriginPlacement("app.events", part, translate_position(side(frm), pos, side(to)), None, action)


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
