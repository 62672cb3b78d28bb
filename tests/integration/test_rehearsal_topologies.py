"""`make rehearse TOPOLOGY=consolidate|fan-out|active-active` end to end at CI size: several migrations at once on
local clusters (a third one, the peer, where the topology needs it), each on its own Connect worker, every step to
its verdict. One environment directory per topology, stopped and wiped after it."""

from __future__ import annotations

import pytest

from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal.topology import TOPOLOGIES, rehearse_topology

TIERS = ("kafka",)
pytestmark = pytest.mark.timeout(1800)


def _run(topology: str):
    base = LOCAL_DIR / "test-topology" / topology / "env"
    try:
        res = rehearse_topology(topology, say=lambda m: None, base_dir=base)
    finally:
        LocalEnvironment(base).down(wipe=True)
    rows = "\n".join(f"{'ok ' if s.ok else 'BAD'} {s.seconds:6.1f}s {s.name}: {s.result}" for s in res.steps)
    print(rows)  # the step table in the CI log (-s / on failure)
    assert res.ok, rows
    assert [s.name for s in res.steps] == [n for n, _ in TOPOLOGIES[topology][1]], rows
    return res


def test_consolidation_refuses_the_collision_then_both_flows_validate_and_one_cleanup_spares_the_other():
    res = _run("consolidate")
    by = {s.name: s.result for s in res.steps}
    assert "exit 2" in by["collision refused"] and "shared.events" in by["collision refused"]
    assert "fail" in by["preflight refuses it too"] and "preflight's row ok" in by["names mapped"]
    assert all(v.get("verdict") == "match" for v in res.validation.values()) and set(res.validation) == {"ops", "billing"}
    assert "kept heartbeats" in by["cleanup of one migration"]
    assert all(r["source records"] == r["target records"] for r in res.topics) and len(res.topics) == 4


def test_fan_out_proves_each_target_and_rolls_one_back_while_the_other_keeps_replicating():
    res = _run("fan-out")
    by = {s.name: s.result for s in res.steps}
    # the flow into its own source is written as localhost: refused by the cluster id the check reads
    assert "fan-out" in by["topology check"] and "exit 2" in by["topology check"] and "localhost" in by["topology check"]
    assert set(res.validation) == {"east", "west"} and all(v.get("verdict") == "match" for v in res.validation.values())
    assert "kept replicating" in by["rollback from one target"]


def test_active_active_is_loop_free_at_the_union_and_every_consumer_reads_every_record_once():
    res = _run("active-active")
    by = {s.name: s.result for s in res.steps}
    assert "exit 2" in by["loop refused without marks"] and "exit 0" in by["loop refused without marks"]
    assert "unchanged in" in by["no loop: the union, stable"] and "over 60 s" in by["no loop: the union, stable"]
    assert "none twice" in by["a producer moves first"]
    assert ", 0 twice" in by["a consumer moves"] or "declared" in by["a consumer moves"]
