"""`schemas copy` of 1,000 subjects between two real Apicurio Registries (in memory, this machine): wall time
of the first copy (every version written, read back), of `schemas verify`, and of an idempotent second copy
(nothing to write). Each subject has ``--versions`` Avro versions; one in ten refers to another subject's
schema. Writes the 'Schema registry copy' section of docs/PERFORMANCE.md.

    .venv/bin/python bench/schemas_copy_bench.py [--subjects 1000] [--versions 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.local.schema_registry import RegistryProcess, start_registry
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome, verify_outcome
from perfdoc import write_section

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


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

    # the referenced subjects first (i % 10 == 8), then the rest
    order = sorted(range(subjects), key=lambda i: (i % 10 == 9, i))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, [i for i in order if i % 10 != 9]))
        list(pool.map(one, [i for i in order if i % 10 == 9]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--versions", type=int, default=2)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="schemas-bench-"))
    source = start_registry(work, "bench-source")
    target = start_registry(work, "bench-target")
    try:
        t0 = time.monotonic()
        populate(source, args.subjects, args.versions)
        t_fill = time.monotonic() - t0
        d = Direction(RegistryClient("source", source.ccompat_url, "--source-registry"),
                      RegistryClient("target", target.ccompat_url, "--target-registry"))
        runs = {}
        for name, op in (("copy (first)", copy_outcome), ("verify", verify_outcome), ("copy (again)", copy_outcome)):
            t0 = time.monotonic()
            out = op(d, (), lambda m, start=t0: print(f"  {time.monotonic() - start:6.1f}s {m}", file=sys.stderr, flush=True))
            runs[name] = (time.monotonic() - t0, out, os.getloadavg()[0])
            assert out.exit_code == 0, (name, out.verdict, out.rows[:3])
        first = runs["copy (first)"][1]
        total = first.extra["to_copy"] + first.extra["present"]
        rows = "\n".join(f"| {name} | {secs:.1f} | {out.verdict} | {out.extra.get('copied', '-')} | {load:.1f} |"
                         for name, (secs, out, load) in runs.items())
        body = (f"{args.subjects:,} subjects x {args.versions} versions ({total:,} versions, one subject in ten with a reference), "
                f"Apicurio Registry 3.3.3 in memory on both sides, route `{first.extra.get('route')}`; populating the source "
                f"took {t_fill:.1f} s. One run per step (a copy changes the target: a repeat is a different step); load = the "
                f"1-minute load average at the step's end on {os.cpu_count()} cores.\n\n"
                f"| step | wall s | verdict | copied | load |\n|---|---:|---|---:|---:|\n{rows}\n")
        print(body)
        write_section("Schema registry copy (schemas copy)", body)
    finally:
        source.stop()
        target.stop()


if __name__ == "__main__":
    main()
