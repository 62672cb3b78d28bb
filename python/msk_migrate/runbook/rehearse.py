"""The local migration rehearsal: the whole data path of a migration, for real, in one command.

1. local source (Kafka 3.9) + target (Kafka 4.1) clusters, one Connect worker with MM2 (+ Prometheus)
2. demo topics with keyed records, headers, null keys, tombstones, a compacted topic, a transactional
   topic with an aborted transaction; consumer groups at the head and in the middle of the log
3. the MM2 connectors rendered by the product renderer, validated by the worker, applied
4. wait until the target holds every record and the groups' offsets are translated
5. offset verification (runbook helper) and the PySpark validation verdict
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ..config.migration import MigrationSpec
from ..connect.apply import apply, status_rows
from ..connect.rest import ConnectClient
from ..connectors.render import render_connectors
from ..local.harness import DEFAULT_DIR, LocalEnvironment
from .offsets import verify_offsets

REHEARSAL_MIGRATION = MigrationSpec(
    name="mm2",
    topics=["shop\\..*"],
    groups=["shop-.*"],
    tasks_max=2,
    replication_factor=1,
    internal_replication_factor=1,
    emit_checkpoints_interval_seconds=2,
    sync_group_offsets_interval_seconds=2,
    emit_heartbeats_interval_seconds=2,
    refresh_topics_interval_seconds=5,
    refresh_groups_interval_seconds=5,
    offset_lag_max=50,
)

#: topic -> (partitions, records, config)
DEMO_TOPICS: dict[str, tuple[int, int, dict[str, str]]] = {
    "shop.orders": (6, 60_000, {"retention.ms": "604800000", "max.message.bytes": "2097152"}),
    "shop.events": (3, 45_000, {}),
    "shop.customers": (2, 12_000, {"cleanup.policy": "compact"}),
    "shop.payments": (2, 3_000, {}),  # transactional, with one aborted transaction
}
#: group -> (topic, fraction of the log consumed)
DEMO_GROUPS = {"shop-billing": ("shop.orders", 1.0), "shop-analytics": ("shop.events", 0.6)}


@dataclass
class RehearsalResult:
    status: dict[str, Any]
    topics: list[dict[str, Any]] = field(default_factory=list)
    connectors: list[dict[str, Any]] = field(default_factory=list)
    offsets: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (
            all(t["target_records"] == t["source_records"] and t["target_topic"] == t["topic"]
                and not t["config_differences"] for t in self.topics)
            and all(o["status"] == "ok" for o in self.offsets)
            and self.validation.get("verdict") == "match"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "status": self.status, "topics": self.topics, "connectors": self.connectors,
                "offsets": self.offsets, "validation": self.validation, "seconds": self.seconds}


def _produce_demo(bootstrap: str, say: Callable[[str], None]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futs = admin.create_topics([NewTopic(t, p, 1, config=c) for t, (p, _, c) in DEMO_TOPICS.items()])
    for f in futs.values():
        f.result(timeout=30)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "lz4"})
    for topic, (parts, n, cfg) in DEMO_TOPICS.items():
        if topic == "shop.payments":
            continue
        say(f"producing {n:,} records to {topic}")
        compact = cfg.get("cleanup.policy") == "compact"
        for i in range(n):
            if compact:
                key = f"customer-{i % 2000}".encode()
                value = None if i % 11 == 0 else f'{{"customer":{i % 2000},"version":{i}}}'.encode()
            else:
                key = None if i % 13 == 0 else f"{topic}-key-{i % 5000}".encode()
                value = f'{{"id":{i},"amount":{i * 7 % 1000}}}'.encode() + b"x" * (i % 64)
            headers = [("source", b"rehearsal"), ("seq", str(i).encode())] if i % 4 == 0 else None
            _produce(p, topic, key, value, headers)
        p.flush(60)
    say("producing transactional records to shop.payments (one transaction aborted)")
    tp = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"rehearsal-{time.time_ns()}"})
    tp.init_transactions(30)
    total = DEMO_TOPICS["shop.payments"][1]
    for batch in range(10):
        tp.begin_transaction()
        for i in range(total // 10):
            tp.produce("shop.payments", key=f"pay-{batch}-{i}".encode(), value=f"{batch}:{i}".encode())
        if batch == 4:
            tp.abort_transaction(30)
        else:
            tp.commit_transaction(30)


def _produce(p: Producer, topic: str, key, value, headers) -> None:
    while True:
        try:
            p.produce(topic, key=key, value=value, headers=headers)
            return
        except BufferError:  # local queue full: let librdkafka drain it
            p.poll(0.2)


def _commit_groups(bootstrap: str) -> None:
    for group, (topic, fraction) in DEMO_GROUPS.items():
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        offsets = []
        for p in parts:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            offsets.append(TopicPartition(topic, p, int(hi * fraction)))
        for attempt in range(30):  # the group coordinator may still be loading or moving (retriable)
            try:
                c.commit(offsets=offsets, asynchronous=False)
                break
            except KafkaException as exc:
                if attempt == 29 or not exc.args[0].retriable():
                    raise
                time.sleep(1)
        c.close()


def _end_offsets(bootstrap: str, topics: list[str]) -> dict[str, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rehearsal-watermarks"})
    md = c.list_topics(timeout=10).topics
    out = {}
    for t in topics:
        if t not in md:
            out[t] = -1
            continue
        out[t] = sum(c.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1] for p in md[t].partitions)
    c.close()
    return out


def rehearse(say: Callable[[str], None] = lambda m: None, with_monitoring: bool = True,
             validate: bool = True, base_dir=DEFAULT_DIR, timeout: float = 300.0, worker: str = "local") -> RehearsalResult:
    t0 = time.time()
    if worker == "image":  # the Connect worker runs from the built image (local/image_worker.py)
        import os

        os.environ["MSK_MIGRATE_WORKER"] = "image"
    env = LocalEnvironment(base_dir, with_monitoring=with_monitoring, progress=say)
    say("wiping the previous rehearsal (a rehearsal starts from empty clusters)")
    env.down(wipe=True)
    status = env.up()
    res = RehearsalResult(status=status, seconds={"environment_up": round(time.time() - t0, 1)})
    src, tgt = env.source(), env.target()

    t1 = time.time()
    _produce_demo(src.bootstrap_servers, say)
    _commit_groups(src.bootstrap_servers)
    res.seconds["produce"] = round(time.time() - t1, 1)

    t2 = time.time()
    client = ConnectClient(status["connect"]["url"])
    configs = render_connectors(src, tgt, REHEARSAL_MIGRATION)
    apply(client, configs, wait=True, timeout=120, progress=say)
    topics = list(DEMO_TOPICS)
    source_ends = _end_offsets(src.bootstrap_servers, topics)
    # Transaction markers and the aborted batch occupy source offsets but are not copied
    # (read_committed): the target holds exactly the committed records.
    payments = DEMO_TOPICS["shop.payments"][1]
    source_ends["shop.payments"] = payments - payments // 10
    deadline = time.time() + timeout
    while True:
        try:
            target_ends = _end_offsets(tgt.bootstrap_servers, topics)
        except KafkaException:  # a topic MM2 has just created may not have its leader yet
            if time.time() > deadline:
                raise
            time.sleep(2)
            continue
        done = sum(max(v, 0) for v in target_ends.values())
        say(f"replicating: {done:,}/{sum(source_ends.values()):,} offsets on the target")
        if target_ends == source_ends or time.time() > deadline:
            break
        time.sleep(2)
    res.seconds["replication"] = round(time.time() - t2, 1)
    # Topic config parity: every config set on a source topic that MM2 syncs must hold on the target.
    from ..validation.kafka_meta import ClusterMeta, synced_config_differences

    src_meta = ClusterMeta("source", {"bootstrap.servers": src.bootstrap_servers}, 15).describe(topics)
    tgt_meta = ClusterMeta("target", {"bootstrap.servers": tgt.bootstrap_servers}, 15).describe(topics)
    res.topics = [
        {
            "topic": t,
            "target_topic": REHEARSAL_MIGRATION.topic_renames.get(t, t),
            "source_records": source_ends[t],
            "target_records": target_ends[t],
            "synced_configs": sorted(src_meta[t].overrides) if t in src_meta else [],
            "config_differences": synced_config_differences(src_meta[t], tgt_meta.get(t)) if t in src_meta else [],
        }
        for t in topics
    ]
    res.connectors = status_rows(client, list(configs))

    t3 = time.time()
    # Wait until every partition is translated (never ahead) AND MM2 has stopped refining the
    # translation (two identical polls, one checkpoint interval apart): what consumers would get.
    deadline = time.time() + 120
    previous = None
    while True:
        rows = verify_offsets(src, tgt, REHEARSAL_MIGRATION)
        ok = sum(r.status == "ok" for r in rows)
        say(f"waiting for translated offsets to settle: {ok}/{len(rows)} partitions translated")
        current = [r.to_dict() for r in rows]
        if rows and ok == len(rows) and current == previous or time.time() > deadline:
            break
        previous = current
        time.sleep(REHEARSAL_MIGRATION.sync_group_offsets_interval_seconds + 2)
    res.offsets = [r.to_dict() for r in rows]
    res.seconds["offset_translation"] = round(time.time() - t3, 1)

    if validate:
        from ..validation.job import run_validation
        from ..validation.request import ValidationRequest

        t4 = time.time()
        say("validating with Spark (auto mode: checksums, full diff where they differ)")
        req = ValidationRequest(
            source=src, target=tgt, topics=topics, mode="auto",
            until_timestamp_ms=int(time.time() * 1000) + 1000,
            report_dir=str(base_dir / "validation-report"),
        )
        report = run_validation(req, progress=say)
        res.validation = {"verdict": report.verdict, "exit_code": report.exit_code,
                          "locations": getattr(report, "locations", {}),
                          "records_compared": _records_compared(report)}
        res.seconds["validation"] = round(time.time() - t4, 1)
    res.seconds["total"] = round(time.time() - t0, 1)
    return res


def _records_compared(report: Any) -> int | None:
    data = report.to_dict() if hasattr(report, "to_dict") else {}
    summary = data.get("summary", {})
    return summary.get("source_records") or summary.get("source_count")
