"""Test data written with confluent-kafka directly on both clusters (no MM2): identical records on
source and target, then injected differences. Deterministic: explicit partitions and timestamps."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

#: A fixed base time well inside the default window (until = now - grace).
BASE_TS = int(time.time() * 1000) - 3_600_000


@dataclass(frozen=True)
class Rec:
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    ts: int = BASE_TS

    def with_(self, **kw) -> Rec:
        return replace(self, **kw)


def records(n: int, partitions: int = 2, prefix: str = "k", ts0: int = BASE_TS, headers: bool = True) -> list[Rec]:
    out = []
    for i in range(n):
        hdrs = (("trace", f"t{i}".encode()), ("n", str(i % 3).encode())) if headers and i % 2 == 0 else ()
        out.append(Rec(i % partitions, f"{prefix}{i}".encode(), f"value-{i}".encode() * (1 + i % 4), hdrs, ts0 + i))
    return out


_admins: dict[str, AdminClient] = {}
_producers: dict[str, Producer] = {}


def admin(bootstrap: str) -> AdminClient:
    if bootstrap not in _admins:
        _admins[bootstrap] = AdminClient({"bootstrap.servers": bootstrap})
    return _admins[bootstrap]


def create_topics(bootstrap: str, topics: dict[str, tuple[int, dict[str, str]]]) -> None:
    """Create {name: (partitions, config)} in one request and wait until all are visible."""
    if not topics:
        return
    a = admin(bootstrap)
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


def create_topic(bootstrap: str, name: str, partitions: int, config: dict[str, str] | None = None) -> None:
    create_topics(bootstrap, {name: (partitions, config or {})})


def produce(bootstrap: str, topic: str, recs: Iterable[Rec], transactional: bool = False, abort: bool = False) -> None:
    if transactional:
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "transactional.id": f"test-{uuid.uuid4().hex[:8]}"})
        p.init_transactions(60)
        p.begin_transaction()
    else:
        # Not idempotent (no producer-id round trip); one in-flight request keeps the order.
        if bootstrap not in _producers:
            _producers[bootstrap] = Producer(
                {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "enable.idempotence": False,
                 "max.in.flight.requests.per.connection": 1}
            )
        p = _producers[bootstrap]
    errors: list[str] = []
    for r in recs:
        p.produce(
            topic, value=r.value, key=r.key, partition=r.partition, timestamp=r.ts,
            headers=list(r.headers) if r.headers else None,
            on_delivery=lambda err, _m: errors.append(str(err)) if err else None,
        )
    if transactional:
        if abort:
            p.flush(30)  # the records reach the log, then the abort marker
            p.abort_transaction(60)
            errors.clear()
        else:
            p.commit_transaction(60)
    left = p.flush(30)
    assert left == 0 and not errors, f"produce to {topic} failed: {errors[:3]} ({left} left)"


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
    """Drop cached clients before the clusters stop (no reconnect noise at exit)."""
    for p in _producers.values():
        p.flush(5)
    _producers.clear()
    _admins.clear()
