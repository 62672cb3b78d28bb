"""The schema ids the newest records of some topics carry, keys and values: what the gate's "schemas in sync"
(:mod:`.schema_sync`) finds schema'd topics and their subjects from.

A bounded read: the last :data:`TAIL` records of each partition (read_uncommitted up to the high watermark,
so a partition ending in transaction markers or aborted records is finished by its position, not by a
record), at most :data:`TIMEOUT_SECONDS` in all. The wire format and the tally are those of ``validate``
(:mod:`msk_migrate.validation.schema_ids`): the same bytes make a topic schema'd in both.

Invariant: what was read is what is tallied; a read cut short by the timeout tallies the records it got and
says so in ``complete`` (never an error: the gate's other conditions still run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition

from ..access.admin import TP, AdminSession
from ..access.offsets import end_offsets, partitions, start_offsets
from ..kafka.consume import POLL_SECONDS
from ..validation.schema_ids import TopicIds, count_ids, ids_of, tally

#: Records read per partition, from its end.
TAIL = 50
TIMEOUT_SECONDS = 15.0


@dataclass
class TailIds:
    """Per topic the tallies of its tail (side ``source``), and whether every partition's tail was read."""

    topics: dict[str, TopicIds] = field(default_factory=dict)
    records: int = 0
    complete: bool = True


def tail_ids(session: AdminSession, topics: list[str], per_partition: int = TAIL,
             timeout: float = TIMEOUT_SECONDS) -> TailIds:
    """The ids of the last ``per_partition`` records of each partition of ``topics`` on ``session``'s cluster."""
    tps = partitions(session, topics)
    if not tps:
        return TailIds()
    ends, starts = end_offsets(session, tps), start_offsets(session, tps)
    todo: dict[TP, int] = {tp: ends[tp] for tp in tps if ends.get(tp, 0) > starts.get(tp, 0)}
    counts: dict[TP, tuple[list[int], dict[bytes, int], dict[bytes, int]]] = {tp: ([0, 0], {}, {}) for tp in todo}
    out = TailIds()
    if not todo:
        return out
    consumer = Consumer(session.consumer_config(f"msk-migrate-gate-ids-{time.time_ns()}",
                                                **{"isolation.level": "read_uncommitted", "enable.partition.eof": True}))
    consumer.assign([TopicPartition(t, p, max(starts.get((t, p), 0), end - per_partition)) for (t, p), end in todo.items()])
    deadline = time.monotonic() + timeout
    try:
        while todo and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=POLL_SECONDS):
                if msg.error():
                    continue
                tp = (msg.topic(), msg.partition())
                if tp not in todo:
                    continue
                n, values, keys = counts[tp]
                key, value = msg.key(), msg.value()
                n[0] += value is not None
                n[1] += key is not None
                count_ids(values, value)
                count_ids(keys, key)
                out.records += 1
                if msg.offset() + 1 >= todo[tp]:
                    del todo[tp]
            for tp in list(todo):  # a tail of markers or aborted records never delivers its last offset
                if consumer.position([TopicPartition(*tp)])[0].offset >= todo[tp]:
                    del todo[tp]
    finally:
        consumer.close()
    out.complete = not todo
    rows: list[tuple[object, ...]] = []
    for (topic, _), (n, values, keys) in counts.items():
        rows += [("source", topic, n[0], ids_of(values)), ("source", topic, n[1], ids_of(keys), "key")]
    out.topics = tally(rows)
    return out
