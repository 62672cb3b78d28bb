"""`make faults`: every fault of the suite, at-least-once and exactly-once, at full size; writes
docs/RELIABILITY.md with the machine, the command and one row per fault.

Two parts, each its own section of the doc (a run of one part rewrites only that section, and says so):
``single`` (one broker per side: worker and broker faults, :data:`FAULTS`) and ``production`` (Kafka 2.8 on
ZooKeeper with SCRAM/TLS, 3 brokers per side: rolling restarts, leader changes, network cuts,
:data:`PRODUCTION_FAULTS`; needs root for the cuts).

    .venv/bin/python tests/faults/run_faults.py [--parts single,production] [--records 200000]
        [--faults kill-9-worker,...] [--production-faults rolling-restart-target,...] [--modes alo,eos]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from perfdoc import machine  # noqa: E402
from tests.faults.netcut import NetCutUnavailable, check_available  # noqa: E402
from tests.faults.suite import FAULTS, PRODUCTION_FAULTS, FaultRig, production_shape  # noqa: E402

DOC = REPO / "docs" / "RELIABILITY.md"
MARK = "<!-- faults:{part} {edge} -->"


def load() -> str:
    """The machine's load average while the run ran (shared machine: time figures are upper bounds)."""
    try:
        return " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def table(results) -> str:
    rows = "\n".join(
        f"| {r.fault} | {r.mode} | {r.produced:,} | {r.missing} | {r.duplicates} | {r.stalled_s:.1f} s | "
        f"{r.caught_up_s:.1f} s | {r.verdict} |"
        for r in results
    )
    notes = "\n".join(f"- **{r.fault} ({r.mode})**: {'; '.join(r.notes)}" for r in results)
    return f"""| fault | mode | records produced | missing | duplicates | stalled (recover) | caught up | validation |
| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |
{rows}

What each fault did:

{notes}"""


def run_header(args, started: float, loads: list[str]) -> str:
    return f"""- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (run took {(time.time() - started) / 60:.1f} min)
- machine: {machine()}; load average (1/5/15 min) at the start, middle and end of the run: {'; '.join(loads)}
  (shared with other jobs while this ran: figures of time are upper bounds)
- command: `python {' '.join(sys.argv)}`"""


def render_single(results, args, started, loads) -> str:
    return f"""## Worker and broker faults on the single-broker pair

{run_header(args, started, loads)}
- setup: source Kafka (KRaft 3.9) and target Kafka (KRaft 4.1), one broker each, **two Connect workers in one
  group** (MM2, tasks.max={args.tasks}, {args.partitions} partitions per topic), auto-restart back-off 2 s doubling
  to 10 s. Each fault hits one fresh topic of {args.records:,} records once about 30 % of them are on the target.

{table(results)}

Not covered here: a worker killed **without** a replacement waits for Connect's `scheduled.rebalance.max.delay.ms`
(5 min by default) before its tasks move (incremental cooperative rebalancing). The same delay can apply
when the replacement rejoins only after the group has rebalanced without it (bound per fault: 600 s)."""


def render_production(results, args, started, loads) -> str:
    shape = production_shape()
    return f"""## Faults that production brings (3 brokers per side, Kafka 2.8 on ZooKeeper with SCRAM/TLS)

{run_header(args, started, loads)}
- setup: source {shape.describe('source')} (RF 3, `min.insync.replicas=2`) -> target {shape.describe('target')}
  (RF 3, `min.insync.replicas=2`, like MSK); **two Connect workers in one group** (internal topics RF 3), MM2
  as its SCRAM user with only its read ACLs, tasks.max={args.tasks}, {args.partitions} partitions per topic.
  Each fault hits one fresh topic of {args.records:,} records (produced acks=all, idempotent, spread over at
  least as long as the fault lasts) once about 30 % of them are on the target. Outages and cuts last
  {args.cut_seconds:.0f} s.
- network cuts: the two workers run in a cgroup v2 of their own; a cut is an iptables rule in the host's
  namespace dropping that cgroup's packets to every broker port of one cluster (tests/faults/netcut.py explains
  why not a network namespace: the harness binds and advertises 127.0.0.1). The test's own clients, the other
  cluster and every other process keep their network.

{table(results)}

Not verified here: the real MSK patching sequence (AWS waits for the cluster's health between brokers, as
this rolling restart waits for full ISR) and a cut between ECS and MSK in a VPC (security group or AZ outage):
what this measures is the worker's behaviour when its TCP to every broker of one cluster goes silent."""


def splice(doc: str, part: str, body: str) -> str:
    start, end = MARK.format(part=part, edge="start"), MARK.format(part=part, edge="end")
    block = f"{start}\n{body}\n{end}"
    if start in doc and end in doc:
        return re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _m: block, doc, flags=re.S)
    return doc.rstrip() + "\n\n" + block + "\n"


HEAD = """# Reliability

Written by `make faults` (tests/faults/run_faults.py); never by hand. Each section below is the output of
one run of its part (date, command and machine load in the section). `make test` runs a CI-size subset
(tests/faults/test_faults.py: kill -9 of a worker at-least-once and exactly-once, a task failing once; on the
3-broker ZooKeeper/SCRAM shape, exactly-once: a rolling restart of the target and a network cut from the
target).

- missing / duplicates: `msk-migrate validate --mode full` (the PySpark job, read_committed) over every
  topic of the run after the target caught up. **stalled** = longest time without any target progress after
  the fault while records waited (the time to recover); **caught up** = fault injected -> every source record
  has a target offset.
"""


def run_part(part: str, args, records: int) -> tuple[list, list[str]]:
    loads = [load()]
    if part == "single":
        rig = FaultRig(REPO / ".local" / "faults", records=records, partitions=args.partitions, tasks=args.tasks)
        catalogue, faults, eos_faults = FAULTS, args.faults, args.eos_faults
    else:
        rig = FaultRig(REPO / ".local" / "faults-production", records=records, partitions=args.partitions,
                       tasks=args.tasks, shape=production_shape(), netcut=True, cut_seconds=args.cut_seconds,
                       long_fault_seconds=args.long_fault_seconds)
        catalogue, faults, eos_faults = PRODUCTION_FAULTS, args.production_faults, args.production_eos_faults
    rig.env.down(wipe=True)
    results = []
    try:
        for mode in args.modes.split(","):
            rig.up(exactly_once=mode == "eos")
            chosen = eos_faults if mode == "eos" and eos_faults else faults
            for fault in chosen.split(","):
                results.append(rig.run(fault, catalogue[fault], timeout=900))
                loads.append(load())
        from msk_migrate.validation.spark_local import local_spark

        rig.validate(results, spark=local_spark("local[2]", driver_memory="1g"))
    finally:
        rig.down()
    loads.append(load())
    return results, [loads[0], loads[len(loads) // 2], loads[-1]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="single,production")
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--production-faults", default=",".join(PRODUCTION_FAULTS))
    ap.add_argument("--modes", default="alo,eos")
    ap.add_argument("--eos-faults", default=None, help="Faults of the exactly-once pass (default: --faults).")
    ap.add_argument("--production-eos-faults", default=None,
                    help="Production faults of the exactly-once pass (default: --production-faults).")
    ap.add_argument("--cut-seconds", type=float, default=60.0, help="How long a cut or a broker outage lasts.")
    ap.add_argument("--long-fault-seconds", type=float, default=300.0,
                    help="Producing time of a rolling restart (a third of it for a leader change / broker restart).")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if "production" in parts:
        try:
            check_available()
        except NetCutUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
    doc = DOC.read_text() if DOC.exists() else HEAD
    # The header describes both parts: always the current one; sections of parts not run stay as they were.
    doc = HEAD + "\n" + doc[doc.index("<!-- faults:"):] if "<!-- faults:" in doc else HEAD
    all_results = []
    for part in parts:
        started = time.time()
        results, loads = run_part(part, args, args.records)
        body = (render_single if part == "single" else render_production)(results, args, started, loads)
        doc = splice(doc, part, body)
        DOC.write_text(doc)
        all_results += results
    print(DOC.read_text())
    bad = [r for r in all_results if r.missing != 0 or (r.mode == "exactly-once" and r.duplicates != 0)]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
