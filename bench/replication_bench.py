"""MM2 replication throughput on the local harness, side by side in ONE run on the same data.

Source Kafka 3.9 -> MM2 on **two Connect workers** (one group) -> target Kafka 4.1. One source topic is
produced once; every scenario copies it into its own target topic (``topic_renames``), so all scenarios
read identical bytes. Scenarios:

* MM2 with Kafka's client defaults (``tuning_profile: kafka-defaults``) vs the shipped ``bulk`` profile,
  plus the candidate profiles the ``bulk`` profile was chosen from (``--sweep``);
* a bare consume -> produce copy loop with confluent-kafka between the same clusters (the limit of a
  copy on this machine, with the same batching and compression as ``bulk``);
* tasks.max 1 / 2 / 4 on the 2 workers (bulk profile);
* exactly-once (KIP-618, worker group restarted with exactly.once.source.support=enabled) vs at-least-once.

Throughput is measured from the first record on the target topic to the last (connector start-up and
MM2's topic refresh excluded). Writes the section "Local replication (MM2)" of docs/PERFORMANCE.md.

    .venv/bin/python bench/replication_bench.py [--records 300000] [--size 200] [--partitions 6] [--sweep]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.config.migration import MigrationSpec
from msk_migrate.config.overrides import PROFILES
from msk_migrate.connect.apply import apply
from msk_migrate.connect.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.paths import LOCAL_DIR
from perfdoc import write_section

SOURCE_TOPIC = "bench.data"
WORKERS = {"group_id": "mm2-bench"}

#: Candidate client settings tried by --sweep; the winner is PROFILES["bulk"] in msk_migrate.config.overrides.
CANDIDATES: dict[str, dict[str, dict[str, str]]] = {
    "bulk (shipped)": PROFILES["bulk"],
    "bulk, no compression": {"producer": {k: v for k, v in PROFILES["bulk"]["producer"].items() if k != "compression.type"},
                             "consumer": PROFILES["bulk"]["consumer"]},
    "bigger batches (linger 50, 1 MiB, 5000 polls)": {
        "producer": {"linger.ms": "50", "batch.size": "1048576", "compression.type": "lz4"},
        "consumer": {**PROFILES["bulk"]["consumer"], "max.poll.records": "5000", "max.partition.fetch.bytes": "4194304"}},
    "producer only (bulk producer, default consumer)": {"producer": PROFILES["bulk"]["producer"], "consumer": {}},
}


def ends(bootstrap: str, topic: str) -> dict[int, int]:
    """End offsets per partition; {} while the topic or a partition leader is not there yet."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-ends"})
    try:
        md = c.list_topics(topic, timeout=10).topics.get(topic)
        if md is None or md.error is not None:
            return {}
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions}
    except Exception:
        return {}
    finally:
        c.close()


def load() -> float:
    return os.getloadavg()[0]


def produce(bootstrap: str, records: int, size: int, partitions: int) -> float:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference: futures die with their client
    admin.create_topics([NewTopic(SOURCE_TOPIC, partitions, 1)])[SOURCE_TOPIC].result(60)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 262144})
    half = size // 2
    words = b"order customer amount currency status shipped created updated region sku "
    t = time.time()
    for i in range(records):
        # Half random bytes, half text: values that compress, but not to nothing (~1.6x with lz4).
        value = os.urandom(half) + (words * (size // len(words) + 1))[: size - half]
        while True:
            try:
                p.produce(SOURCE_TOPIC, key=f"{i:010d}".encode(), value=value)
                break
            except BufferError:
                p.poll(0.1)
    p.flush(300)
    return time.time() - t


def wait_copy(tgt: str, topic: str, want: dict[int, int], timeout: float = 900) -> tuple[float, float]:
    """(seconds from the first target record to all records, seconds from start to all records)."""
    t0 = time.time()
    first = None
    while time.time() - t0 < timeout:
        got = ends(tgt, topic)
        total = sum(got.values())
        if first is None and total > 0:
            first = time.time()
        if got and all(got.get(p, 0) >= e for p, e in want.items()):
            done = time.time()
            return done - (first or t0), done - t0
        time.sleep(0.1)
    raise SystemExit(f"{topic}: replication did not finish within {timeout:.0f} s")


def mm2_run(env: LocalEnvironment, label: str, want: dict[int, int], tasks: int, profile: str = "bulk",
            custom: dict | None = None, exactly_once: bool = False) -> dict:
    tag = uuid.uuid4().hex[:6]
    target_topic = f"bench.copy-{tag}"
    spec = MigrationSpec(name=f"b{tag}", topics=[SOURCE_TOPIC.replace(".", r"\.")], topic_renames={SOURCE_TOPIC: target_topic},
                         tasks_max=tasks, replication_factor=1, internal_replication_factor=1,
                         refresh_topics_interval_seconds=2, tuning_profile=profile, exactly_once=exactly_once,
                         emit_checkpoints=False, emit_heartbeats=False)
    configs = render_connectors(env.source(), env.target(), spec)
    name = spec.connector_names()["source"]
    cfg = configs[name]
    if custom is not None:
        cfg = {k: v for k, v in cfg.items() if not k.startswith("producer.override.")
               and not (k.startswith("source.consumer.") and k not in ("source.consumer.isolation.level",
                                                                       "source.consumer.auto.offset.reset"))}
        cfg.update({f"producer.override.{k}": v for k, v in custom["producer"].items()})
        cfg.update({f"source.consumer.{k}": v for k, v in custom["consumer"].items()})
    client = ConnectClient(env.worker_urls()[0])
    apply(client, {name: cfg}, wait=True, timeout=180)
    try:
        copy_s, total_s = wait_copy(env.target().bootstrap_servers, target_topic, want)
    finally:
        client.delete(name)
    n = sum(want.values())
    print(f"  {label}: {n / copy_s:,.0f} records/s ({copy_s:.1f} s; {total_s:.1f} s incl. start-up), load {load():.1f}")
    return {"label": label, "copy_s": copy_s, "total_s": total_s, "rps": n / copy_s, "load": load()}


def bare_copy(src: str, tgt: str, want: dict[int, int]) -> dict:
    """A bare confluent-kafka consume -> produce loop: the same bytes, bulk-like batching and lz4."""
    target_topic = f"bench.bare-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": tgt})
    admin.create_topics([NewTopic(target_topic, len(want), 1)])[target_topic].result(60)
    c = Consumer({"bootstrap.servers": src, "group.id": f"bare-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "fetch.min.bytes": 65536, "fetch.wait.max.ms": 100,
                  "max.partition.fetch.bytes": 2097152})
    p = Producer({"bootstrap.servers": tgt, "linger.ms": 20, "batch.size": 262144, "compression.type": "lz4",
                  "acks": "all", "enable.idempotence": True})
    c.assign([TopicPartition(SOURCE_TOPIC, part, 0) for part in want])
    n, goal = 0, sum(want.values())
    t0 = time.time()
    while n < goal:
        for m in c.consume(2000, timeout=1.0):
            if m.error():
                continue
            while True:
                try:
                    p.produce(target_topic, key=m.key(), value=m.value(), headers=m.headers(), partition=m.partition(),
                              timestamp=m.timestamp()[1])
                    break
                except BufferError:
                    p.poll(0.05)
            n += 1
        p.poll(0)
        if time.time() - t0 > 900:
            raise SystemExit("bare copy did not finish within 900 s")
    p.flush(120)
    c.close()
    s = time.time() - t0
    print(f"  bare copy loop: {goal / s:,.0f} records/s ({s:.1f} s), load {load():.1f}")
    return {"label": "bare confluent-kafka consume->produce loop", "copy_s": s, "total_s": s, "rps": goal / s, "load": load()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--sweep", action="store_true", help="Also run the candidate profiles the bulk profile was chosen from.")
    ap.add_argument("--no-eos", action="store_true")
    args = ap.parse_args()

    base = LOCAL_DIR / "bench-env"
    env = LocalEnvironment(base, workers=2, worker_settings=WORKERS)
    env.down(wipe=True)
    started = time.time()
    env.up()
    rows: dict[str, dict] = {}
    try:
        src, tgt = env.source().bootstrap_servers, env.target().bootstrap_servers
        produce_s = produce(src, args.records, args.size, args.partitions)
        want = ends(src, SOURCE_TOPIC)
        print(f"produced {args.records:,} records in {produce_s:.1f} s")
        rows["defaults"] = mm2_run(env, "MM2, Kafka client defaults (tasks.max=2)", want, 2, profile="kafka-defaults")
        rows["tuned"] = mm2_run(env, "MM2, bulk profile (tasks.max=2)", want, 2)
        rows["bare"] = bare_copy(src, tgt, want)
        rows["defaults-2"] = mm2_run(env, "MM2, Kafka client defaults, repeated", want, 2, profile="kafka-defaults")
        rows["tuned-2"] = mm2_run(env, "MM2, bulk profile, repeated", want, 2)
        for t in (1, 4):
            rows[f"tasks-{t}"] = mm2_run(env, f"MM2, bulk profile, tasks.max={t}", want, t)
        if args.sweep:
            for label, cand in CANDIDATES.items():
                rows[f"sweep-{label}"] = mm2_run(env, f"candidate: {label}", want, 2, custom=cand)
        if not args.no_eos:
            env.stop_workers()
            env = LocalEnvironment(base, workers=2, exactly_once=True, worker_settings={"group_id": "mm2-bench-eos"})
            env.up()
            rows["eos"] = mm2_run(env, "MM2, bulk profile, exactly-once (tasks.max=2)", want, 2, exactly_once=True)
    finally:
        env.down(wipe=True)

    mb = args.records * (args.size + 10) / 1e6
    n = args.records

    def row(r: dict) -> str:
        return f"| {r['label']} | {r['rps']:,.0f} | {mb / r['copy_s']:.1f} | {r['copy_s']:.1f} s | {r['load']:.1f} |"

    defaults = (rows["defaults"]["rps"] + rows["defaults-2"]["rps"]) / 2
    tuned = (rows["tuned"]["rps"] + rows["tuned-2"]["rps"]) / 2
    bare = rows["bare"]["rps"]
    table = "\n".join(row(r) for r in rows.values())
    ratios = [
        f"| tuned / defaults (mean of 2 runs each; goal >= 1.5) | **{tuned / defaults:.2f}** |",
        f"| tuned / bare copy loop (goal >= 0.7) | **{tuned / bare:.2f}** |",
        f"| defaults / bare copy loop | {defaults / bare:.2f} |",
        f"| tasks.max 1 : 2 : 4 (bulk) | {rows['tasks-1']['rps'] / tuned:.2f} : 1.00 : {rows['tasks-4']['rps'] / tuned:.2f} |",
    ]
    if "eos" in rows:
        ratios.append(f"| exactly-once / at-least-once (bulk, tasks.max=2) | {rows['eos']['rps'] / tuned:.2f} |")
    bulk = PROFILES["bulk"]
    body = f"""{n:,} records ({args.size}-byte values, half random, half text; 10-byte keys), {args.partitions} partitions, copied
by each scenario from the same source topic into its own target topic. MM2 runs on **2 Connect workers** (one
group, 512 MiB heap each); source Kafka 3.9 and target Kafka 4.1 are single KRaft nodes; everything shares
the machine's 2 cores, **which other jobs were also using during this run** (1-minute load average in the
last column): compare the ratios within this run, not absolute figures across runs. Throughput counts from
the first record on the target topic to the last (start-up excluded); MB/s counts keys + values.
Production to the source took {produce_s:.1f} s; the whole run {(time.time() - started) / 60:.1f} min.

| scenario | records/s | MB/s | copy time | load |
| --- | ---: | ---: | ---: | ---: |
{table}

| ratio | value |
| --- | ---: |
{chr(10).join(ratios)}

The shipped `bulk` profile (`msk_migrate.config.overrides.PROFILES`, rendered as `producer.override.*` and
`source.consumer.*`): producer {', '.join(f'`{k}={v}`' for k, v in bulk['producer'].items())}; consumer
{', '.join(f'`{k}={v}`' for k, v in bulk['consumer'].items())}. `--sweep` adds the candidates it was chosen from.
Exactly-once completion is read from end offsets, which also count transaction markers (well under 1 % of
the offsets here), so the exactly-once figure is slightly optimistic."""
    write_section("Local replication (MM2)", body)
    print(body)


if __name__ == "__main__":
    main()
