"""Validation job benchmarks, side by side in one run on the same data (issue 12):

- the job (``msk-migrate validate --mode checksum``, a process of its own, start-up included; its native
  checksum pass, and the same job with ``--engine spark``) vs the 40-line script a user would write
  instead (bench/baseline_compare.py), at each record count;
- checksum ÷ a bare Spark read of the same fields of both clusters (same session, same options);
- ``auto`` on a data set where one partition of many differs ÷ ``full`` (smallest record count), with
  the Spark and the native checksum pass;
- the packaged job on a Spark standalone cluster (master + 2 workers × 1 core, executors in their own
  JVMs) vs the same spark-submit on ``local[2]``;
- peak RSS of the driver and of the executor JVMs vs record count (standalone run).

Starts a brokers-only local environment (.local/bench-validation), writes N records (~100-byte values,
12 partitions) to a topic on the source and the target with confluent-kafka. Figures go to
docs/PERFORMANCE.md under '## Validation job'.

    .venv/bin/python bench/validation_bench.py [--records 1000000,3000000] [--partitions 12] [--keep]
    make bench-validation-full   # adds 10,000,000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(BENCH))
VENV_BIN = Path(sys.executable).parent


def produce(bootstrap: str, topic: str, n: int, partitions: int, ts0: int, change: int | None = None) -> float:
    """n records round-robin over the partitions; ``change``: the index of a record written with
    another value (the one differing partition)."""
    from confluent_kafka import Producer

    from msk_migrate.kafka.produce import produce_waiting

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                  "compression.type": "lz4", "enable.idempotence": False, "acks": "1",
                  "queue.buffering.max.messages": 500_000, "max.in.flight.requests.per.connection": 1})
    t = time.time()
    value = b"x" * 90
    for i in range(n):
        v = value + b"%010d" % i if i != change else b"changed" * 14
        produce_waiting(p, topic, 0.05, key=b"key-%09d" % i, value=v, partition=i % partitions,
                        timestamp=ts0 + i // 100, headers=[("h", b"%d" % (i % 7))] if i % 10 == 0 else None)
    assert p.flush(300) == 0
    return time.time() - t


class PeakRss:
    """Samples, every 0.2 s, the RSS of every java process in the process trees under ``roots`` (pids:
    the command this bench started, and the standalone workers, whose children are the executors);
    keeps the peak per role: ``executor`` (CoarseGrainedExecutorBackend) or ``driver`` (any other JVM
    of those trees: SparkSubmit / the pyspark gateway).

    Found by parentage, not by a tag in the command line: the previous sampler matched a
    ``-Dmsk.bench`` tag and an argv[0] ending in ``java``, and never saw the executor JVMs."""

    def __init__(self, roots: list[int] | None = None) -> None:
        self.roots: set[int] = set(roots or [])
        self.peak: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def _role(cmdline: str) -> str:
        return "executor" if "CoarseGrainedExecutorBackend" in cmdline else "driver"

    def _sample(self) -> None:
        parent: dict[int, int] = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                parent[int(pid)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue

        def under_roots(pid: int) -> bool:
            seen = 0
            while pid > 1 and seen < 64:
                if pid in self.roots:
                    return True
                pid, seen = parent.get(pid, 0), seen + 1
            return False

        for pid in parent:
            if not under_roots(pid):
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                exe = cmd.split(" ")[0]
                native = "python" in exe and "java" not in exe  # msk-migrate and its native checksum workers
                if (not native and "java" not in exe) or "org.apache.spark.deploy.master" in cmd \
                        or "org.apache.spark.deploy.worker.Worker" in cmd:  # the cluster's own daemons
                    continue
                rss = next(int(ln.split()[1]) for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
                           if ln.startswith("VmRSS:"))
            except (OSError, StopIteration, ValueError):
                continue
            role = "native" if native else self._role(cmd)
            key = role if role == "driver" else f"{role}-{pid}"
            self.peak[key] = max(self.peak.get(key, 0), rss)

    def __enter__(self) -> PeakRss:
        def loop() -> None:
            while not self._stop.wait(0.2):
                self._sample()

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(5)

    def mib(self, role: str) -> float:
        vals = [v for k, v in self.peak.items() if k.startswith(role)]
        return max(vals) / 1024 if vals else float("nan")


def timed(cmd: list[str], expect: int, env: dict[str, str] | None = None,
          mem: PeakRss | None = None) -> tuple[float, str]:
    t = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if mem is not None:
        mem.roots.add(proc.pid)
    try:
        out, err = proc.communicate(timeout=3600)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate(timeout=30)
    secs = time.time() - t
    assert proc.returncode == expect, f"{cmd[:3]}: rc {proc.returncode}: {err[-2000:]}"
    return secs, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", default="1000000,3000000", help="comma-separated record counts")
    ap.add_argument("--partitions", type=int, default=12)
    ap.add_argument("--keep", action="store_true", help="leave the bench clusters running")
    args = ap.parse_args()
    sizes = [int(x) for x in args.records.split(",")]

    from confluent_kafka.admin import AdminClient, NewTopic
    from pyspark.sql import functions as F

    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.access.spark_options import spark_kafka_options
    from msk_migrate.config import ClusterEndpoint
    from msk_migrate.local.harness import LocalEnvironment
    from msk_migrate.paths import LOCAL_DIR
    from msk_migrate.validation import ValidationRequest, run_validation
    from msk_migrate.validation.checksum import checksum
    from msk_migrate.validation.job_request import encode
    from msk_migrate.validation.kafka_meta import ClusterMeta, latest
    from msk_migrate.validation.package import build
    from msk_migrate.validation.reading import ReadPlan, read_records
    from msk_migrate.validation.spark_local import local_spark
    from msk_migrate.validation.spark_standalone import StandaloneCluster, spark_home
    from perfdoc import write_section

    base = LOCAL_DIR / "bench-validation"
    env = LocalEnvironment(base / "env", with_connect=False)
    env.down(wipe=True)
    status = env.up()
    cluster = StandaloneCluster(base / "standalone", workers=2, cores=1, memory="1500m")
    rows: list[dict] = []
    try:
        src, tgt = status["source"]["bootstrap_servers"], status["target"]["bootstrap_servers"]
        ts0 = int(time.time() * 1000) - 3_600_000
        dist = base / "dist"
        build(dist)
        cluster.start()
        spark = local_spark("local[2]")
        load0 = os.getloadavg()[0]
        for idx, n in enumerate(sizes):
            topic = f"bench-{n}-{uuid.uuid4().hex[:6]}"
            for bs in (src, tgt):
                admin = AdminClient({"bootstrap.servers": bs})  # keep the handle until the result
                admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result()
            time.sleep(1)
            change = 5 * args.partitions + 3 if idx == 0 else None  # one record of partition 3 differs
            t_p = produce(src, topic, n, args.partitions, ts0) + produce(tgt, topic, n, args.partitions, ts0, change)
            print(f"{n:,} records per cluster written in {t_p:.0f}s", flush=True)
            expect = 1 if change is not None else 0
            row: dict = {"n": n, "differs": change is not None}
            tag = f"msk-bench-{os.getpid()}"
            cli = ["--source-bootstrap-servers", src, "--target-bootstrap-servers", tgt, "--topics", topic,
                   "--mode", "checksum", "--no-report", "--output", "json"]

            row["load"] = os.getloadavg()[0]  # at the start of the row
            row["script"], _ = timed([sys.executable, str(BENCH / "baseline_compare.py"), src, tgt, topic], expect)
            jenv = {**os.environ, "JDK_JAVA_OPTIONS": f"-Dmsk.bench={tag}"}
            # the job as a user runs it locally: engine auto = the native checksum pass (no JVM unless a diff)
            with PeakRss() as mem:
                row["job"], out = timed([str(VENV_BIN / "msk-migrate"), "validate", *cli], expect, jenv, mem)
            assert json.loads(out)["summary"]["source_records"] == n
            assert json.loads(out)["run"]["checksum_engine"] == "native"
            row["job_native_rss"] = mem.mib("native")
            with PeakRss() as mem:  # the same job with the Spark checksum pass (local[*])
                row["job_spark"], out = timed([str(VENV_BIN / "msk-migrate"), "validate", "--engine", "spark", *cli],
                                              expect, jenv, mem)
            assert json.loads(out)["summary"]["source_records"] == n
            row["job_rss"] = mem.mib("driver")

            # same session: a bare read of the fields vs the checksum pass
            req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                                    target=ClusterEndpoint(alias="target", bootstrap_servers=tgt),
                                    topics=[topic], mode="checksum")
            plans = [ReadPlan(spark_kafka_options("bench", ep, SecretResolver(), "read_committed"),
                              {(topic, p): (0, 0) for p in range(args.partitions)}) for ep in (req.source, req.target)]
            frames = []
            for plan, bs in zip(plans, (src, tgt), strict=False):
                ends = ClusterMeta("bench", {"bootstrap.servers": bs}, 15).offsets(list(plan.ranges), latest())
                plan.ranges = {tp: (0, ends[tp]) for tp in plan.ranges}
                frames.append(read_records(spark, plan))
            agg = [F.count(F.lit(1)), F.sum(F.length("key")), F.sum(F.length("value")), F.sum(F.size("headers")),
                   F.max("timestamp")]
            if idx == 0:  # warm the session (JIT, class loading, first consumers): neither timed pass pays it
                for df in frames:
                    df.agg(*agg).collect()
            t = time.time()
            for df in frames:
                df.agg(*agg).collect()
            row["bare"] = time.time() - t
            t = time.time()  # the checksum pass alone over the same plans (no second, per-field pass)
            checksum(spark, {"source": plans[0], "target": plans[1]})
            row["checksum_pass"] = time.time() - t
            t = time.time()
            rep = run_validation(req, spark=spark)
            row["checksum"] = time.time() - t
            assert rep.exit_code == expect
            if change is not None:
                for key, update in (("auto", {"mode": "auto"}), ("full", {"mode": "full"}),
                                    ("auto_native", {"mode": "auto", "engine": "native"}),
                                    ("full_native", {"mode": "full", "engine": "native"})):
                    t = time.time()
                    rep = run_validation(dataclasses.replace(req, **update), spark=spark)
                    row[key] = time.time() - t
                    bad = [p.partition for t_ in rep.topics for p in t_.partitions if p.status != "match"]
                    assert bad == [3], bad

            # the packaged job: standalone (2 executors) vs local[2], same spark-submit
            jars = ",".join(str(j) for j in sorted((dist / "jars").glob("*.jar")))
            for master, key in ((cluster.url, "standalone"), ("local[2]", "local2")):
                cmd = [str(VENV_BIN / "spark-submit"), "--master", master, "--driver-memory", "1g",
                       "--conf", f"spark.driver.extraJavaOptions=-Dmsk.bench={tag}",
                       "--conf", f"spark.executor.extraJavaOptions=-Dmsk.bench={tag}",
                       "--conf", "spark.executor.memory=1g", "--conf", "spark.cores.max=2",
                       "--conf", "spark.ui.enabled=false",
                       # the driver's Python is this venv's (PATH may not have it); executors run no Python
                       "--conf", f"spark.pyspark.driver.python={sys.executable}", "--jars", jars, "--py-files", str(dist / "msk_migrate.zip"),
                       str(dist / "spark_entry.py"), "--request", encode(dataclasses.replace(req, mode="checksum", report_dir=None))]
                roots = [p.pid for p in cluster.procs] if key == "standalone" else []
                with PeakRss(roots) as mem:
                    row[key], sub_out = timed(cmd, expect, {**{k: v for k, v in os.environ.items() if not k.startswith("PYSPARK")},
                                                      "SPARK_HOME": str(spark_home())}, mem)
                # an exit code alone is no proof (a crash exits 1 too): the job's report must count the records
                assert json.loads(sub_out[sub_out.index("{"):])["summary"]["source_records"] == n, sub_out[-2000:]
                row[f"{key}_driver_rss"] = mem.mib("driver")
                row[f"{key}_executor_rss"] = mem.mib("executor")
            rows.append(row)
            print(json.dumps(row), flush=True)
            # written after each size: a long run interrupted later still leaves its figures
            write_section("Validation job", render(rows, args.partitions, spark.version, load0, os.getloadavg()[0]))
            for bs in (src, tgt):  # free the disk before the next size
                admin = AdminClient({"bootstrap.servers": bs})
                admin.delete_topics([topic])[topic].result()
        print("written to docs/PERFORMANCE.md")
    finally:
        cluster.stop()
        if not args.keep:
            env.down(wipe=True)
    return 0


def render(rows: list[dict], partitions: int, spark_version: str, load0: float, load1: float) -> str:
    def r(a: float, b: float) -> str:
        return f"{a / b:.2f}"

    out = [
        f"Per record count N: N records on each cluster (~100-byte values, 14-byte keys, a header on every "
        f"10th), {partitions} partitions, source Kafka 3.9 and target 4.1 (local KRaft, one broker each), "
        f"Spark {spark_version}. All figures of a row come from one run on the same data; the smallest N has "
        "one changed record in partition 3 (every tool must find it), the others are identical.",
        "",
        "**The job vs the script a user would write** (all processes of their own, start-up included; "
        "script: [bench/baseline_compare.py](../bench/baseline_compare.py), single process, confluent-kafka, "
        "order-sensitive digest per partition; job: `msk-migrate validate --mode checksum` as a user runs it "
        "locally (engine auto = the native checksum pass: confluent-kafka worker processes, one per core, "
        "Spark's digests); Spark job: the same with `--engine spark`, local[*] = 2 task slots):",
        "",
        "| records | script | job | **job ÷ script** | job records/s (both clusters) | job peak RSS (largest process) "
        "| Spark job | Spark job ÷ script | bare Spark read ÷ script | load (1 min) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for x in rows:
        out.append(f"| {x['n']:,} | {x['script']:.1f} s | {x['job']:.1f} s | **{r(x['job'], x['script'])}** | "
                   f"{2 * x['n'] / x['job']:,.0f} | {x['job_native_rss']:.0f} MiB | {x['job_spark']:.1f} s | "
                   f"{r(x['job_spark'], x['script'])} | {r(x['bare'], x['script'])} | {x.get('load', float('nan')):.1f} |")
    out += [
        "",
        "(bare Spark read ÷ script: the warm in-session read of the same fields below, no start-up, "
        "÷ the script with its start-up: what Spark's Kafka source alone costs against librdkafka.)",
        "",
        "**Inside one SparkSession** (local[2], warmed by one untimed read before the first size): the checksum pass vs a bare read of the same fields of "
        "both clusters (`count, sum(length(key)), sum(length(value)), sum(size(headers)), max(timestamp)` "
        "over the same Kafka source options) — goal ≤ 1.3:",
        "",
        "(checksum pass: `checksum()` over the same offset ranges as the bare read; whole checksum run: "
        "`run_validation(mode=checksum)` with planning (metadata, offsets by time) and, for the smallest N, "
        "the second pass that names the differing field of partition 3.)",
        "",
        "| records | bare read | checksum pass | checksum pass ÷ bare | whole checksum run | whole run ÷ bare |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for x in rows:
        out.append(f"| {x['n']:,} | {x['bare']:.1f} s | {x['checksum_pass']:.1f} s | "
                   f"**{r(x['checksum_pass'], x['bare'])}** | {x['checksum']:.1f} s | {r(x['checksum'], x['bare'])} |")
    d = next((x for x in rows if "auto" in x), None)
    if d:
        out += [
            "",
            f"**auto vs full** ({d['n']:,} records, one of {partitions} partitions differs; same session) — "
            "goal ≤ 0.5:",
            "",
            "| checksum pass | full | auto | auto ÷ full |",
            "| --- | ---: | ---: | ---: |",
            f"| Spark | {d['full']:.1f} s | {d['auto']:.1f} s | {r(d['auto'], d['full'])} |",
            f"| native (a local run's default) | {d['full_native']:.1f} s | {d['auto_native']:.1f} s | "
            f"**{r(d['auto_native'], d['full_native'])}** |",
        ]
    out += [
        "",
        "**Spark standalone (master + 2 workers × 1 core, executors in their own JVMs) vs local[2]**: the "
        "packaged job (`package` → msk_migrate.zip, jars/, spark_entry.py) with the same spark-submit, "
        "checksum mode; peak RSS sampled every 0.2 s:",
        "",
        "| records | local[2] | standalone | standalone ÷ local[2] | driver peak RSS (standalone) | "
        "executor peak RSS (max of 2) | local[2] JVM peak RSS |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for x in rows:
        out.append(f"| {x['n']:,} | {x['local2']:.1f} s | {x['standalone']:.1f} s | {r(x['standalone'], x['local2'])} | "
                   f"{x['standalone_driver_rss']:.0f} MiB | {x['standalone_executor_rss']:.0f} MiB | "
                   f"{x['local2_driver_rss']:.0f} MiB |")
    out += [
        "",
        f"Load: 1-minute load average {load0:.1f} at the start and {load1:.1f} at the end on these 2 cores "
        "(the brokers, the standalone daemons and, while this ran, other work on the machine share them): "
        "absolute seconds are noisy, the ratios within a row are the figures to read.",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
