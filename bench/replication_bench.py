"""MM2 replication throughput on the local harness (source 3.9 -> Connect/MM2 -> target 4.1).

Produces N records to a fresh topic on the source, applies the product's connectors, and measures
how long until the target holds all of them. Also times the harness start-up. Writes the section
'Local replication (MM2)' of docs/PERFORMANCE.md.

    .venv/bin/python bench/replication_bench.py [--records 500000] [--size 200] [--partitions 6]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from msk_migrate.config.migration import MigrationSpec  # noqa: E402
from msk_migrate.connect.apply import apply  # noqa: E402
from msk_migrate.connect.rest import ConnectClient  # noqa: E402
from msk_migrate.connectors.render import render_connectors  # noqa: E402
from msk_migrate.local.harness import LocalEnvironment  # noqa: E402
from msk_migrate.paths import LOCAL_DIR  # noqa: E402
from perfdoc import write_section  # noqa: E402


def ends(bootstrap: str, topic: str, parts: int) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench"})
    total = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(parts))
    c.close()
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=500_000)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--tasks", type=int, default=2)
    args = ap.parse_args()

    env = LocalEnvironment(LOCAL_DIR / "bench-env")
    env.down(wipe=True)
    t0 = time.time()
    status = env.up()
    startup = time.time() - t0
    try:
        src, tgt = env.source(), env.target()
        admin = AdminClient({"bootstrap.servers": src.bootstrap_servers})
        admin.create_topics([NewTopic("bench.records", args.partitions, 1)])["bench.records"].result(30)
        p = Producer({"bootstrap.servers": src.bootstrap_servers, "linger.ms": 20, "batch.size": 262144})
        value = b"x" * args.size
        t1 = time.time()
        for i in range(args.records):
            while True:
                try:
                    p.produce("bench.records", key=str(i).encode(), value=value)
                    break
                except BufferError:  # local queue full: let librdkafka drain it
                    p.poll(0.2)
        p.flush(120)
        produce_s = time.time() - t1
        spec = MigrationSpec(name="bench", topics=["bench\\..*"], tasks_max=args.tasks, replication_factor=1,
                             internal_replication_factor=1, refresh_topics_interval_seconds=5)
        t2 = time.time()
        apply(ConnectClient(status["connect"]["url"]), render_connectors(src, tgt, spec), wait=True, timeout=120)
        while ends(tgt.bootstrap_servers, "bench.records", args.partitions) < args.records:
            if time.time() - t2 > 900:
                raise SystemExit("replication did not finish within 900 s")
            time.sleep(0.5)
        repl_s = time.time() - t2
    finally:
        env.down(wipe=True)
    mb = args.records * (args.size + 6) / 1e6
    body = f"""| figure | value |
| --- | --- |
| local environment start-up (2 KRaft nodes + Connect, warm Maven cache) | {startup:.1f} s |
| records | {args.records:,} x {args.size} B values, {args.partitions} partitions, tasks.max={args.tasks} |
| produce to source (confluent-kafka, linger 20 ms) | {produce_s:.1f} s ({args.records / produce_s:,.0f} records/s) |
| MM2 replication, connectors applied -> all records on target | {repl_s:.1f} s ({args.records / repl_s:,.0f} records/s, {mb / repl_s:.1f} MB/s) |

All three JVMs share the machine's cores with the producer; on ECS each Connect task has its own vCPUs,
so these figures are a floor, not a forecast. The time includes connector start-up and MM2's first
topic refresh (up to `refresh.topics.interval.seconds`)."""
    write_section("Local replication (MM2)", body)
    print(body)


if __name__ == "__main__":
    main()
