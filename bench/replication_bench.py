"""MM2 replication throughput on the local harness, against two limits measured in the same run.

Source Kafka 3.9 -> MM2 (Connect workers from the Maven jars) -> target Kafka 4.1, single KRaft nodes on
127.0.0.1. One source topic is produced once; every scenario copies it into a target topic of its own, so all
scenarios read identical bytes. Per round (``--rounds``, >= 3; the order rotates every round, so no scenario
always runs first or last):

* **limit: target write rate** -- Kafka's own ``org.apache.kafka.tools.ProducerPerformance`` (the pinned
  target Kafka jars, jvm/classpaths/kafka-target) writing the same number of records of the same value size,
  with the shipped ``bulk`` producer settings, acks=all, idempotent;
* **limit: bare copy loop** -- a confluent-kafka consume -> produce loop between the same clusters with the
  ``bulk`` batching and compression (what a hand-written copy costs on this machine);
* **MM2, shipped profile, at-least-once** -- ``msk-migrate``'s rendered MirrorSourceConnector
  (``tuning_profile: bulk``) on an at-least-once worker;
* **MM2, shipped profile, exactly-once** -- the same on a worker with exactly.once.source.support=enabled
  (KIP-618; a second worker group, idle while the others run, so rounds interleave without restarts);
* **MM2, exactly-once, interval transactions** -- the same worker with ``transaction_boundary: interval``
  (one transaction per offset flush instead of one per task poll): the lever for the exactly-once ratio.

Every MM2 time runs from the connector's PUT to the last record on the target (topic creation, task start,
batching included: the copy is sized to dominate them); the bare loop from its first poll to its last
acknowledged write; the perf tool by its own clock (first send to last acknowledgement, JVM start-up excluded). Medians and min-max of the
rounds are reported with the 1-minute load average of every run. Writes the section "Local replication (MM2)"
of docs/PERFORMANCE.md.

    .venv/bin/python bench/replication_bench.py [--records 1500000] [--size 200] [--partitions 6] [--rounds 3]
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.config.migration import MigrationSpec
from msk_migrate.config.overrides import PROFILES
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.kafka.produce import produce_waiting
from msk_migrate.local.classpath import classpath
from msk_migrate.local.connect_worker import local_worker_spec, start_connect_worker, wait_connect_ready
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR
from perfdoc import write_section

SOURCE_TOPIC = "bench.data"
WORDS = b"order customer amount currency status shipped created updated region sku "
PERF_TOOL = "org.apache.kafka.tools.ProducerPerformance"


def load() -> float:
    return os.getloadavg()[0]


def value(size: int) -> bytes:
    """Half random printable bytes (base64), half text: compresses (~1.5x with lz4), not to nothing.
    Printable so the perf tool can send the very same values from a payload file."""
    half = size // 2
    rnd = base64.b64encode(os.urandom(half))[:half]
    return rnd + (WORDS * (size // len(WORDS) + 1))[: size - half]


class Ends:
    """End offsets of one topic through one long-lived consumer (no client per poll)."""

    def __init__(self, bootstrap: str):
        self.c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-ends"})

    def __call__(self, topic: str) -> dict[int, int]:
        try:
            md = self.c.list_topics(topic, timeout=10).topics.get(topic)
            if md is None or md.error is not None:
                return {}
            return {p: self.c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions}
        except Exception:
            return {}

    def close(self) -> None:
        self.c.close()


def produce(bootstrap: str, records: int, size: int, partitions: int) -> float:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference: futures die with their client
    admin.create_topics([NewTopic(SOURCE_TOPIC, partitions, 1)])[SOURCE_TOPIC].result(60)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 262144})
    pool = [value(size) for _ in range(4096)]
    t = time.time()
    for i in range(records):
        produce_waiting(p, SOURCE_TOPIC, key=f"{i:010d}".encode(), value=pool[i % 4096] if i % 7 else value(size))
    p.flush(300)
    return time.time() - t


def wait_copy(ends: Ends, topic: str, want: dict[int, int], t0: float, timeout: float = 1800) -> float:
    """Seconds from ``t0`` until every partition of ``topic`` on the target reaches the source's end offset."""
    while time.time() - t0 < timeout:
        got = ends(topic)
        if got and all(got.get(p, 0) >= e for p, e in want.items()):
            return time.time() - t0
        time.sleep(0.25)
    raise SystemExit(f"{topic}: replication did not finish within {timeout:.0f} s")


def mm2_run(env: LocalEnvironment, url: str, ends: Ends, want: dict[int, int], tasks: int, exactly_once: bool,
            boundary: str = "poll") -> float:
    tag = uuid.uuid4().hex[:6]
    target_topic = f"bench.copy-{tag}"
    spec = MigrationSpec(name=f"b{tag}", topics=[re.escape(SOURCE_TOPIC)], topic_renames={SOURCE_TOPIC: target_topic},
                         tasks_max=tasks, replication_factor=1, internal_replication_factor=1,
                         refresh_topics_interval_seconds=2, exactly_once=exactly_once,
                         transaction_boundary=boundary, emit_checkpoints=False, emit_heartbeats=False)
    configs = render_connectors(env.source(), env.target(), spec)
    name = spec.connector_names()["source"]
    client = ConnectClient(url)
    t0 = time.time()
    client.put_config(name, {k: v for k, v in configs[name].items() if k != "name"})
    try:
        return wait_copy(ends, target_topic, want, t0)
    finally:
        client.delete(name)


def bare_copy(src: str, tgt: str, want: dict[int, int]) -> float:
    """A bare confluent-kafka consume -> produce loop: the same bytes, the bulk batching and lz4."""
    target_topic = f"bench.bare-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": tgt})
    admin.create_topics([NewTopic(target_topic, len(want), 1)])[target_topic].result(60)
    bulk = PROFILES["bulk"]
    c = Consumer({"bootstrap.servers": src, "group.id": f"bare-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "fetch.min.bytes": int(bulk["consumer"]["fetch.min.bytes"]),
                  "fetch.wait.max.ms": int(bulk["consumer"]["fetch.max.wait.ms"]),
                  "max.partition.fetch.bytes": int(bulk["consumer"]["max.partition.fetch.bytes"])})
    p = Producer({"bootstrap.servers": tgt, "linger.ms": int(bulk["producer"]["linger.ms"]),
                  "batch.size": int(bulk["producer"]["batch.size"]),
                  "compression.type": bulk["producer"]["compression.type"], "acks": "all", "enable.idempotence": True})
    c.assign([TopicPartition(SOURCE_TOPIC, part, 0) for part in want])
    n, goal = 0, sum(want.values())
    t0 = time.time()
    while n < goal:
        for m in c.consume(2000, timeout=1.0):
            if m.error():
                continue
            produce_waiting(p, target_topic, poll_s=0.05, key=m.key(), value=m.value(), headers=m.headers(),
                            partition=m.partition(), timestamp=m.timestamp()[1])
            n += 1
        p.poll(0)
        if time.time() - t0 > 1800:
            raise SystemExit("bare copy did not finish within 1800 s")
    p.flush(300)
    s = time.time() - t0
    c.close()
    return s


def perf_tool(tgt: str, records: int, size: int, partitions: int, payloads: Path) -> float:
    """Kafka's producer perf tool writing ``records`` values from ``payloads`` with the bulk producer settings;
    seconds of its own measurement (first send to last acknowledgement; JVM start-up excluded)."""
    topic = f"bench.perf-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": tgt})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
    props = [f"bootstrap.servers={tgt}", "acks=all", "enable.idempotence=true",
             *(f"{k}={v}" for k, v in PROFILES["bulk"]["producer"].items())]
    cmd = ["java", "-Xmx512m", "-cp", classpath("kafka-target"), PERF_TOOL, "--topic", topic, "--num-records",
           str(records), "--throughput", "-1", "--payload-file", str(payloads), "--producer-props", *props]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    last = [ln for ln in proc.stdout.splitlines() if "records sent" in ln]
    rate = re.search(r"([\d.]+) records/sec", last[-1]) if last else None
    if proc.returncode != 0 or rate is None:
        raise SystemExit(f"{PERF_TOOL} failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
    return records / float(rate.group(1))


def extra_worker(env: LocalEnvironment, base: Path, group: str, heap: str, exactly_once: bool):
    """A second worker group on the same clusters (here: the exactly-once one), idle until used."""
    spec = local_worker_spec(group_id=group).model_copy(update={"heap": heap})
    rec = start_connect_worker(env.target(), base / group, spec, name=group, source=env.source(),
                               migration=MigrationSpec(exactly_once=True) if exactly_once else None,
                               credentials_dir=base / "connect")
    url = f"http://127.0.0.1:{spec.rest_port}"
    wait_connect_ready(rec, url)
    return rec, url


def spread(xs: list[float]) -> str:
    return f"{min(xs):,.0f}-{max(xs):,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_500_000)
    ap.add_argument("--size", type=int, default=200, help="value bytes (keys: 10 bytes)")
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=2, help="MirrorSourceConnector tasks.max")
    ap.add_argument("--worker-heap", default="1g", help="-Xmx of each Connect worker")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="skip the unrecorded first copy of each MM2 scenario (JIT warm-up)")
    args = ap.parse_args()
    if args.rounds < 3:
        raise SystemExit("--rounds: at least 3 (medians and a spread need them)")

    idle_load = load()  # before the bench starts anything: what other jobs put on the machine
    print(f"load before the bench: {idle_load:.1f}", flush=True)
    base = LOCAL_DIR / "bench-env"
    env = LocalEnvironment(base, workers=1, worker_settings={"group_id": "mm2-bench", "heap": args.worker_heap})
    env.down(wipe=True)
    started = time.time()
    env.up()
    eos_rec = None
    runs: dict[str, list[tuple[float, float]]] = {}
    try:
        src, tgt = env.source().bootstrap_servers, env.target().bootstrap_servers
        eos_rec, eos_url = extra_worker(env, base, "mm2-bench-eos", args.worker_heap, exactly_once=True)
        produce_s = produce(src, args.records, args.size, args.partitions)
        src_ends, tgt_ends = Ends(src), Ends(tgt)
        want = src_ends(SOURCE_TOPIC)
        src_ends.close()
        n = sum(want.values())
        print(f"produced {n:,} records in {produce_s:.1f} s, load {load():.1f}")
        payloads = Path(tempfile.mkstemp(prefix="bench-payloads-", suffix=".txt")[1])
        payloads.write_bytes(b"\n".join(value(args.size) for _ in range(4096)))
        alo_url = env.worker_urls()[0]
        scenarios: dict[str, Callable[[], float]] = {
            "perf": lambda: perf_tool(tgt, n, args.size, args.partitions, payloads),
            "bare": lambda: bare_copy(src, tgt, want),
            "alo": lambda: mm2_run(env, alo_url, tgt_ends, want, args.tasks, exactly_once=False),
            "eos": lambda: mm2_run(env, eos_url, tgt_ends, want, args.tasks, exactly_once=True),
            "eos-interval": lambda: mm2_run(env, eos_url, tgt_ends, want, args.tasks, exactly_once=True,
                                            boundary="interval"),
        }
        order = list(scenarios)
        if args.warmup:  # the workers' JIT: a cold worker's first copy ran up to 2x slower than its third
            for key in ("alo", "eos", "eos-interval"):
                s = scenarios[key]()
                print(f"  warm-up {key}: {n / s:,.0f} records/s ({s:.1f} s), not recorded", flush=True)
        for r in range(args.rounds):
            rotated = order[r % len(order):] + order[: r % len(order)]
            for key in rotated:
                before = load()
                s = scenarios[key]()
                runs.setdefault(key, []).append((s, max(before, load())))
                print(f"  round {r + 1} {key}: {n / s:,.0f} records/s ({s:.1f} s), load {load():.1f}", flush=True)
        tgt_ends.close()
        payloads.unlink()
    finally:
        if eos_rec is not None:
            stop(eos_rec)
        env.down(wipe=True)

    flush_ms = local_worker_spec().offset_flush_interval_ms  # the bench workers' (transaction.boundary.interval.ms default)
    labels = {
        "perf": f"limit: target write rate (Kafka's `ProducerPerformance`, bulk producer settings, {args.size}-byte values)",
        "bare": "limit: bare confluent-kafka consume->produce loop (bulk batching, lz4)",
        "alo": f"**MM2, shipped `bulk` profile, at-least-once** (tasks.max={args.tasks})",
        "eos": f"**MM2, shipped `bulk` profile, exactly-once** (one transaction per poll of up to "
               f"{int(PROFILES['bulk']['consumer_exactly_once']['max.poll.records']):,} records; tasks.max={args.tasks})",
        "eos-interval": f"MM2, `bulk` profile, exactly-once with `transaction_boundary: interval` "
                        f"(one transaction per {flush_ms:,} ms offset flush; tasks.max={args.tasks})",
    }
    rps = {k: [n / s for s, _ in v] for k, v in runs.items()}
    med = {k: statistics.median(v) for k, v in rps.items()}
    mb = n * (args.size + 10) / 1e6
    rows = []
    for k in ("perf", "bare", "alo", "eos", "eos-interval"):
        secs = [s for s, _ in runs[k]]
        loads = [ld for _, ld in runs[k]]
        rows.append(f"| {labels[k]} | {med[k]:,.0f} | {spread(rps[k])} | {mb / statistics.median(secs):.1f} | "
                    f"{statistics.median(secs):.1f} s | {', '.join(f'{s:.1f}' for s in secs)} | "
                    f"{', '.join(f'{ld:.1f}' for ld in loads)} |")
    alo_bare = med["alo"] / med["bare"]
    eos_alo = med["eos"] / med["alo"]
    per_round_ab = [a / b for a, b in zip(rps["alo"], rps["bare"], strict=True)]
    per_round_ea = [e / a for e, a in zip(rps["eos"], rps["alo"], strict=True)]
    eosi_alo = med["eos-interval"] / med["alo"]
    per_round_eia = [e / a for e, a in zip(rps["eos-interval"], rps["alo"], strict=True)]
    verdict = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    bulk = PROFILES["bulk"]
    # Not conclusive when other jobs loaded the machine before the bench started anything (the bench's own
    # brokers and workers put 3-6 on 2 cores by themselves), or when the rounds fall on both sides of a goal.
    split = [name for name, rounds, goal in (("at-least-once ÷ bare", per_round_ab, 1.0),
                                             ("exactly-once ÷ at-least-once", per_round_ea, 0.7))
             if min(rounds) < goal <= max(rounds)]
    reasons = ([f"the machine's load was {idle_load:.1f} on {os.cpu_count()} cores before the bench started (other jobs)"]
               if idle_load > (os.cpu_count() or 1) else []) + \
              ([f"the rounds fall on both sides of the goal for {' and '.join(split)} (see the per-round ratios)"] if split else [])
    caveat = (f"\n\n**This run is not conclusive**: {'; '.join(reasons)}. Rerun on a quiet machine, with more records, "
              "before drawing conclusions from the ratios." if reasons else
              f"\n\nLoad before the bench started: {idle_load:.1f} (quiet); the load column is the bench's own brokers, "
              "workers and clients. Every round gives the same verdict on both goals (per-round ratios).")
    body = f"""{n:,} records ({args.size}-byte values, half random printable bytes, half text; 10-byte keys),
{args.partitions} partitions, produced once to the source; every run copies them into a target topic of its own.
Source Kafka 3.9 and target Kafka 4.1 are single KRaft nodes; MM2 runs on one Connect worker per group
(-Xmx{args.worker_heap}; the exactly-once group is a second worker, idle while the others run). Everything shares
the machine's 2 cores with other work (the load column: 1-minute load average, the higher of before/after each
run). {args.rounds} rounds, the order of the five scenarios rotated every round; medians, then min-max.
{"Before the rounds each MM2 scenario copied once, unrecorded (the workers' JIT warm-up)." if args.warmup else
 "No warm-up copy (`--no-warmup`): the first MM2 rounds include the workers' JIT warm-up."}
MM2 times run from the connector's PUT to the last record on the target (topic creation and task start-up
included); MB/s counts keys + values. Production to the source: {produce_s:.1f} s; the whole run
{(time.time() - started) / 60:.1f} min.

| scenario | records/s (median) | min-max | MB/s | time (median) | times per round | load per round |
| --- | ---: | ---: | ---: | ---: | --- | --- |
{chr(10).join(rows)}

| ratio (medians) | value | per round | goal |
| --- | ---: | --- | --- |
| MM2 at-least-once ÷ bare copy loop | **{alo_bare:.2f}** | {', '.join(f'{x:.2f}' for x in per_round_ab)} | ≥ 1.0: {verdict(alo_bare >= 1.0)} |
| MM2 exactly-once ÷ at-least-once | **{eos_alo:.2f}** | {', '.join(f'{x:.2f}' for x in per_round_ea)} | ≥ 0.7: {verdict(eos_alo >= 0.7)} |
| MM2 exactly-once, interval transactions ÷ at-least-once | {eosi_alo:.2f} | {', '.join(f'{x:.2f}' for x in per_round_eia)} | lever (default `poll`) |
| MM2 at-least-once ÷ target write rate | {med['alo'] / med['perf']:.2f} | | |
| bare copy loop ÷ target write rate | {med['bare'] / med['perf']:.2f} | | |{caveat}

The shipped `bulk` profile (`msk_migrate.config.overrides.PROFILES`, rendered as `producer.override.*` and
`source.consumer.*`): producer {', '.join(f'`{k}={v}`' for k, v in bulk['producer'].items())}; consumer
{', '.join(f'`{k}={v}`' for k, v in bulk['consumer'].items())}; exactly-once with `transaction_boundary: poll`
(one transaction per task poll) instead polls with {', '.join(f'`{k}={v}`' for k, v in bulk['consumer_exactly_once'].items())}
(the interval scenario keeps the consumer settings above). The perf tool sends the same 200-byte values
(from a payload file of 4,096 of them) without keys. Exactly-once completion is read from end offsets, which
also count transaction markers (one per partition per transaction, well under 1 % of the offsets here), so the
exactly-once time can end a few transactions early."""
    write_section("Local replication (MM2)", body)
    print(body)


if __name__ == "__main__":
    main()
