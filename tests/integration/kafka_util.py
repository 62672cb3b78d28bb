"""Small confluent-kafka helpers for tests: create, produce, consume everything, group commits."""

from __future__ import annotations

import time
from collections.abc import Iterable

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.local.harness import wait_for as wait_until  # noqa: F401 - re-exported for the tests


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, name: str, partitions: int = 3, config: dict[str, str] | None = None) -> None:
    client = admin(bootstrap)  # keep a reference: futures fail if the client is destroyed
    client.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(timeout=30)


def produce(bootstrap: str, topic: str, records: Iterable[tuple], **conf) -> int:
    """records: (key, value, headers, partition) tuples; returns the count."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    n = 0
    for key, value, headers, partition in records:
        kw = {"partition": partition} if partition is not None else {}
        p.produce(topic, key=key, value=value, headers=headers, **kw)
        n += 1
        if n % 5000 == 0:
            p.flush()
    p.flush(30)
    return n


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> list:
    """Every record of ``topic`` (reads until ``expected`` records arrived or timeout)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time_ns()}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.subscribe([topic])
    out = []
    deadline = time.time() + timeout
    while len(out) < expected and time.time() < deadline:
        for m in c.consume(500, timeout=1.0):
            if m.error() is None:
                out.append(m)
    c.close()
    return out


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets"})
    md = c.list_topics(topic, timeout=10).topics[topic]
    out = {}
    for p in md.partitions:
        _lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        out[p] = hi
    c.close()
    return out


def commit_group(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` for ``group``; retried while a fresh cluster's group coordinator is still loading."""
    from confluent_kafka import KafkaException

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
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
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    res = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    c.close()
    return {tp.partition: tp.offset for tp in res}
