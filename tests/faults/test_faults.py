"""The fault suite at CI size (inside `make test`): faults injected mid-copy into MM2 on two Connect
workers, then the validation job in full mode. `make faults` runs every fault at full size and writes
docs/RELIABILITY.md (tests/faults/run_faults.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .suite import FAULTS, FaultRig

# The module fixture injects every CI-size fault and validates once: bound it as a whole (each scenario is bounded too).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(2700)]

REPO = Path(__file__).resolve().parents[2]
CI_RECORDS = int(os.environ.get("MSK_MIGRATE_FAULT_RECORDS", "20000"))


@pytest.fixture(scope="module")
def rig():
    r = FaultRig(REPO / ".local" / "test-faults" / f"session-{os.getpid()}", records=CI_RECORDS)
    r.env.down(wipe=True)
    yield r
    r.down()


#: Bound of one scenario. A killed worker's tasks can wait for Connect's scheduled.rebalance.max.delay.ms
#: (5 min by default) when its replacement rejoins after the group already rebalanced, so 600 s, not less.
SCENARIO_TIMEOUT = 600


@pytest.fixture(scope="module")
def results(rig):
    """ALO: kill -9 of a worker, a task failing once; EOS: kill -9 of a worker. One validation run."""
    from msk_migrate.validation.spark_local import local_spark

    out = {}
    rig.up(exactly_once=False)
    for fault in ("kill-9-worker", "task-fails-once"):
        out[("at-least-once", fault)] = rig.run(fault, FAULTS[fault], timeout=SCENARIO_TIMEOUT)
    rig.up(exactly_once=True)
    out[("exactly-once", "kill-9-worker")] = rig.run("kill-9-worker", FAULTS["kill-9-worker"], timeout=SCENARIO_TIMEOUT)
    spark = local_spark("local[2]", driver_memory="1g")
    rig.validate(list(out.values()), spark=spark)
    for r in out.values():  # shown with -s / in the CI log: the figures behind the assertions
        print(f"fault {r.fault} ({r.mode}): produced {r.produced}, missing {r.missing}, duplicates {r.duplicates}, "
              f"stalled {r.stalled_s} s, caught up {r.caught_up_s} s, validation {r.verdict}")
    return out


def test_no_record_is_lost_when_one_of_two_workers_is_killed(results):
    r = results[("at-least-once", "kill-9-worker")]
    assert r.missing == 0, r
    assert r.produced == CI_RECORDS and r.duplicates is not None


def test_a_task_failing_once_recovers_by_auto_restart_without_loss(results):
    r = results[("at-least-once", "task-fails-once")]
    assert r.missing == 0, r


def test_exactly_once_mode_has_no_duplicates_after_kill_9_of_a_worker(results):
    r = results[("exactly-once", "kill-9-worker")]
    assert r.missing == 0, r
    assert r.duplicates == 0, r
    assert r.verdict == "match", r
