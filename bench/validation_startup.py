"""Where the validation job's fixed cost goes (issue 12, item 5: the measured reason when the job is
slower than the single-process script): one process, a 100-record topic pair, ``msk-migrate
validate``'s phases timed from its progress messages, then the same checksum repeated warm in the same
session. The difference between the first checksum and the warm ones is the JVM's cold start (class
loading, JIT, Janino compiling the generated code, the Kafka source's first consumers and admin
clients) that every ``msk-migrate validate`` process pays once and the script never does.

    .venv/bin/python bench/validation_startup.py [--repeat 3]

Starts a brokers-only local environment (.local/bench-startup), stops it afterwards. Figures go to
docs/PERFORMANCE.md under '## Validation job: fixed start-up cost'.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(BENCH))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="warm checksum runs in the same session")
    args = ap.parse_args()
    t0 = time.time()  # imports of the job's modules (pyspark is imported later, by the job)
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from msk_migrate.config import ClusterEndpoint
    from msk_migrate.local.harness import LocalEnvironment
    from msk_migrate.paths import LOCAL_DIR
    from msk_migrate.validation import ValidationRequest, run_validation
    from perfdoc import write_section

    t_imports = time.time()

    env = LocalEnvironment(LOCAL_DIR / "bench-startup" / "env", with_connect=False)
    env.down(wipe=True)
    status = env.up()
    try:
        src, tgt = status["source"]["bootstrap_servers"], status["target"]["bootstrap_servers"]
        ts0 = int(time.time() * 1000) - 3_600_000
        for bs in (src, tgt):
            admin = AdminClient({"bootstrap.servers": bs})
            admin.create_topics([NewTopic("startup", 2, 1)])["startup"].result()
            p = Producer({"bootstrap.servers": bs})
            for i in range(100):
                p.produce("startup", key=b"k%d" % i, value=b"v" * 100, partition=i % 2, timestamp=ts0 + i)
            assert p.flush(60) == 0
        load0 = os.getloadavg()[0]
        req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                                target=ClusterEndpoint(alias="target", bootstrap_servers=tgt),
                                topics=["startup"], mode="checksum", until_timestamp_ms=int(time.time() * 1000))
        marks: list[tuple[float, str]] = []
        t1 = time.time()
        rep = run_validation(req, progress=lambda m: marks.append((time.time(), m)))
        t2 = time.time()
        assert rep.exit_code == 0, rep.verdict
        phases: dict[str, float] = {}
        for (t, m), (t_next, _) in zip(marks, [*marks[1:], (t2, "")], strict=True):
            key = ("Spark start" if m.startswith("starting local Spark") else
                   "first checksum (cold JVM)" if m.startswith("checksum") else
                   "plan (metadata)" if m.startswith(("connecting", "reading metadata")) else "report")
            phases[key] = phases.get(key, 0.0) + (t_next - t)
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        warm = []
        for _ in range(args.repeat):
            t = time.time()
            assert run_validation(req, spark=spark).exit_code == 0
            warm.append(time.time() - t)
        warm_min = min(warm)
        load1 = os.getloadavg()[0]
    finally:
        env.down(wipe=True)
    rows = [f"| Python imports | {t_imports - t0:.1f} s |", *(f"| {k} | {v:.1f} s |" for k, v in phases.items())]
    body = "\n".join([
        "One process, a 100-record topic pair (2 partitions; brokers-only local environment), "
        "`run_validation(..., mode=\"checksum\")` as `msk-migrate validate` runs it, phases timed from its "
        f"progress messages; then the same checksum {args.repeat}× warm in the same session (fastest shown). "
        "The first checksum minus a warm one is the cold-JVM cost every `msk-migrate validate` process pays "
        "once (class loading, JIT, Janino compiling the generated code, the Kafka source's first consumers "
        "and admin clients); the confluent-kafka script pays none of it.",
        "",
        "| phase | wall time |",
        "| --- | ---: |",
        *rows,
        f"| whole first run | {t2 - t1:.1f} s |",
        f"| same checksum, warm session (min of {args.repeat}) | {warm_min:.1f} s |",
        f"| **cold-JVM cost of the first checksum** | **{phases.get('first checksum (cold JVM)', 0) - warm_min:.1f} s** |",
        "",
        f"1-minute load average {load0:.1f} at the start and {load1:.1f} at the end (other work shares the "
        "2 cores; absolute seconds are noisy).",
    ])
    write_section("Validation job: fixed start-up cost", body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
