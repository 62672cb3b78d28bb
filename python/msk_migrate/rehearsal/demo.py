"""The rehearsal's demo applications: the topics and groups they own, the records they write, and the
consumers that read what a moved group sees.

Every client here acts as a demo application of one cluster (:class:`DemoApps`: quiet, and secured with the
harness admin's SCRAM user on a secured source).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from functools import partial
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ..access.admin import quiet
from ..config.migration import MigrationSpec
from ..kafka.produce import produce_waiting
from .result import StepFailed

#: topic -> (partitions, records, config)
DEMO_TOPICS: dict[str, tuple[int, int, dict[str, str]]] = {
    "shop.orders": (6, 60_000, {"retention.ms": "604800000", "max.message.bytes": "2097152"}),
    "shop.events": (3, 45_000, {}),
    "shop.customers": (2, 12_000, {"cleanup.policy": "compact"}),
    "shop.payments": (2, 3_000, {}),  # transactional, with one aborted transaction
}
#: The schema'd demo topics (:mod:`.schema_demo`): topic -> (partitions, records); in the consumers-only wave,
#: read to their end by MOVED_GROUP besides its topic.
AVRO_TOPIC, JSON_TOPIC, PROTOBUF_TOPIC = "shop.ledger", "shop.audit", "shop.shipments"
#: The topic whose values are under RecordNameStrategy (:mod:`.returns_demo`): Avro keys and values.
RETURNS_TOPIC = "shop.returns"
SCHEMA_TOPICS: dict[str, tuple[int, int]] = {AVRO_TOPIC: (2, 300), JSON_TOPIC: (1, 120), PROTOBUF_TOPIC: (2, 150),
                                             RETURNS_TOPIC: (2, 100)}
#: Per schema'd demo topic, each part its producers serialize with a registry: part -> (subject name strategy,
#: subject on the source registry). The parts not named carry plain bytes. What `validate`, the gate and "decode on
#: target" must find from the records: every format on keys as on values (JSON Schema on ``shop.audit``, Protobuf
#: on ``shop.shipments``, Avro on ``shop.returns``), and ``shop.returns``' values under RecordNameStrategy (the
#: record's full name), so no ``shop.returns-value`` subject exists to find them by.
SCHEMA_PARTS: dict[str, dict[str, tuple[str, str]]] = {
    AVRO_TOPIC: {"value": ("topic", f"{AVRO_TOPIC}-value")},
    JSON_TOPIC: {"key": ("topic", f"{JSON_TOPIC}-key"), "value": ("topic", f"{JSON_TOPIC}-value")},
    PROTOBUF_TOPIC: {"key": ("topic", f"{PROTOBUF_TOPIC}-key"), "value": ("topic", f"{PROTOBUF_TOPIC}-value")},
    RETURNS_TOPIC: {"key": ("topic", f"{RETURNS_TOPIC}-key"), "value": ("record", "shop.Return")},
}
#: group -> (topic, fraction of the log consumed)
DEMO_GROUPS = {"shop-billing": ("shop.orders", 1.0), "shop-analytics": ("shop.events", 0.6)}
#: The group moved to the target (no gap), and the group rolled back to the source with its topic.
MOVED_GROUP, ROLLBACK_GROUP, ROLLBACK_TOPIC = "shop-analytics", "shop-billing", "shop.orders"
#: How long the demo producer may take to have every record acknowledged (acks=all: with 3 replicas on a busy
#: 2-core machine, several times the single-broker figure).
FLUSH_SECONDS = 180
#: Records the moved producers write on the target.
MOVED_PRODUCER_RECORDS = 3_000

#: The flow of the local rehearsal (``make rehearse``, ``--local``): demo topics and groups, fast intervals.
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
    # shop.orders accepts 2 MiB records on the source (DEMO_TOPICS above): the preflight's record-size check asks for
    # exactly this override, so the rehearsal follows the fix an operator would apply.
    producer_overrides={"max.request.size": 2097152},
    # Two waves: the first (shop.orders, read by shop-billing) moves all the way, producers included, and is then
    # rolled back by reverse replication; the second moves its consumers only (its producers stay on the source).
    waves={"first": ["shop.orders"], "second": ["shop.events", "shop.customers", "shop.payments", *SCHEMA_TOPICS]},
)
#: The wave whose producers move (fenced, gated, confirmed, then rolled back) and the consumers-only wave.
PRODUCER_WAVE, CONSUMER_WAVE = "first", "second"


class DemoApps:
    """Client settings of the demo applications, per cluster (bootstrap servers -> librdkafka security
    settings; none for a plaintext cluster)."""

    def __init__(self) -> None:
        self._security: dict[str, dict[str, Any]] = {}

    def secure(self, client_config: dict[str, Any]) -> None:
        """Remember a cluster's settings (a harness ``client_config``: bootstrap servers and security)."""
        conf = dict(client_config)
        self._security[conf.pop("bootstrap.servers")] = conf

    def config(self, bootstrap: str, **conf: Any) -> dict[str, Any]:
        """Settings of a demo application on the cluster ``bootstrap`` (quiet, secured when it is)."""
        return quiet({**self._security.get(bootstrap, {}), "bootstrap.servers": bootstrap, **conf})


def retrying(what: str, call: Callable[[], Any], attempts: int = 15) -> Any:
    """``call()``, again after a second while a fresh cluster answers with a retriable error (a coordinator
    still loading, a leader still being elected); any other error, or the last one, fails the step naming ``what``."""
    for attempt in range(attempts):
        try:
            return call()
        except KafkaException as exc:
            err = exc.args[0]
            if attempt == attempts - 1 or not (err.retriable() or "coordinator" in err.str().lower()):
                raise StepFailed(f"{what}: {err.str()}") from exc
            time.sleep(1)
    raise AssertionError("unreachable")


def wait(predicate: Callable[[], Any], timeout: float, interval: float = 1.0) -> Any:
    """The first truthy ``predicate()`` within ``timeout`` seconds, else its last (falsy) answer."""
    deadline = time.time() + timeout
    while True:
        got = predicate()
        if got or time.time() > deadline:
            return got
        time.sleep(interval)


def _create_demo_topics(admin: AdminClient, replication_factor: int = 1) -> None:
    def create() -> None:
        futs = admin.create_topics([NewTopic(t, p, replication_factor, config=c) for t, (p, _, c) in DEMO_TOPICS.items()])
        for f in futs.values():
            try:
                f.result(timeout=30)
            except KafkaException as exc:  # created by an earlier attempt whose answer was an error
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

    retrying("create the demo topics", create)


def produce(p: Producer, topic: str, key, value, headers, on_delivery=None) -> None:
    produce_waiting(p, topic, poll_s=0.2, key=key, value=value, headers=headers, on_delivery=on_delivery)


class PaymentsWriter:
    """Writes shop.payments in transactions of one producer (a fixed transactional.id), one of them aborted.

    Each batch is flushed before its transaction ends, so its partitions are in the transaction and its records
    are in the log before EndTxn: librdkafka can send an abort ahead of the AddPartitionsToTxn it waits on, and
    the broker then answers INVALID_TXN_STATE (confluentinc/librdkafka#4849). The aborted batch must occupy
    source offsets, since that is what the rehearsal proves MM2 does not copy. An abortable error aborts and
    writes the batch again; a fatal one (the producer is unusable) starts a new producer on the same
    transactional.id, whose init fences the old one and aborts what it left open, and writes the batch again.
    """

    ATTEMPTS = 5

    def __init__(self, make_producer: Callable[[], Producer]) -> None:
        self._make = make_producer
        self._failed: list[str] = []
        self._tp = self._start()

    def _start(self) -> Producer:
        tp = self._make()
        retrying("init transactions", lambda: tp.init_transactions(30))
        return tp

    def _delivered(self, err, _msg) -> None:
        if err is not None:
            self._failed.append(err.str())

    def batch(self, batch: int, records: int, abort: bool) -> None:
        what = f"{'abort' if abort else 'commit'} transaction {batch}"
        for _attempt in range(self.ATTEMPTS):
            self._failed.clear()
            try:
                self._tp.begin_transaction()
                for i in range(records):
                    produce(self._tp, "shop.payments", f"pay-{batch}-{i}".encode(), f"{batch}:{i}".encode(), None,
                            self._delivered)
                left = self._tp.flush(30)
                if left or self._failed:  # the transaction cannot commit; aborting it is the recovery
                    self._end(what, abort=True)
                    continue
                self._end(what, abort=abort)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if err.fatal() or err.code() == KafkaError.INVALID_TXN_STATE:
                    self._tp = self._start()
                elif err.txn_requires_abort():
                    try:
                        self._end(what, abort=True)
                    except KafkaException:  # the abort itself failed: only a new producer recovers
                        self._tp = self._start()
                else:
                    raise StepFailed(f"{what}: {err.str()}") from exc
        reason = self._failed[0] if self._failed else "the broker refused it each time"
        raise StepFailed(f"transaction {batch} to shop.payments failed {self.ATTEMPTS} times ({reason})")

    def _end(self, what: str, abort: bool) -> None:
        """Commit or abort, asking again while the answer is retriable; other errors reach ``batch``."""
        for attempt in range(15):
            try:
                self._tp.abort_transaction(30) if abort else self._tp.commit_transaction(30)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if attempt == 14 or not err.retriable() or err.fatal() or err.txn_requires_abort():
                    raise
                time.sleep(1)


def produce_demo(apps: DemoApps, bootstrap: str, say: Callable[[str], None], replication_factor: int = 1) -> None:
    """Create the demo topics on ``bootstrap`` and write every demo record (shop.payments in transactions)."""
    _create_demo_topics(AdminClient(apps.config(bootstrap)), replication_factor)
    failed: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(err.str())

    p = Producer(apps.config(bootstrap, **{"linger.ms": 20, "compression.type": "lz4"}))
    for topic, (_parts, n, cfg) in DEMO_TOPICS.items():
        if topic == "shop.payments":
            continue
        say(f"producing {n:,} records to {topic}")
        compact = cfg.get("cleanup.policy") == "compact"
        for i in range(n):
            key: bytes | None
            value: bytes | None
            if compact:
                key = f"customer-{i % 2000}".encode()
                value = None if i % 11 == 0 else f'{{"customer":{i % 2000},"version":{i}}}'.encode()
            else:
                key = None if i % 13 == 0 else f"{topic}-key-{i % 5000}".encode()
                value = f'{{"id":{i},"amount":{i * 7 % 1000}}}'.encode() + b"x" * (i % 64)
            headers = [("source", b"rehearsal"), ("seq", str(i).encode())] if i % 4 == 0 else None
            produce(p, topic, key, value, headers, delivered)
        left = p.flush(FLUSH_SECONDS)
        if failed or left:
            raise StepFailed(f"{topic}: {len(failed) + left} record(s) not delivered"
                             + (f" ({failed[0]})" if failed else f" within {FLUSH_SECONDS} s"))
    say("producing transactional records to shop.payments (one transaction aborted)")
    txn_id = f"rehearsal-{time.time_ns()}"
    writer = PaymentsWriter(lambda: Producer(apps.config(bootstrap, **{"transactional.id": txn_id})))
    total = DEMO_TOPICS["shop.payments"][1]
    for batch in range(10):
        writer.batch(batch, total // 10, abort=batch == 4)


def commit(consumer: Consumer, offsets: list[TopicPartition]) -> None:
    """Commit, retrying while a fresh cluster's group coordinator is still being elected/loaded."""
    for attempt in range(15):
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
            return
        except KafkaException as exc:
            if attempt == 14 or not (exc.args[0].retriable() or "coordinator" in exc.args[0].str().lower()):
                raise
            time.sleep(1)


def commit_groups(apps: DemoApps, bootstrap: str) -> None:
    """Each demo group commits its fraction of its topic's log."""
    for group, (topic, fraction) in DEMO_GROUPS.items():
        with closing(Consumer(apps.config(bootstrap, **{"group.id": group, "enable.auto.commit": False}))) as c:
            parts = c.list_topics(topic, timeout=10).topics[topic].partitions
            offsets = []
            for p in parts:
                _lo, hi = retrying(f"{topic} end offsets", partial(c.get_watermark_offsets, TopicPartition(topic, p), timeout=10))
                offsets.append(TopicPartition(topic, p, int(hi * fraction)))
            commit(c, offsets)


def read_from(apps: DemoApps, bootstrap: str, group: str, topic: str, timeout: float = 30.0) -> list[bytes]:
    """Values a consumer of ``group`` reads from its committed offsets to the current end (no commit)."""
    with closing(Consumer(apps.config(bootstrap, **{"group.id": group, "enable.auto.commit": False,
                                                   "auto.offset.reset": "earliest", "isolation.level": "read_committed"}))) as c:
        return _read_to_end(c, topic, timeout)


def _read_to_end(c: Consumer, topic: str, timeout: float) -> list[bytes]:
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    committed = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in parts], timeout=10)}
    todo = {p for p in parts if ends[p] > max(committed[p], 0)}
    c.assign([TopicPartition(topic, p, max(committed[p], 0)) for p in parts])
    out, deadline = [], time.time() + timeout
    while todo and time.time() < deadline:
        for m in c.consume(1000, timeout=0.5):
            if m.error() is None:
                out.append(m.value())
        for p in list(todo):
            if c.position([TopicPartition(topic, p)])[0].offset >= ends[p]:
                todo.discard(p)
    return out


def values_after(apps: DemoApps, bootstrap: str, topic: str, offsets: dict[int, int]) -> list[bytes]:
    """Values of ``topic`` from ``offsets`` (partition -> first offset) to the current end."""
    g = f"rehearsal-reader-{time.time_ns()}"
    with closing(Consumer(apps.config(bootstrap, **{"group.id": g, "enable.auto.commit": False}))) as c:
        commit(c, [TopicPartition(topic, p, o) for p, o in offsets.items()])
    return read_from(apps, bootstrap, g, topic)

