"""The proof follower's cost: its lag behind replication and its overhead under the rehearsal's load and 10x
it, and its mark's memory and update cost at 10,000 partitions.

* **Mark at scale** (no cluster): a mark of 1,000 and of 10,000 partitions (plus each partition's comparer
  state, idle) measured with tracemalloc: bytes per partition must stay flat; the store's atomic write
  (JSON, fsync, rename) timed and its size reported.
* **Lag and overhead** (brokers-only local harness, no MM2: the records are written to both clusters, as
  replication would, so the figures are the follower's own): a producer writes the rehearsal's volume (the
  demo topics: 120,000 records, 13 partitions) and 10x it to both clusters at a fixed rate (a writer process
  of its own) while the follower
  runs ``--follow`` (``--interval 0.5``) in this process. Reported: records proven per second, the CPU seconds
  the follower used per 100,000 records (its overhead beside the brokers', which serve each record once per
  side to it), the follower's proof lag when the producer stops (records not yet proven) and the time until
  the mark reaches the end offsets.

Writes the section "Proof follower (validate --follow)" of docs/PERFORMANCE.md.

    .venv/bin/python bench/follow_bench.py [--loads 120000,1200000] [--rate 20000] [--partitions 13]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.config import ClusterEndpoint
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.validation import ValidationRequest
from msk_migrate.validation.follow.compare import PartitionCompare
from msk_migrate.validation.follow.follower import Clusters, Follower, FollowOptions, prepare
from msk_migrate.validation.follow.mark import Mark, PartitionMark, TopicMark
from msk_migrate.validation.follow.run import follow_loop
from msk_migrate.validation.follow.store import MarkStore
from perfdoc import write_section


def mark_of(partitions: int, per_topic: int = 10) -> Mark:
    topics = {}
    for t in range(partitions // per_topic):
        name = f"estate.topic-{t:05d}"
        topics[name] = TopicMark(name, per_topic, per_topic, f"id-{t}", f"tid-{t}",
                                 {p: PartitionMark(1_000_000 + p, 2_000_000 + p, 1_000_000, proven_ts_ms=1_800_000_000_000)
                                  for p in range(per_topic)})
    return Mark("mm2", "SRC-CLUSTER-ID", "TGT-CLUSTER-ID", topics, 1_800_000_000_000)


def mark_scale(sizes: list[int]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            tracemalloc.start()
            mark = mark_of(n)
            cmp = {tp: PartitionCompare(pm) for tp, pm in mark.items()}
            mem = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            store = MarkStore(str(Path(d) / f"mark-{n}.json"))
            times = []
            for _ in range(5):
                for _tp, pm in mark.items():  # one pass advanced every partition
                    pm.source_next += 10
                    pm.compared += 10
                t0 = time.perf_counter()
                store.save(mark)
                times.append(time.perf_counter() - t0)
            size = Path(store.place.name).stat().st_size
            rows.append({"partitions": n, "bytes": mem, "per_partition": mem / n, "save_s": sorted(times)[len(times) // 2],
                         "file": size})
            del cmp
    return rows


def produce(bootstraps: list[str], topic: str, n: int, partitions: int, rate: float) -> float:
    """Write ``n`` identical records to every cluster at ``rate`` records/s; returns the seconds taken."""
    producers = [Producer({"bootstrap.servers": b, "linger.ms": 20, "acks": "all", "enable.idempotence": True,
                           "log_level": 0}) for b in bootstraps]
    ts0 = int(time.time() * 1000)
    t0 = time.monotonic()
    for i in range(n):
        key, value, p = f"k{i}".encode(), b"v" * 200, i % partitions
        for pr in producers:
            while True:
                try:
                    pr.produce(topic, value, key, partition=p, timestamp=ts0 + i // 100, headers=[("n", str(i).encode())])
                    break
                except BufferError:
                    pr.poll(0.05)
        if i % 1000 == 999:
            for pr in producers:
                pr.poll(0)
            ahead = (i + 1) / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)
    for pr in producers:
        pr.flush(120)
    return time.monotonic() - t0


def lag_run(src: str, tgt: str, n: int, partitions: int, rate: float, work: Path) -> dict:
    topic = f"follow-bench-{n}-{uuid.uuid4().hex[:6]}"
    for b in (src, tgt):
        admin = AdminClient({"bootstrap.servers": b})
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    time.sleep(1)
    req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                            target=ClusterEndpoint(alias="target", bootstrap_servers=tgt), topics=[topic])
    opts = FollowOptions(mark=str(work / f"{topic}.json"), migration="bench", interval=0.5)
    clusters = Clusters.open(req, "bench")
    store = MarkStore(opts.mark)
    facts = clusters.facts()
    mark, _ = prepare(store, facts)
    follower = Follower(clusters, store, mark, opts)
    follower.assign()
    stop = threading.Event()
    cpu = {"s": 0.0}

    def loop() -> None:
        t_cpu = time.thread_time()
        follow_loop(follower, clusters, facts, opts, stop.is_set)
        cpu["s"] = time.thread_time() - t_cpu

    th = threading.Thread(target=loop)
    t0 = time.monotonic()
    th.start()
    # the writer is a process of its own (as MM2 is): it must not share this process's interpreter lock
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        produced_s = pool.submit(produce, [src, tgt], topic, n, partitions, rate).result()
    at_stop = n - sum(pm.compared for _, pm in mark.items())
    t_end = time.monotonic()
    while sum(pm.compared for _, pm in mark.items()) < n and time.monotonic() - t_end < 600:
        time.sleep(0.05)
    catch_up = time.monotonic() - t_end
    total = time.monotonic() - t0
    stop.set()
    th.join()
    follower.close()
    proven = sum(pm.compared for _, pm in mark.items())
    return {"n": n, "rate": n / produced_s, "produced_s": produced_s, "proven": proven, "lag_at_stop": at_stop,
            "catch_up_s": catch_up, "cpu_s": cpu["s"], "cpu_per_100k": cpu["s"] / n * 100_000, "wall_s": total,
            "states": sorted({pm.state for _, pm in mark.items()})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", default="120000,1200000", help="records per run (the rehearsal's volume, 10x)")
    ap.add_argument("--rate", type=float, default=20000, help="records/s written to each cluster")
    ap.add_argument("--partitions", type=int, default=13)
    ap.add_argument("--mark-sizes", default="1000,10000")
    args = ap.parse_args()

    marks = mark_scale([int(x) for x in args.mark_sizes.split(",")])
    for r in marks:
        print(r, flush=True)
    base = LOCAL_DIR / "bench-follow"
    env = LocalEnvironment(base / "env", with_connect=False)
    env.down(wipe=True)
    status = env.up()
    runs = []
    try:
        src, tgt = status["source"]["bootstrap_servers"], status["target"]["bootstrap_servers"]
        with tempfile.TemporaryDirectory() as d:
            for n in (int(x) for x in args.loads.split(",")):
                r = lag_run(src, tgt, n, args.partitions, args.rate, Path(d))
                print(r, flush=True)
                runs.append(r)
    finally:
        env.down(wipe=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = ["Mark and comparer state in memory (tracemalloc), and the atomic store write (JSON, fsync, rename):", "",
             "| partitions | memory | per partition | store write (median of 5) | mark file |", "|---:|---:|---:|---:|---:|"]
    for r in marks:
        lines.append(f"| {r['partitions']:,} | {r['bytes'] / 1e6:.1f} MB | {r['per_partition']:.0f} B | "
                     f"{r['save_s'] * 1000:.0f} ms | {r['file'] / 1e6:.2f} MB |")
    lines += ["", f"Lag and overhead: identical records written to both local clusters ({args.partitions} partitions, 200-byte "
              "values, a header) while the follower ran (`--interval 0.5`) in the bench process:", "",
              "| records | write rate | proven | proof lag when writes stopped | mark at the end after | follower CPU "
              "| CPU per 100k records | states |", "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in runs:
        lines.append(f"| {r['n']:,} | {r['rate']:,.0f}/s | {r['proven']:,} | {r['lag_at_stop']:,} records | "
                     f"{r['catch_up_s']:.1f} s | {r['cpu_s']:.1f} s | {r['cpu_per_100k']:.2f} s | {', '.join(r['states'])} |")
    lines += ["", f"Peak RSS of the bench process: {rss:.0f} MB. The follower reads every record once per cluster "
              "(its only load on the brokers: one fetch stream per side, no writes, no consumer-group commits). "
              f"Machine load average at the end: {os.getloadavg()[0]:.2f}."]
    write_section("Proof follower (validate --follow)", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
