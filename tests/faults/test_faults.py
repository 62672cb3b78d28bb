"""The fault suite at CI size (inside `make test`): faults injected mid-copy into MM2 on two Connect
workers, then the validation job in full mode. `make faults` runs every fault at full size and writes
docs/RELIABILITY.md (tests/faults/run_faults.py).

On the production shape (Kafka 2.8 on ZooKeeper with SCRAM/TLS, 3 brokers per side) the CI subset is
exactly-once only (it asserts both 0 missing and 0 duplicates): a rolling restart of every target broker and
the workers cut off from the target. The cut needs root (cgroup + iptables): checked first, one line if not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .netcut import NetCutUnavailable, check_available
from .suite import FAULTS, PRODUCTION_FAULTS, FaultRig, production_shape

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


# ---- the production shape: 3 brokers per side, Kafka 2.8 on ZooKeeper with SCRAM/TLS --------------------------
CI_PRODUCTION_RECORDS = int(os.environ.get("MSK_MIGRATE_FAULT_PRODUCTION_RECORDS", "10000"))
CI_CUT_SECONDS = 20.0  #: > Kafka clients' request.timeout.ms is not needed: the sockets go silent, not closed


@pytest.fixture(scope="module")
def production_results():
    """EOS: a rolling restart of the 3 target brokers, then both workers cut off from the target. One validation."""
    from msk_migrate.validation.spark_local import local_spark

    try:
        check_available()
    except NetCutUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    rig = FaultRig(REPO / ".local" / "test-faults" / f"production-{os.getpid()}", records=CI_PRODUCTION_RECORDS,
                   shape=production_shape(), netcut=True, cut_seconds=CI_CUT_SECONDS, long_fault_seconds=60)
    rig.env.down(wipe=True)
    try:
        rig.up(exactly_once=True)
        out = {f: rig.run(f, PRODUCTION_FAULTS[f], timeout=SCENARIO_TIMEOUT)
               for f in ("rolling-restart-target", "netcut-worker-target")}
        rig.validate(list(out.values()), spark=local_spark("local[2]", driver_memory="1g"))
    finally:
        rig.down()
    for r in out.values():
        print(f"fault {r.fault} ({r.mode}, 3 brokers per side): produced {r.produced}, missing {r.missing}, "
              f"duplicates {r.duplicates}, stalled {r.stalled_s} s, caught up {r.caught_up_s} s, validation {r.verdict}")
    return out


def test_rolling_restart_of_every_target_broker_loses_and_duplicates_nothing_exactly_once(production_results):
    r = production_results["rolling-restart-target"]
    assert r.produced == CI_PRODUCTION_RECORDS
    assert (r.missing, r.duplicates, r.verdict) == (0, 0, "match"), r
    assert "broker 1" in r.notes[0] and "broker 3" in r.notes[0], r.notes  # every broker was restarted


def test_workers_cut_off_from_the_target_resume_without_loss_or_duplicates(production_results):
    r = production_results["netcut-worker-target"]
    assert (r.missing, r.duplicates, r.verdict) == (0, 0, "match"), r
    assert r.stalled_s >= CI_CUT_SECONDS * 0.5, r  # the cut really stopped replication
