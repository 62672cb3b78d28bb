"""`make faults`: every fault of the suite, at-least-once and exactly-once, at full size; writes
docs/RELIABILITY.md with the machine, the command and one row per fault.

    .venv/bin/python tests/faults/run_faults.py [--records 200000] [--faults kill-9-worker,...] [--modes alo,eos]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from perfdoc import machine  # noqa: E402
from tests.faults.suite import FAULTS, FaultRig  # noqa: E402

DOC = REPO / "docs" / "RELIABILITY.md"


def render(results, args, started: float) -> str:
    rows = "\n".join(
        f"| {r.fault} | {r.mode} | {r.produced:,} | {r.missing} | {r.duplicates} | {r.stalled_s:.1f} s | "
        f"{r.caught_up_s:.1f} s | {r.verdict} |"
        for r in results
    )
    notes = "\n".join(f"- **{r.fault} ({r.mode})**: {'; '.join(r.notes)}" for r in results)
    cmd = "python " + " ".join(sys.argv)
    return f"""# Reliability

Written by `make faults` ({Path(__file__).relative_to(REPO)}); never by hand. `make test` runs the same suite at
CI size (tests/faults/test_faults.py: kill -9 at-least-once and exactly-once, a task failing once).

- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (run took {(time.time() - started) / 60:.1f} min)
- machine: {machine()} (shared with other jobs while this ran: figures of time are upper bounds)
- command: `{cmd}`
- setup: source Kafka (KRaft 3.9) and target Kafka (KRaft 4.1), **two Connect workers in one group** (MM2,
  tasks.max={args.tasks}, {args.partitions} partitions per topic), auto-restart back-off 2 s doubling to 10 s.
  Each fault hits one fresh topic of {args.records:,} records once about 30 % of them are on the target.
- missing / duplicates: `msk-migrate validate --mode full` (the PySpark job, read_committed) over every
  topic of the run after the target caught up. **stalled** = longest time without any target progress after
  the fault (the time to recover); **caught up** = fault injected -> every source record has a target offset.

| fault | mode | records produced | missing | duplicates | stalled (recover) | caught up | validation |
| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |
{rows}

What each fault did:

{notes}

Not covered here: an AZ outage or network partition of the real MSK/ECS deployment (no AWS in this
environment); a worker killed **without** a replacement waits for Connect's `scheduled.rebalance.max.delay.ms`
(5 min by default) before its tasks move (incremental cooperative rebalancing). The same delay can apply
when the replacement rejoins only after the group has rebalanced without it (bound per fault: 600 s).
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--modes", default="alo,eos")
    ap.add_argument("--eos-faults", default=None, help="Faults of the exactly-once pass (default: --faults).")
    args = ap.parse_args()
    started = time.time()
    rig = FaultRig(REPO / ".local" / "faults", records=args.records, partitions=args.partitions, tasks=args.tasks)
    rig.env.down(wipe=True)
    results = []
    try:
        for mode in args.modes.split(","):
            rig.up(exactly_once=mode == "eos")
            faults = args.eos_faults if mode == "eos" and args.eos_faults else args.faults
            for fault in faults.split(","):
                results.append(rig.run(fault, FAULTS[fault]))
        from msk_migrate.validation.spark_local import local_spark

        rig.validate(results, spark=local_spark("local[2]", driver_memory="1g"))
    finally:
        rig.down()
    DOC.write_text(render(results, args, started))
    print(DOC.read_text())
    bad = [r for r in results if r.missing != 0 or (r.mode == "exactly-once" and r.duplicates != 0)]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
