"""`make rehearse` end to end with the default (local) Connect worker: every runbook step, forward and back.

The image tier runs the same rehearsal with the worker from the built image; this one guards the default path,
which is the first command a new user runs.
"""

from __future__ import annotations

import os

from msk_migrate.rehearsal import DEMO_TOPICS, MOVED_PRODUCER_RECORDS, ROLLBACK_TOPIC, rehearse

TIERS = ("kafka", "spark")

STEPS = ["environment up", "produce demo data", "preflight", "apply connectors", "lag until in sync", "offsets translated",
         "validate", "cutover check", "move consumer groups", "move producers", "reverse replication", "roll a group back",
         "validate in reverse", "cleanup"]


def assert_every_step_to_a_match_both_ways_with_exact_cutovers(res) -> None:
    """Every step ok in order, validation matches both ways, and both cutovers place the groups exactly
    (issue 22): a consumer on the other cluster reads exactly the records after the commit point."""
    failed = [s.to_dict() for s in res.steps if not s.ok]
    assert not failed, failed
    assert [s.name for s in res.steps] == STEPS
    assert res.validation["verdict"] == "match"
    assert res.reverse_validation["verdict"] == "match"
    assert res.reverse_validation["records_compared"] == DEMO_TOPICS[ROLLBACK_TOPIC][1] + MOVED_PRODUCER_RECORDS
    moved = next(s for s in res.steps if s.name == "move consumer groups").result
    back = next(s for s in res.steps if s.name == "roll a group back").result
    assert "placed exactly" in moved and "0 re-delivered, no gap" in moved
    assert "placed exactly on the source" in back and "0 re-delivered, no gap" in back


def test_rehearsal_with_the_local_worker_runs_every_step_to_a_match_both_ways(tmp_path):
    from msk_migrate.local.harness import LocalEnvironment

    base = tmp_path / "env"
    os.environ.pop("MSK_MIGRATE_WORKER", None)
    try:
        res = rehearse(with_monitoring=False, validate=True, base_dir=base, worker="local")
        assert_every_step_to_a_match_both_ways_with_exact_cutovers(res)
    finally:
        LocalEnvironment(base).down(wipe=True)
