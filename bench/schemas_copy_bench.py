"""`schemas copy` of 1,000 subjects between real Apicurio Registries (in memory, this machine): wall time of the
first copy (every version written, read back), of `schemas verify`, and of a second copy that finds nothing to
do. Each subject has ``--versions`` Avro versions; one in ten refers to another subject's schema. Each round
copies into a fresh target (a copy changes its target, so the three steps keep their order within a round);
the table gives the median of ``--rounds`` rounds and every run. A last round under tracemalloc gives the
peak Python memory of each step (that round's times are not counted: tracing slows Python). Writes the
'Schema registry copy (schemas copy)' section of docs/PERFORMANCE.md.

    .venv/bin/python bench/schemas_copy_bench.py [--subjects 1000] [--versions 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.local.schema_registry import RegistryProcess, start_registry
from msk_migrate.outcome import Outcome
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome, verify_outcome
from perfdoc import write_section

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
STEPS = (("copy (first)", copy_outcome), ("verify", verify_outcome), ("copy (again: nothing to do)", copy_outcome))


def populate(source: RegistryProcess, subjects: int, versions: int) -> None:
    session = requests.Session()

    def one(i: int) -> None:
        for v in range(1, versions + 1):
            fields = [{"name": f"f{j}", "type": "int", "default": 0} for j in range(v)]
            body: dict = {"schema": json.dumps({"type": "record", "name": f"R{i}", "namespace": "bench", "fields": fields})}
            if i % 10 == 9 and v == 1:  # a reference to the previous subject's first version
                body = {"schema": json.dumps({"type": "record", "name": f"R{i}", "namespace": "bench",
                                              "fields": [{"name": "ref", "type": f"bench.R{i - 1}"}]}),
                        "references": [{"name": f"bench.R{i - 1}", "subject": f"bench-{i - 1:05d}-value", "version": 1}]}
            session.post(f"{source.ccompat_url}/subjects/bench-{i:05d}-value/versions", json=body, headers=CT, timeout=30).raise_for_status()

    # the referenced subjects first (every i % 10 != 9), then the ones that refer to them
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, [i for i in range(subjects) if i % 10 != 9]))
        list(pool.map(one, [i for i in range(subjects) if i % 10 == 9]))


def one_round(source: RegistryProcess, work: Path, n: int, traced: bool = False) -> dict[str, tuple[float, Outcome, float, int]]:
    """The three steps into a fresh target: name -> (wall s, outcome, 1-min load at the end, traced peak bytes)."""
    target = start_registry(work, f"bench-target-{n}", None, 180)
    try:
        d = Direction(RegistryClient("source", source.ccompat_url, "--source-registry"),
                      RegistryClient("target", target.ccompat_url, "--target-registry"))
        out = {}
        for name, op in STEPS:
            if traced:
                tracemalloc.start()
            t0 = time.monotonic()
            got = op(d, (), lambda m, start=t0: print(f"  {time.monotonic() - start:6.1f}s {m}", file=sys.stderr, flush=True))
            secs = time.monotonic() - t0
            peak = tracemalloc.get_traced_memory()[1] if traced else 0
            if traced:
                tracemalloc.stop()
            assert got.exit_code == 0, (name, got.verdict, got.rows[:3])
            out[name] = (secs, got, os.getloadavg()[0], peak)
            print(f"round {n}: {name}: {secs:.2f} s ({got.verdict})", file=sys.stderr, flush=True)
        return out
    finally:
        target.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--versions", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--section", default="Schema registry copy (schemas copy)",
                    help="the docs/PERFORMANCE.md section written (a second run under its own title keeps the first)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="schemas-bench-"))
    source = start_registry(work, "bench-source", None, 180)
    try:
        t0 = time.monotonic()
        populate(source, args.subjects, args.versions)
        t_fill = time.monotonic() - t0
        rounds = [one_round(source, work, n) for n in range(1, args.rounds + 1)]
        mem = one_round(source, work, args.rounds + 1, traced=True)
    finally:
        source.stop()
    first = rounds[0]["copy (first)"][1]
    total = first.extra["to_copy"] + first.extra["present"]
    lines = []
    for name, _ in STEPS:
        runs = [r[name] for r in rounds]
        med = statistics.median(s for s, *_ in runs)
        lines.append(f"| {name} | {med:.2f} | {', '.join(f'{s:.2f}' for s, *_ in runs)} | {runs[0][1].verdict} | "
                     f"{runs[0][1].extra.get('copied', '-')} | {max(x[2] for x in runs):.1f} | {mem[name][3] / 2**20:.0f} |")
    body = (f"{args.subjects:,} subjects x {args.versions} versions ({total:,} versions, one subject in ten with a reference), "
            f"Apicurio Registry 3.3.3 in memory on both sides, route `{first.extra.get('route')}`: each registry read in one "
            f"export (`/apis/registry/v3/admin/export`), the versions written in one import archive, read back from one export. "
            f"Populating the source through its Confluent API took {t_fill:.1f} s. {args.rounds} rounds, each into a fresh "
            f"target, the steps in this order within a round; median and every run. Load = the highest 1-minute load average "
            f"at a step's end on {os.cpu_count()} cores. Peak MiB = Python's traced peak during the step (tracemalloc, one "
            f"further round, not timed).\n\n"
            f"| step | median s | runs s | verdict | copied | load | peak MiB |\n|---|---:|---|---|---:|---:|---:|\n"
            + "\n".join(lines) + "\n")
    print(body)
    write_section(args.section, body)


if __name__ == "__main__":
    main()
