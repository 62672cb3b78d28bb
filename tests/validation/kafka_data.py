"""Test data written with confluent-kafka directly on both clusters (no MM2): identical records on
source and target, then injected differences. Deterministic: explicit partitions and timestamps."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Iterable

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

    def with_(self, **kw) -> "Rec":
        return replace(self, **kw)


def records(n: int, partitions: int = 2, prefix: str = "k", ts0: int = BASE_TS, headers: bool = True) -> list[Rec]:
    out = []
    for i in range(n):
        hdrs = (("trace", f"t{i}".encode()), ("n", str(i % 3).encode())) if headers and i % 2 == 0 else ()
        out.append(Rec(i % partitions, f"{prefix}{i}".encode(), f"value-{i}".encode() * (1 + i % 4), hdrs, ts0 + i))
    return out


def create_topic(bootstrap: str, name: str, partitions: int, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})], operation_timeout=30)[name]
    fut.result()
    deadline = time.time() + 30
    while time.time() < deadline:  # metadata propagated
        md = admin.list_topics(name, timeout=10)
        t = md.topics.get(name)
        if t is not None and t.error is None and len(t.partitions) == partitions:
            return
        time.sleep(0.2)
    raise TimeoutError(f"topic {name} not visible")


def produce(bootstrap: str, topic: str, recs: Iterable[Rec], transactional: bool = False, abort: bool = False) -> None:
    conf = {"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True}
    if transactional:
        conf["transactional.id"] = f"test-{uuid.uuid4().hex[:8]}"
    p = Producer(conf)
    errors: list[str] = []
    if transactional:
        p.init_transactions(30)
        p.begin_transaction()
    for r in recs:
        p.produce(
            topic, value=r.value, key=r.key, partition=r.partition, timestamp=r.ts,
            headers=list(r.headers) if r.headers else None,
            on_delivery=lambda err, _m: errors.append(str(err)) if err else None,
        )
    if transactional:
        (p.abort_transaction if abort else p.commit_transaction)(30)
    left = p.flush(30)
    assert left == 0 and not errors, f"produce to {topic} failed: {errors[:3]} ({left} left)"


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

    def create(self, on_target: bool = True) -> "Pair":
        create_topic(self.source, self.topic, self.partitions, self.config)
        if on_target:
            cfg = self.config if self.target_config is None else self.target_config
            create_topic(self.target, self.topic, self.target_partitions or self.partitions, cfg)
        return self

    def write(self, src: list[Rec], tgt: list[Rec] | None = None) -> "Pair":
        produce(self.source, self.topic, src)
        produce(self.target, self.topic, src if tgt is None else tgt)
        return self
