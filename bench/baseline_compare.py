#!/usr/bin/env python3
"""The script a user would write instead of the validation job (the comparison of issue 12; keep it
honest): confluent-kafka reads both clusters partition by partition, hashes key, value, timestamp and
headers in offset order (a chained digest, so it notices reordering) and compares per partition.

    python bench/baseline_compare.py SOURCE_BOOTSTRAP TARGET_BOOTSTRAP TOPIC   # exit 0 same, 1 differs
"""
import hashlib
import sys

from confluent_kafka import Consumer, TopicPartition


def digest(bootstrap: str, topic: str, partition: int) -> tuple[int, str]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "baseline-compare", "enable.auto.commit": False,
                  "isolation.level": "read_committed", "max.partition.fetch.bytes": 8 << 20})
    lo, hi = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
    h, n = hashlib.blake2b(digest_size=16), 0
    if hi > lo:
        c.assign([TopicPartition(topic, partition, lo)])
        last = lo - 1
        while last < hi - 1:
            # never ask for more than is left: consume() waits its whole timeout for a batch it cannot fill
            for m in c.consume(min(10_000, hi - 1 - last), timeout=10):
                if m.error():
                    sys.exit(f"{bootstrap} {topic}[{partition}]: {m.error()}")
                k, v = m.key(), m.value()
                h.update(b"%d:%d:%d:" % (m.timestamp()[1], -1 if k is None else len(k), -1 if v is None else len(v)))
                h.update(k or b"")
                h.update(v or b"")
                h.update(repr(m.headers()).encode())
                n, last = n + 1, m.offset()
    c.close()
    return n, h.hexdigest()


def main(source: str, target: str, topic: str) -> int:
    probe = Consumer({"bootstrap.servers": source, "group.id": "baseline-compare"})
    partitions = sorted(probe.list_topics(topic, timeout=30).topics[topic].partitions)
    probe.close()
    differ = [p for p in partitions if digest(source, topic, p) != digest(target, topic, p)]
    print(f"{topic}: {len(partitions)} partitions, differing: {differ or 'none'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
