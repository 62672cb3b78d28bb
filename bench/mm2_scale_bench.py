"""MM2 at scale on the local harness: 10,000 partitions (1,000 topics x 10) and 1,000 consumer groups.

The shipped connector configs (``render_connectors``, ``tuning_profile: bulk``, the product's default
intervals) on one Connect worker; only the harness sizes change, by settings: ``--broker-heap`` (both KRaft
brokers) and ``--worker-heap`` (the worker's -Xmx). Measured:

* the copy: seconds from the connectors' PUT until every target partition exists, and until every record is
  there (one ListOffsets round for all partitions per poll, not a client per partition);
* the worker's memory: peak RSS of its JVM and heap used (``jcmd GC.heap_info`` every 2 s), and the live heap
  after a full GC once the copy and the checkpoints are done (what the worker needs to hold this size);
* task balance: partitions per task (the tasks' ``task.assigned.partitions``) and records written per task
  (Connect's ``source-record-write-total`` from the worker's /metrics), so ``tasks_max`` guidance comes from
  figures;
* the checkpoint connector: seconds from the PUT until every one of the 1,000 groups has translated offsets
  for all of its partitions on the target (and how many equal the source's committed offsets);
* new topics: seconds from creating a topic on the source until it exists on the target, and until its first
  record is there (``refresh.topics.interval.seconds``, 30 s by default, bounds the first).

Writes the section "MM2 at scale" of docs/PERFORMANCE.md.

    .venv/bin/python bench/mm2_scale_bench.py [--topics 1000] [--partitions 10] [--groups 1000] \\
        [--tasks 4] [--broker-heap 2g] [--worker-heap 2g]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import requests
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from kafka_load import create_topics_served
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.kafka.produce import produce_waiting
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.paths import LOCAL_DIR
from perfdoc import write_section

PREFIX = "scale."
GROUP = "scale-g"


def load() -> float:
    return os.getloadavg()[0]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg} (load {load():.1f})", flush=True)


def java_pid(group_leader: int) -> int:
    """The worker's JVM: the java process in the process group the harness started."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if os.getpgid(int(d.name)) == group_leader and b"java" in (d / "cmdline").read_bytes().split(b"\0")[0]:
                return int(d.name)
        except (OSError, ProcessLookupError):
            continue
    raise SystemExit(f"no java process in process group {group_leader}")


def rss_mib(pid: int) -> float:
    m = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else 0.0


def heap_used_mib(pid: int) -> float | None:
    out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"total (\d+)K, used (\d+)K", out)
    return int(m.group(2)) / 1024 if m else None


class Sampler(threading.Thread):
    """Peak RSS and heap used of one JVM, every ``interval`` seconds, until stopped."""

    def __init__(self, pid: int, interval: float = 2.0):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss = self.peak_heap = 0.0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                self.peak_rss = max(self.peak_rss, rss_mib(self.pid))
                self.peak_heap = max(self.peak_heap, heap_used_mib(self.pid) or 0.0)
            except (OSError, subprocess.SubprocessError):
                pass
            self.halt.wait(self.interval)


def topic_names(n: int) -> list[str]:
    return [f"{PREFIX}t{i:04d}" for i in range(n)]


def end_offsets(admin: AdminClient, tps: list[TopicPartition]) -> dict[tuple[str, int], int]:
    """Latest offsets of ``tps`` in batched ListOffsets requests; a missing partition is left out."""
    out: dict[tuple[str, int], int] = {}
    for i in range(0, len(tps), 2000):
        futs = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps[i: i + 2000]}, request_timeout=60)
        for tp, f in futs.items():
            with contextlib.suppress(Exception):
                out[(tp.topic, tp.partition)] = f.result(120).offset
    return out


def target_partitions(admin: AdminClient, names: set[str]) -> int:
    md = admin.list_topics(timeout=60).topics
    return sum(len(md[t].partitions) for t in names if t in md and md[t].error is None)


def group_offsets(admin: AdminClient, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    """Committed offsets of every group (one OffsetFetch per group, all in flight together)."""
    out: dict[str, dict[tuple[str, int], int]] = {}
    for i in range(0, len(groups), 200):
        futs = {g: admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)], request_timeout=60)[g]
                for g in groups[i: i + 200]}
        for g, f in futs.items():
            try:
                res = f.result(120)
                out[g] = {(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0}
            except Exception:
                out[g] = {}
    return out


def task_balance(client: ConnectClient, metrics_url: str, name: str) -> list[dict[str, Any]]:
    """Per task of ``name``: assigned partitions (its config) and records written (worker /metrics)."""
    tasks = client._call("GET", f"/connectors/{name}/tasks")
    parts = {t["id"]["task"]: len([p for p in t["config"].get("task.assigned.partitions", "").split(",") if p])
             for t in tasks}
    written: dict[int, float] = {}
    text = requests.get(metrics_url, timeout=60).text
    for m in re.finditer(r"^kafka_connect_source_task_source_record_write_records_total\{([^}]*)\}\s+(\S+)", text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("connector") == name:
            written[int(labels["task"])] = float(m.group(2))
    return [{"task": t, "partitions": parts[t], "written": written.get(t, 0.0)} for t in sorted(parts)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--groups", type=int, default=1000, help="consumer groups, one per topic (<= --topics)")
    ap.add_argument("--records", type=int, default=50, help="records per partition (100-byte values)")
    ap.add_argument("--tasks", type=int, default=MigrationSpec.model_fields["tasks_max"].default)
    ap.add_argument("--broker-heap", default="2g")
    ap.add_argument("--worker-heap", default="2g")
    ap.add_argument("--new-topics", type=int, default=3, help="new-topic latency samples")
    ap.add_argument("--translate-stall", type=float, default=240.0,
                    help="seconds without a newly translated group-partition (after the copy) before the bench "
                    "records the translation as stalled")
    ap.add_argument("--precreate-target", action="store_true",
                    help="create the target topics in batches of 100 first (MM2 asks for all in one request, "
                         "which a KRaft controller refuses at this size; docs/sizing.md)")
    args = ap.parse_args()
    if args.groups > args.topics:
        raise SystemExit("--groups: at most --topics (one group per topic)")

    base = LOCAL_DIR / "mm2-scale-env"
    env = LocalEnvironment(base, workers=1, broker_heap=args.broker_heap,
                           worker_settings={"group_id": "mm2-scale", "heap": args.worker_heap})
    env.down(wipe=True)
    started = time.time()
    log(f"environment up (brokers -Xmx{args.broker_heap}, worker -Xmx{args.worker_heap})")
    env.up()
    fig: dict[str, Any] = {"load": {}}
    sampler: Sampler | None = None
    try:
        src, tgt = env.source().bootstrap_servers, env.target().bootstrap_servers
        sadmin, tadmin = AdminClient({"bootstrap.servers": src}), AdminClient({"bootstrap.servers": tgt})
        names = topic_names(args.topics)
        total_parts = args.topics * args.partitions
        t = time.time()
        create_topics_served(sadmin, names, args.partitions, src)
        fig["create_s"] = time.time() - t
        log(f"{total_parts:,} source partitions created in {fig['create_s']:.1f} s")

        t = time.time()
        p = Producer({"bootstrap.servers": src, "linger.ms": 20, "batch.size": 262144, "message.timeout.ms": 600_000})
        payload = os.urandom(50).hex().encode()  # 100 bytes
        failed: list[str] = []

        def delivered(err, _msg) -> None:
            if err is not None:
                failed.append(str(err))

        for r in range(args.records):
            for name in names:
                for part in range(args.partitions):
                    produce_waiting(p, name, key=f"{r:06d}".encode(), value=payload, partition=part,
                                    on_delivery=delivered)
        left = p.flush(600)
        if left or failed:  # every figure counts what was sent: a lost record would hide in them
            raise SystemExit(f"producing the load: {left} record(s) undelivered, {len(failed)} failed ({failed[:2]})")
        fig["produce_s"] = time.time() - t
        tps = [TopicPartition(n, q) for n in names for q in range(args.partitions)]
        want = end_offsets(sadmin, tps)
        n_records = sum(want.values())
        log(f"{n_records:,} records produced in {fig['produce_s']:.1f} s")

        groups = [f"{GROUP}{i:04d}" for i in range(args.groups)]
        committed = {g: {(names[i], q): want[(names[i], q)] // 2 for q in range(args.partitions)}
                     for i, g in enumerate(groups)}
        t = time.time()
        for i in range(0, len(groups), 200):
            futs = [sadmin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
                g, [TopicPartition(tp[0], tp[1], off) for tp, off in committed[g].items()])], request_timeout=60)[g]
                for g in groups[i: i + 200]]
            for f in futs:
                f.result(120)
        log(f"{len(groups)} groups committed (half-way into their topic) in {time.time() - t:.1f} s")

        if args.precreate_target:
            t = time.time()
            create_topics_served(tadmin, names, args.partitions, tgt)
            fig["precreate_s"] = time.time() - t
            log(f"{total_parts:,} target partitions pre-created in {fig['precreate_s']:.1f} s")
        spec = MigrationSpec(name="scale", topics=[re.escape(PREFIX) + ".*"], groups=[re.escape(GROUP) + ".*"],
                             tasks_max=args.tasks, replication_factor=1, internal_replication_factor=1,
                             emit_heartbeats=False)
        configs = render_connectors(env.source(), env.target(), spec)
        cn = spec.connector_names()
        client = ConnectClient(env.worker_urls()[0])
        worker = env.worker_spec()
        jpid = java_pid(env.proc("connect").pid)  # type: ignore[union-attr]
        fig["idle_rss"] = rss_mib(jpid)
        sampler = Sampler(jpid)
        sampler.start()

        t0 = time.time()
        for k in (cn["source"], cn["checkpoint"]):
            client.put_config(k, {key: v for key, v in configs[k].items() if key != "name"})
        log(f"connectors {cn['source']} and {cn['checkpoint']} applied (tasks.max={args.tasks})")
        name_set = set(names)
        created_at = copied_at = translated_at = None
        exact = translated = 0
        translated_gp = 0  # group-partitions with a translated offset on the target
        last_change, seen = time.time(), -1
        stalled = False
        polls = 0
        while time.time() - t0 < 3600 and not (created_at and copied_at and (translated_at or stalled)):
            polls += 1
            if created_at is None and target_partitions(tadmin, name_set) >= total_parts:
                created_at = time.time() - t0
                fig["load"]["created"] = load()
                log(f"all {total_parts:,} partitions exist on the target after {created_at:.1f} s")
            if created_at is not None and copied_at is None:
                got = end_offsets(tadmin, tps)
                done = sum(1 for k, e in want.items() if got.get(k, -1) >= e)
                if done == len(want):
                    copied_at = time.time() - t0
                    fig["load"]["copied"] = load()
                    log(f"all {n_records:,} records on the target after {copied_at:.1f} s")
                elif polls % 4 == 0:
                    log(f"  {done:,}/{len(want):,} partitions complete")
            if copied_at is not None and translated_at is None:
                offs = group_offsets(tadmin, groups)
                translated = sum(1 for g in groups if len(offs[g]) >= args.partitions)
                translated_gp = sum(len(offs[g]) for g in groups)
                exact = sum(1 for g in groups for k, v in committed[g].items() if offs[g].get(k) == v)
                if translated_gp != seen:
                    last_change, seen = time.time(), translated_gp
                elif time.time() - last_change > args.translate_stall:
                    # nothing new for that long with the copy done: MM2 will not translate the rest by itself
                    stalled = True
                    fig["load"]["translated"] = load()
                    log(f"translation stalled: {translated}/{len(groups)} groups complete, {translated_gp:,} "
                        f"group-partitions translated, unchanged for {args.translate_stall:.0f} s")
                if translated == len(groups):
                    translated_at = time.time() - t0
                    fig["load"]["translated"] = load()
                    log(f"all {len(groups)} groups translated after {translated_at:.1f} s")
                else:
                    log(f"  {translated}/{len(groups)} groups translated")
            time.sleep(2)
        if not (created_at and copied_at and (translated_at or stalled)):
            raise SystemExit("MM2 did not finish the copy and the translation within an hour")
        fig.update(created_s=created_at, copied_s=copied_at, translated_s=translated_at, records=n_records,
                   exact=exact, group_partitions=len(groups) * args.partitions, translated_groups=translated,
                   translated_gp=translated_gp, stall_s=args.translate_stall)
        fig["tasks"] = task_balance(client, f"http://127.0.0.1:{worker.metrics_port}/metrics", cn["source"])

        # New topics: created on the source while everything is in sync.
        fig["new_topic"] = []
        for k in range(args.new_topics):
            topic = f"{PREFIX}new-{uuid.uuid4().hex[:6]}"
            t = time.time()
            sadmin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(60)
            while True:
                try:
                    p.produce(topic, value=payload, partition=0)
                    break
                except KafkaException:  # metadata of the just-created topic not propagated yet
                    p.poll(0.2)
            p.flush(60)
            exists = rec_at = None
            while time.time() - t < 600 and rec_at is None:
                if exists is None and topic in tadmin.list_topics(topic, timeout=30).topics \
                        and tadmin.list_topics(topic, timeout=30).topics[topic].error is None:
                    exists = time.time() - t
                if exists is not None:
                    off = end_offsets(tadmin, [TopicPartition(topic, 0)]).get((topic, 0), 0)
                    if off >= 1:
                        rec_at = time.time() - t
                time.sleep(0.5)
            fig["new_topic"].append((exists, rec_at, load()))
            log(f"new topic {k + 1}: on the target after {exists} s, its record after {rec_at} s")
            time.sleep(7 * (k + 1))  # land at different points of the refresh cycle

        sampler.halt.set()
        sampler.join()
        subprocess.run(["jcmd", str(jpid), "GC.run"], capture_output=True, timeout=60)
        fig["live_heap"] = heap_used_mib(jpid)
        fig["end_rss"] = rss_mib(jpid)
        fig["peak_rss"], fig["peak_heap"] = sampler.peak_rss, sampler.peak_heap
    finally:
        if sampler is not None:
            sampler.halt.set()
        env.down(wipe=True)
    fig["total_min"] = (time.time() - started) / 60
    write(args, fig)


def write(args: argparse.Namespace, fig: dict[str, Any]) -> None:
    parts = args.topics * args.partitions
    tasks = fig["tasks"]
    task_rows = "\n".join(f"| {t['task']} | {t['partitions']:,} | {t['written']:,.0f} |" for t in tasks)
    written = [t["written"] for t in tasks]
    share = (max(written) / statistics.mean(written)) if written and statistics.mean(written) else 0.0
    nt = fig["new_topic"]
    nt_rows = "\n".join(f"| {i + 1} | {e:.1f} s | {r:.1f} s | {ld:.1f} |" for i, (e, r, ld) in enumerate(nt)
                        if e is not None and r is not None)
    copy_rps = fig["records"] / fig["copied_s"]
    translated = (f"{fig['translated_s']:.1f} s" if fig["translated_s"] is not None else
                  f"**never**: {fig['translated_groups']:,} groups complete, {fig['translated_gp']:,} of "
                  f"{fig['group_partitions']:,} group-partitions translated, nothing new for {fig['stall_s']:.0f} s "
                  "after the copy ended")
    created_row = (f"all {parts:,} partitions exist on the target (from the connectors' PUT)" if "precreate_s" not in fig else
                   f"all {parts:,} partitions exist on the target (from the connectors' PUT; the bench had created them "
                   f"in batches of 100 first, {fig['precreate_s']:.1f} s, so MM2 had none to create)")
    body = f"""{args.topics:,} topics × {args.partitions} partitions = **{parts:,} partitions**, {args.records} records
of 100 bytes each ({fig['records']:,} records), and **{args.groups:,} consumer groups** (one per topic, committed half-way
into their topic: {fig['group_partitions']:,} group-partitions). The shipped connector configs (`render_connectors`,
`tuning_profile: bulk`, default refresh/checkpoint intervals) with `tasks_max: {args.tasks}` on **one Connect worker**
(-Xmx{args.worker_heap}); source Kafka 3.9 and target 4.1 single KRaft brokers (-Xmx{args.broker_heap}: at the
harness's default 384 MiB the source broker ran out of heap creating 5,000 partitions). Sizes are settings
(`--broker-heap`/`--worker-heap`, or `MSK_MIGRATE_LOCAL_BROKER_HEAP`/`MSK_MIGRATE_LOCAL_WORKER_HEAP` for
`msk-migrate local up`), no code edit. 2 shared cores; load = 1-minute load average when the figure was taken.
Creating the source partitions took {fig['create_s']:.0f} s, producing {fig['produce_s']:.0f} s; the whole run
{fig['total_min']:.1f} min.

| figure | value | load |
| --- | ---: | ---: |
| {created_row} | {fig['created_s']:.1f} s | {fig['load']['created']:.1f} |
| all {fig['records']:,} records on the target | {fig['copied_s']:.1f} s ({copy_rps:,.0f} records/s overall) | {fig['load']['copied']:.1f} |
| all {args.groups:,} groups translated on the target (every partition of every group) | {translated} | {fig['load']['translated']:.1f} |
| translated offsets equal to the source's committed ones | {fig['exact']:,} of {fig['group_partitions']:,} | |
| worker JVM RSS: idle before the connectors / peak / after the run | {fig['idle_rss']:,.0f} / **{fig['peak_rss']:,.0f}** / {fig['end_rss']:,.0f} MiB | |
| worker heap used: peak (sampled every 2 s) / live after a full GC | **{fig['peak_heap']:,.0f}** / {fig['live_heap'] or 0:,.0f} MiB | |

Task balance of the MirrorSourceConnector (tasks.max={args.tasks}; partitions from each task's
`task.assigned.partitions`, records from Connect's `source-record-write-total`; busiest task ÷ mean = {share:.2f}):

| task | partitions | records written |
| ---: | ---: | ---: |
{task_rows}

New topic created on the source while everything is in sync (`refresh.topics.interval.seconds`: 30, the default;
samples spaced so they land at different points of the refresh cycle):

| sample | on the target | its first record on the target | load |
| ---: | ---: | ---: | ---: |
{nt_rows}"""
    write_section("MM2 at scale", body)
    print(body)


if __name__ == "__main__":
    main()
