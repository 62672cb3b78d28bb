"""Replication lag per topic and partition: how far MM2's copy trails the source.

- source LSO: the last stable offset (what a read_committed consumer can read up to);
- replicated: the next source offset MM2 will copy, from the source connector's committed offsets
  (Connect's offsets REST endpoint, Kafka >= 3.5 workers; committed every ``offset.flush.interval.ms``);
- behind: records between the two (transaction markers and aborted records are not counted: when every
  partition's gap adds up to at most :data:`EXACT_COUNT_LIMIT` offsets, ONE consumer assigned all of them
  counts the records; otherwise each gap is reported as the offset gap, an upper bound, shown ``<=N``);
- latency: source newest record time minus target newest record time (0 when nothing is behind).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..access.offsets import count_records, partitions, submit_newest, submit_start_and_stable
from ..connect_api.rest import ConnectClient
from ..kafka.selection import topic_selection
from ..outcome import Outcome, View, col
from .identity_gate import refuse_recreated
from .session import MigrationSession

if TYPE_CHECKING:
    from ..schemas.client import RegistryClient

#: Offsets, summed over every behind partition, that one consumer reads for an exact count.
EXACT_COUNT_LIMIT = 20_000
#: Above this many rows text output summarises (per topic); every row stays in --output json.
DETAIL_ROWS = 50


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
        return dict(self.__dict__)  # flat fields: a plain copy (asdict deep-copies; 10,000 rows cost half a second)


def replicated_positions(client: ConnectClient, connector: str, source_alias: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> next source offset, from the MirrorSourceConnector's committed offsets."""
    out = {}
    for entry in client.offsets(connector):
        part, off = entry.get("partition", {}), entry.get("offset") or {}
        if part.get("cluster") == source_alias and "offset" in off:
            out[(part["topic"], int(part["partition"]))] = int(off["offset"]) + 1
    return out


def measure_lag(s: MigrationSession, topics: list[str] | None = None, max_records: int = 0,
                max_age: float | None = None) -> list[LagRow]:
    """One row per partition. Every cluster read is batched: one metadata request per cluster, one
    ListOffsets round per kind of offset (librdkafka groups them per leader), every round in flight
    together while the Connect offsets call runs, and at most one consumer (assigned every partition
    that is behind) for exact record counts."""
    source, target, client, migration, source_alias = s.source, s.target, s.connect(), s.migration, s.source_alias
    sel = topic_selection(migration)
    chosen = sel.select(source.topics(refresh=True))
    if topics:
        wanted = set(topics)
        chosen = [t for t in chosen if t in wanted]
    tps = partitions(source, chosen)
    target_topics = target.topics(refresh=True)  # once: not per partition
    names = {t: sel.target_name(t) for t in chosen}
    ttps = [(names[t], p) for t, p in tps if names[t] in target_topics]
    bounds, src_newest, tgt_newest = submit_start_and_stable(source, tps), submit_newest(source, tps), submit_newest(target, ttps)
    done = replicated_positions(client, migration.connector_names()["source"], source_alias)
    start, lso = bounds()
    refuse_recreated(s, chosen, done, lso)  # a recreated topic would read as in sync from the old offsets (exit 2)
    src_ts, tgt_ts = src_newest(), tgt_newest()
    pos = {tp: max(done.get(tp, start[tp]), start[tp]) for tp in tps}
    gaps = {tp: (pos[tp], lso[tp]) for tp in tps if lso[tp] > pos[tp]}
    exact = count_records(source, gaps, EXACT_COUNT_LIMIT) if gaps else {}
    now = time.time()
    rows = []
    for t, p in tps:
        tp = (t, p)
        gap = max(lso[tp] - pos[tp], 0)
        counted = exact.get(tp)
        behind = gap if counted is None else counted
        tts = tgt_ts.get((names[t], p))
        sts = src_ts.get(tp)
        age = round(now - tts / 1000, 1) if tts else None
        latency = 0.0 if behind == 0 else (round(max(sts - (tts or 0), 0) / 1000, 1) if sts else None)
        row = LagRow(t, p, names[t], lso[tp], pos[tp], behind, gap == 0 or counted is not None, age, latency)
        late = max_age is not None and latency is not None and latency > max_age
        row.status = "behind" if behind > max_records or late else "in-sync"
        rows.append(row)
    return rows


@dataclass
class TopicLag:
    """One topic's partitions summarised: the table shows these, worst first; JSON has every partition."""
    topic: str
    partitions: int
    behind_partitions: int
    behind: int  #: records behind, summed (an upper bound when ``exact`` is False)
    exact: bool
    worst: list[LagRow]  #: the partitions furthest behind (at most 3)
    max_latency_s: float | None
    min_age_s: float | None


def summarize(rows: list[LagRow], worst: int = 3) -> list[TopicLag]:
    """Per topic, the topics with the most records behind first (then by latency, then by name)."""
    by_topic: dict[str, list[LagRow]] = {}
    for r in rows:
        by_topic.setdefault(r.topic, []).append(r)
    out = []
    for topic, rs in by_topic.items():
        bad = sorted((r for r in rs if r.status != "in-sync"), key=lambda r: (-r.behind, -(r.latency_s or 0), r.partition))
        lats = [r.latency_s for r in rs if r.latency_s is not None]
        ages = [r.newest_age_s for r in rs if r.newest_age_s is not None]
        out.append(TopicLag(topic, len(rs), len(bad), sum(r.behind for r in rs), all(r.exact for r in rs), bad[:worst],
                            max(lats) if lats else None, min(ages) if ages else None))
    out.sort(key=lambda s: (s.behind_partitions == 0, -s.behind, -(s.max_latency_s or 0), s.topic))
    return out


def _green(ok: bool, text: str) -> str:
    return f"[{'green' if ok else 'red'}]{text}[/]"


def _upto(n: int, exact: bool) -> str:
    return str(n) if exact else f"<={n}"


def lag_views(rows: list[LagRow]) -> list[View]:
    """Up to :data:`DETAIL_ROWS` partitions: one row each; more: one row per topic, topics behind first
    with their worst partitions (and one row for the topics past :data:`DETAIL_ROWS`)."""
    if len(rows) <= DETAIL_ROWS:
        return [View("replication lag (source -> target)", [
            col("topic", "topic"), col("p", "partition", True), col("source LSO", "source_lso", True),
            col("replicated", "replicated", True), col("behind", lambda r: _upto(r.behind, r.exact), True),
            col("age s", "newest_age_s", True), col("latency s", "latency_s", True),
            col("status", lambda r: _green(r.status == "in-sync", r.status))], rows)]
    topics = summarize(rows)
    shown: list[dict] = [{"topic": s.topic, "partitions": s.partitions, "behind p": _green(s.behind_partitions == 0, str(s.behind_partitions)),
                          "behind": _upto(s.behind, s.exact), "latency s": s.max_latency_s,
                          "worst": ", ".join(f"[{r.partition}] {_upto(r.behind, r.exact)}" for r in s.worst) or "-"}
                         for s in topics[:DETAIL_ROWS]]
    if len(topics) > DETAIL_ROWS:
        rest = topics[DETAIL_ROWS:]
        shown.append({"topic": f"... {len(rest)} more topic(s)", "partitions": sum(s.partitions for s in rest),
                      "behind p": str(sum(s.behind_partitions for s in rest)), "behind": str(sum(s.behind for s in rest)),
                      "latency s": None, "worst": "--output json: every partition"})
    behind = sum(1 for s in topics if s.behind_partitions)
    return [View(f"replication lag per topic (source -> target): {len(rows)} partitions of {len(topics)} topics, "
                 f"{behind} topic(s) behind, worst first",
                 [col("topic", "topic"), col("partitions", "partitions", True), col("behind p", "behind p", True),
                  col("behind", "behind", True), col("latency s", "latency s", True), col("worst partitions", "worst")], shown)]


def lag(s: MigrationSession, topics: list[str] | None = None, max_records: int = 0, max_age: float | None = None,
        registries: tuple[RegistryClient, RegistryClient] | None = None) -> Outcome:
    """``msk-migrate lag``: exit 0 when every partition is within the thresholds, 1 otherwise (and when
    the migration has no topic on the source: in sync on nothing is not in sync). ``registries`` (source,
    target): a "schemas in sync" line for the schema'd topics among those measured (:mod:`.schema_sync`);
    schemas not in sync make the verdict "behind" too: a consumer on the target could not decode."""
    rows = measure_lag(s, topics, max_records, max_age)
    ok = bool(rows) and all(r.status == "in-sync" for r in rows)
    notes = [] if rows else ["no topic of the migration on the source"]
    extra: dict = {"in_sync": ok}
    if registries is not None:
        from .record_ids import tail_ids
        from .schema_sync import NAME, schemas_in_sync

        measured = sorted({r.topic for r in rows})
        # schema'd topics and their subjects from the ids their newest records carry (any subject strategy)
        sync = schemas_in_sync(*registries, measured, tail_ids(s.source, measured).topics, s.migration.topic_renames)
        if sync is not None:
            ok = ok and sync.ok
            extra["schemas_in_sync"] = sync.ok
            notes.append(f"{NAME}: {'[green]yes[/]' if sync.ok else '[red]no[/]'} ({sync.evidence})")
    return Outcome("lag", "in-sync" if ok else "behind", 0 if ok else 1, list(rows), s.talked_to(), extra=extra,
                   views=lag_views(rows), notes=notes)
