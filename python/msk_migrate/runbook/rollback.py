"""Rollback after producers moved: reverse replication target -> source for named topics.

``plan`` shows the change; ``apply`` makes it, in this order (nothing is written before every check passed):

1. the forward flow is re-applied with the topics excluded (a topic flows one way at a time);
2. per partition, the target offset where the producers' records begin: one past the target copy of the
   last record the forward flow replicated (from its committed Connect offsets and newest offset sync);
3. the reverse connectors (``<name>-reverse-source``, ``-reverse-checkpoint``; rendered by
   :func:`msk_migrate.connectors.render.render_reverse_connectors`) are created, the source connector
   STOPPED with its offsets set to that boundary (Connect offsets API), then resumed. Its checkpoints
   (``<name>-reverse.<target alias>.checkpoints.internal`` on the source) translate the groups' target offsets, so a
   group rolled back to the source resumes where it stopped on the target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..access.admin import AdminSession
from ..access.offsets import count_records, latest_offset_syncs, partitions, start_offsets
from ..config.migration import ClusterEndpoint, MigrationSpec
from ..connect_api.apply import apply, validate_all
from ..connect_api.rest import ConnectClient
from ..connectors.render import forward_spec_without, render_connectors, render_reverse_connectors
from ..errors import UsageError
from ..kafka.names import SOURCE_CONNECTOR_CLASS
from ..kafka.selection import topic_selection
from .lag import replicated_positions
from .session import MigrationSession


@dataclass
class RollbackPlan:
    topics: list[str]
    forward: dict[str, dict[str, str]]
    reverse: dict[str, dict[str, str]]
    forward_exclude_added: list[str]
    start: dict[str, int] = field(default_factory=dict)  #: "topic[p]" -> target offset the reverse flow starts at

    def to_dict(self) -> dict[str, Any]:
        return {"topics": self.topics, "forward_exclude_added": self.forward_exclude_added,
                "forward_connectors": sorted(self.forward), "reverse_connectors": self.reverse, "start": self.start}


def plan(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec, topics: list[str],
         src: AdminSession, tgt: AdminSession) -> RollbackPlan:
    sel = topic_selection(m)
    for t in topics:
        if t not in src.topics():
            raise UsageError("--topic", f"{t} is not a topic of the source cluster", "name source topics (as the producers knew them)")
        if not sel.matches(t):
            raise UsageError("--topic", f"{t} is not replicated by this migration (migration.topics)",
                             "roll back only topics the forward flow replicates")
        if sel.target_name(t) not in tgt.topics():
            raise UsageError("--topic", f"{sel.target_name(t)} does not exist on the target", "nothing to roll back")
    fwd = forward_spec_without(m, topics)
    added = [e for e in fwd.topics_exclude if e not in m.topics_exclude]
    return RollbackPlan(sorted(topics), render_connectors(source, target, fwd),
                        render_reverse_connectors(source, target, fwd, topics), added)


def start_offsets_after_forward(client: ConnectClient, m: MigrationSpec, src: AdminSession, tgt: AdminSession,
                                source_alias: str, target_alias: str, topics: list[str]) -> dict[tuple[str, int], int]:
    """Target offset of the first record the forward flow did not write, per (target topic, partition)."""
    sel = topic_selection(m)
    done = replicated_positions(client, m.connector_names()["source"], source_alias)
    syncs = latest_offset_syncs(tgt, source_alias, target_alias, m.internal_namespace)
    tps = partitions(src, topics)
    tstart = start_offsets(tgt, [(sel.target_name(t), p) for t, p in tps])
    out: dict[tuple[str, int], int] = {}
    tails: dict[tuple[str, int], tuple[int, int]] = {}  #: source records copied after the newest offset sync
    for t, p in tps:
        tt = (sel.target_name(t), p)
        sync = syncs.get((t, p))
        if (t, p) not in done or sync is None:
            out[tt] = tstart[tt]  # the forward flow wrote nothing here
            continue
        last = done[(t, p)] - 1
        tails[(t, p)] = (sync.upstream_offset + 1, last + 1)
        out[tt] = sync.downstream_offset + 1
    # one consumer for every partition's tail (not one per partition); the count must be exact here
    counts = count_records(src, tails, max_offsets=sum(e - s for s, e in tails.values()), timeout=60.0)
    missing = [tp for tp, (s, e) in tails.items() if e > s and tp not in counts]
    if missing:
        raise src.error(f"counting the records after the newest offset sync of {missing[0][0]}[{missing[0][1]}] did not finish")
    for (t, p), n in counts.items():
        out[(sel.target_name(t), p)] += n
    return out


def apply_rollback(s: MigrationSession, p: RollbackPlan, timeout: float = 120.0,
                   progress: Callable[[str], None] = lambda s: None) -> RollbackPlan:
    client, m, src, tgt, source_alias, target_alias = s.connect(), s.migration, s.source, s.target, s.source_alias, s.target_alias
    validate_all(client, {**p.forward, **p.reverse})
    existing = set(client.connectors())
    progress("excluding the topics from the forward flow")
    apply(client, p.forward, wait=True, timeout=timeout, progress=progress)
    src_name = next(n for n, c in p.reverse.items() if c["connector.class"] == SOURCE_CONNECTOR_CLASS)
    if src_name not in existing:
        starts = start_offsets_after_forward(client, m, src, tgt, source_alias, target_alias, p.topics)
        p.start = {f"{t}[{q}]": o for (t, q), o in sorted(starts.items())}
        body = {k: v for k, v in p.reverse[src_name].items() if k != "name"}
        progress(f"creating {src_name} stopped, starting at the producers' first record")
        client.create_stopped(src_name, body)
        offsets = [{"partition": {"cluster": target_alias, "topic": t, "partition": q}, "offset": {"offset": o - 1}}
                   for (t, q), o in sorted(starts.items()) if o > 0]
        if offsets:
            client.alter_offsets(src_name, offsets)
        client.resume(src_name)
    rest = {n: c for n, c in p.reverse.items() if n != src_name}
    apply(client, {src_name: p.reverse[src_name], **rest}, wait=True, timeout=timeout, progress=progress)
    return p
