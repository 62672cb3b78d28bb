"""The Kafka helpers of the test suites (one module): create topics, produce, read back, commit groups,
and the validation suite's deterministic records written to both clusters directly (no MM2).

Records are :class:`Rec` or ``(key, value, headers, partition)`` tuples (partition None: the producer
picks). Explicit partitions and timestamps keep the validation data deterministic.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.access.admin import quiet
from msk_migrate.kafka.produce import produce_waiting
from msk_migrate.local.harness import wait_for as wait_until  # noqa: F401 - re-exported for the tests

#: A fixed base time well inside the validation window (until = now - grace).
BASE_TS = int(time.time() * 1000) - 3_600_000


@dataclass(frozen=True)
class Rec:
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    ts: int | None = BASE_TS

    def with_(self, **kw) -> Rec:
        return replace(self, **kw)


def records(n: int, partitions: int = 2, prefix: str = "k", ts0: int = BASE_TS, headers: bool = True) -> list[Rec]:
    out = []
    for i in range(n):
        hdrs = (("trace", f"t{i}".encode()), ("n", str(i % 3).encode())) if headers and i % 2 == 0 else ()
        out.append(Rec(i % partitions, f"{prefix}{i}".encode(), f"value-{i}".encode() * (1 + i % 4), hdrs, ts0 + i))
    return out


# Every client here logs through a logger (``quiet``), never straight to stderr: the admin clients and producers
# kept per bootstrap outlive a rehearsal's clusters, and a client of a cluster that is gone logs its failed
# reconnects into whatever test captures stderr at that moment (a "one line on stderr" assertion then fails).
_admins: dict[str, AdminClient] = {}
_producers: dict[str, Producer] = {}


def admin(bootstrap: str) -> AdminClient:
    """A fresh AdminClient (keep a reference while its futures are pending)."""
    return AdminClient(quiet({"bootstrap.servers": bootstrap}))


def _admin(bootstrap: str) -> AdminClient:
    if bootstrap not in _admins:
        _admins[bootstrap] = admin(bootstrap)
    return _admins[bootstrap]


def create_topics(bootstrap: str, topics: dict[str, tuple[int, dict[str, str]]]) -> None:
    """Create {name: (partitions, config)} in one request and wait until all are visible."""
    if not topics:
        return
    a = _admin(bootstrap)
    futures = a.create_topics(
        [NewTopic(n, p, 1, config=c or {}) for n, (p, c) in topics.items()], operation_timeout=30
    )
    for fut in futures.values():
        fut.result()
    deadline = time.time() + 30
    while time.time() < deadline:  # metadata propagated
        md = a.list_topics(timeout=10)
        if all(
            n in md.topics and md.topics[n].error is None and len(md.topics[n].partitions) == p
            for n, (p, _c) in topics.items()
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"topics {sorted(topics)} not visible")


def create_topic(bootstrap: str, name: str, partitions: int = 3, config: dict[str, str] | None = None) -> None:
    create_topics(bootstrap, {name: (partitions, config or {})})


def _as_rec(r: Rec | tuple) -> Rec:
    if isinstance(r, Rec):
        return r
    key, value, headers, partition = r
    return Rec(partition, key, value, tuple(headers or ()), None)


def produce(bootstrap: str, topic: str, recs: Iterable[Rec | tuple], transactional: bool = False, abort: bool = False,
            **conf) -> int:
    """Write ``recs`` (all delivered, or the test fails); returns how many. ``conf``: extra producer settings
    (a producer of its own); ``transactional``: in one transaction, aborted with ``abort``."""
    if transactional or conf:
        extra = {"transactional.id": f"test-{uuid.uuid4().hex[:8]}"} if transactional else {}
        p = Producer(quiet({"bootstrap.servers": bootstrap, "linger.ms": 5, **extra, **conf}))
        if transactional:
            p.init_transactions(60)
            p.begin_transaction()
    else:
        # Not idempotent (no producer-id round trip); one in-flight request keeps the order.
        if bootstrap not in _producers:
            _producers[bootstrap] = Producer(quiet(
                {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "enable.idempotence": False,
                 "max.in.flight.requests.per.connection": 1}
            ))
        p = _producers[bootstrap]
    _know_topic(p, topic)
    errors: list[str] = []
    n = 0
    for r in map(_as_rec, recs):
        kw = {"partition": r.partition} if r.partition is not None else {}
        if r.ts is not None:
            kw["timestamp"] = r.ts
        produce_waiting(p, topic, value=r.value, key=r.key, headers=list(r.headers) if r.headers else None,
                        on_delivery=lambda err, _m: errors.append(str(err)) if err else None, **kw)
        n += 1
    if transactional:
        if abort:
            p.flush(30)  # the records reach the log, then the abort marker
            p.abort_transaction(60)
            errors.clear()
        else:
            p.commit_transaction(60)
    left = p.flush(30)
    assert left == 0 and not errors, f"produce to {topic} failed: {errors[:3]} ({left} left)"
    return n


def _know_topic(p: Producer, topic: str, timeout: float = 30.0) -> None:
    """Wait until ``p`` holds ``topic``'s metadata with a leader for every partition. A record produced to a
    topic the producer does not know yet waits in librdkafka's unassigned queue and is moved to its
    partition when the metadata arrives, while a record produced after that goes straight there: the
    later one can be sent first. The direct writes of the validation suite (the same records on both
    clusters, in the same order) would then differ by order on one cluster only."""
    deadline = time.time() + timeout
    while True:
        t = p.list_topics(topic, timeout=10).topics.get(topic)
        if t is not None and t.error is None and t.partitions and all(x.leader >= 0 for x in t.partitions.values()):
            return
        if time.time() > deadline:
            raise TimeoutError(f"the producer of the test does not see {topic} with a leader for every partition")
        time.sleep(0.1)


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> list:
    """Every record of ``topic`` (reads until ``expected`` records arrived or timeout)."""
    c = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time_ns()}",
                        "auto.offset.reset": "earliest", "enable.auto.commit": False, "isolation.level": "read_committed"}))
    try:
        c.subscribe([topic])
        out = []
        deadline = time.time() + timeout
        while len(out) < expected and time.time() < deadline:
            for m in c.consume(500, timeout=1.0):
                if m.error() is None:
                    out.append(m)
        return out
    finally:
        c.close()


# What a partition answers between its topic's creation and its leader's election.
_SETTLING = frozenset({KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                       KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION})


def end_offsets(bootstrap: str, topic: str, settle: float = 30.0) -> dict[int, int]:
    """Each partition's end offset; retried while a topic just created (by MM2, say) has no leader yet.

    A fresh topic is in the metadata before its leaders answer ListOffsets, so a retriable
    error within ``settle`` seconds is the topic settling, not a failure of the test.
    """
    c = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": "end-offsets"}))
    deadline = time.time() + settle
    try:
        while True:
            try:
                md = c.list_topics(topic, timeout=10).topics[topic]
                return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions}
            except KafkaException as exc:
                if exc.args[0].code() not in _SETTLING or time.time() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        c.close()


def commit_group(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` for ``group``; retried while a fresh cluster's group coordinator is still loading."""
    c = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}))
    try:
        for attempt in range(10):
            try:
                c.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
                return
            except KafkaException as exc:
                if (not exc.args[0].retriable() and "coordinator" not in exc.args[0].str().lower()) or attempt == 9:
                    raise
                time.sleep(1)
    finally:
        c.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}))
    try:
        res = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    finally:
        c.close()
    return {tp.partition: tp.offset for tp in res}


def create_pairs(pairs: list[Pair]) -> None:
    """Create the topics of many pairs with one request per cluster."""
    src = {p.topic: (p.partitions, p.config) for p in pairs}
    tgt = {
        p.topic: (p.target_partitions or p.partitions, p.config if p.target_config is None else p.target_config)
        for p in pairs
        if p.on_target
    }
    create_topics(pairs[0].source, src)
    create_topics(pairs[0].target, tgt)


@dataclass
class Pair:
    """One topic on both clusters."""

    source: str
    target: str
    topic: str
    partitions: int = 2
    config: dict[str, str] = field(default_factory=dict)
    target_partitions: int | None = None
    target_config: dict[str, str] | None = None
    on_target: bool = True

    def create(self) -> Pair:
        create_pairs([self])
        return self

    def write(self, src: list[Rec], tgt: list[Rec] | None = None) -> Pair:
        produce(self.source, self.topic, src)
        produce(self.target, self.topic, src if tgt is None else tgt)
        return self


def close_all() -> None:
    """Drop the cached clients (on the caller's thread): at the end of every module (tests/conftest.py) and before
    the shared clusters stop (tests/validation/conftest.py)."""
    for p in _producers.values():
        p.flush(5)
    _producers.clear()
    _admins.clear()
