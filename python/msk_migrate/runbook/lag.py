"""Replication lag per topic and partition: how far MM2's copy trails the source.

- source LSO: the last stable offset (what a read_committed consumer can read up to);
- replicated: the next source offset MM2 will copy, from the source connector's committed offsets
  (Connect's offsets REST endpoint, Kafka >= 3.5 workers; committed every ``offset.flush.interval.ms``);
- behind: records between the two (transaction markers and aborted records are not counted: gaps of up
  to :data:`EXACT_COUNT_LIMIT` offsets are read; larger gaps are reported as the offset gap, an upper bound);
- latency: source newest record time minus target newest record time (0 when nothing is behind).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from ..config.migration import MigrationSpec
from ..connect.rest import ConnectClient
from ..kafka.admin import AdminSession
from ..kafka.offsets import last_stable_offsets, newest_timestamps, partitions, records_between, start_offsets
from ..kafka.selection import topic_selection

EXACT_COUNT_LIMIT = 1000


@dataclass
class LagRow:
    topic: str
    partition: int
    target_topic: str
    source_lso: int
    replicated: int  #: next source offset MM2 copies
    behind: int  #: records not yet on the target
    exact: bool  #: False when ``behind`` is an offset gap (upper bound)
    newest_age_s: float | None  #: age of the newest record on the target partition
    latency_s: float | None  #: source newest - target newest (0 when nothing is behind)
    status: str = "in-sync"  # in-sync | behind

    def to_dict(self) -> dict:
        return asdict(self)


def replicated_positions(client: ConnectClient, connector: str, source_alias: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> next source offset, from the MirrorSourceConnector's committed offsets."""
    out = {}
    for entry in client.offsets(connector):
        part, off = entry.get("partition", {}), entry.get("offset") or {}
        if part.get("cluster") == source_alias and "offset" in off:
            out[(part["topic"], int(part["partition"]))] = int(off["offset"]) + 1
    return out


def measure_lag(source: AdminSession, target: AdminSession, client: ConnectClient, migration: MigrationSpec,
                source_alias: str, topics: list[str] | None = None, max_records: int = 0,
                max_age: float | None = None) -> list[LagRow]:
    sel = topic_selection(migration)
    chosen = sel.select(source.topics(refresh=True))
    if topics:
        chosen = [t for t in chosen if t in topics]
    tps = partitions(source, chosen)
    lso = last_stable_offsets(source, tps)
    start = start_offsets(source, tps)
    done = replicated_positions(client, migration.connector_names()["source"], source_alias)
    src_ts = newest_timestamps(source, tps)
    ttps = [(sel.target_name(t), p) for t, p in tps if sel.target_name(t) in target.topics(refresh=True)]
    tgt_ts = newest_timestamps(target, ttps)
    now = time.time()
    rows = []
    for t, p in tps:
        pos = max(done.get((t, p), start[(t, p)]), start[(t, p)])
        gap = max(lso[(t, p)] - pos, 0)
        exact = gap <= EXACT_COUNT_LIMIT
        behind = records_between(source, (t, p), pos, lso[(t, p)]) if 0 < gap <= EXACT_COUNT_LIMIT else gap
        tts = tgt_ts.get((sel.target_name(t), p))
        sts = src_ts.get((t, p))
        age = round(now - tts / 1000, 1) if tts else None
        latency = 0.0 if behind == 0 else (round(max(sts - (tts or 0), 0) / 1000, 1) if sts else None)
        row = LagRow(t, p, sel.target_name(t), lso[(t, p)], pos, behind, exact, age, latency)
        late = max_age is not None and latency is not None and latency > max_age
        row.status = "behind" if behind > max_records or late else "in-sync"
        rows.append(row)
    return rows
