"""The pure offset planner over windows recorded on real clusters: what the reader read in each case of
tests/integration/test_offset_sync.py (run with MSK_MIGRATE_RECORD_WINDOWS=DIR, copied to
tests/unit/data/offset_windows/), planned again here with no cluster. Each case must give the placement
the clusters proved (a consumer on the other cluster read from it: no gap, only the declared re-delivery)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from msk_migrate.offset_translation.evidence import PartitionRead
from msk_migrate.offset_translation.planner import Placement, translate_commits

RECORDED = Path(__file__).parent / "data" / "offset_windows"


#: case -> (topic suffix, partition) -> (placement, target offset, re-delivered by identity), as the integration
#: test that recorded it asserts on the clusters.
EXPECTED = {
    "replay-duplicates": {("dup", 0): (Placement.EXACT, 100, 20)},
    "replay-from-further-back": {("deep", 0): (Placement.EXACT, 100, 50)},
    "same-timestamps-repeating-keys": {("same", 0): (Placement.EXACT, 154, 0)},
    "retention-trimmed": {("ret", 0): (Placement.EXACT, 40, 0)},
    "commit-before-oldest": {("ret", 0): (Placement.EXACT, 0, 0)},
    "log-append-time": {("lat", 0): (Placement.EXACT, 75, 0)},
    "empty-partition-and-commit-at-end": {("end", 0): (Placement.AT_END, 83, 0), ("end", 1): (Placement.EMPTY, 0, 0)},
    "compacted-gap": {("cmp", 0): (Placement.EXACT, 50, 0)},
    "mm2-plain-and-transactional": {("plain", 0): (Placement.EXACT, None, 0), ("plain", 1): (Placement.EXACT, 0, 0),
                                    ("plain", 2): (Placement.AT_END, None, 0), ("txn", 0): (Placement.EXACT, None, 0),
                                    ("txn", 1): (Placement.EXACT, None, 0)},
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_recorded_windows_give_the_placement_the_clusters_proved(case):
    reads = [PartitionRead.from_dict(d) for d in json.loads((RECORDED / f"{case}.json").read_text())]
    assert [PartitionRead.from_dict(r.to_dict()) for r in reads] == reads  # the recording round-trips
    got = {(p.topic.rsplit("-", 1)[1], p.partition): (p.placement, p.target_offset, p.redelivery) for p in translate_commits(reads)}
    want = EXPECTED[case]
    assert got.keys() == want.keys()
    for tp, (placement, offset, redelivery) in want.items():
        assert got[tp][0] is placement and got[tp][2] == redelivery, (tp, got[tp])
        if offset is not None:  # through real MM2 the offsets are whatever MM2 wrote: checked on the clusters
            assert got[tp][1] == offset, (tp, got[tp])


def test_a_recorded_exact_window_loses_its_placement_when_the_record_before_the_commit_is_missing():
    """The same real window, cut where replication stood earlier: NOT_REPLICATED, never a placement."""
    (r,) = [PartitionRead.from_dict(d) for d in json.loads((RECORDED / "log-append-time.json").read_text())]
    last_before = r.before[-1]
    cut = tuple(x for x in r.target_recs if x.fp != last_before.fp and x.offset < 60)
    (p,) = translate_commits([replace(r, target_recs=cut, target_end_reached=True)])
    assert p.placement is Placement.NOT_REPLICATED and p.target_offset is None
