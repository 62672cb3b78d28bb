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

from dataclasses import dataclass, field
from typing import Any

from ..access.offsets import count_records, latest_offset_syncs, partitions, start_offsets
from ..connect_api.apply import apply, validate_all
from ..connectors.render import forward_spec_without, render_connectors, render_reverse_connectors
from ..errors import UsageError
from ..kafka.names import SOURCE_CONNECTOR_CLASS, checkpoints_topic, connector_namespace, offset_syncs_topic
from ..kafka.selection import topic_selection
from ..outcome import Outcome, Progress, View, col, quiet
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


def plan(s: MigrationSession, topics: list[str]) -> RollbackPlan:
    """The change ``rollback apply`` makes for ``topics`` (each a replicated source topic on both clusters)."""
    m, src, tgt = s.migration, s.source, s.target
    source, target = s.endpoints()
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


def start_offsets_after_forward(s: MigrationSession, topics: list[str]) -> dict[tuple[str, int], int]:
    """Target offset of the first record the forward flow did not write, per (target topic, partition)."""
    client, m, src, tgt, source_alias, target_alias = s.connect(), s.migration, s.source, s.target, s.source_alias, s.target_alias
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
    counts = count_records(src, tails, max_offsets=sum(end - start for start, end in tails.values()), timeout=60.0)
    missing = [tp for tp, (start, end) in tails.items() if end > start and tp not in counts]
    if missing:
        raise src.error(f"counting the records after the newest offset sync of {missing[0][0]}[{missing[0][1]}] did not finish")
    for (t, p), n in counts.items():
        out[(sel.target_name(t), p)] += n
    return out


def apply_rollback(s: MigrationSession, p: RollbackPlan, timeout: float = 120.0, progress: Progress = quiet) -> RollbackPlan:
    client, target_alias = s.connect(), s.target_alias
    validate_all(client, {**p.forward, **p.reverse})
    existing = set(client.connectors())
    progress("excluding the topics from the forward flow")
    apply(client, p.forward, wait=True, timeout=timeout, progress=progress)
    src_name = next(n for n, c in p.reverse.items() if c["connector.class"] == SOURCE_CONNECTOR_CLASS)
    if src_name not in existing:
        starts = start_offsets_after_forward(s, p.topics)
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


def _bookkeeping(cfg: dict[str, str]) -> str:
    """Where a reverse connector keeps its bookkeeping on the source: offset syncs or checkpoints."""
    alias = cfg["source.cluster.alias"]
    if cfg["connector.class"] == SOURCE_CONNECTOR_CLASS:
        return offset_syncs_topic(alias, cfg["target.cluster.alias"], namespace=connector_namespace(cfg))
    return checkpoints_topic(alias, connector_namespace(cfg))


def plan_outcome(s: MigrationSession, p: RollbackPlan, applied: bool) -> Outcome:
    """``rollback plan|apply``'s outcome: the reverse connectors (rows), the forward exclusion and where
    the reverse flow starts; exit 0 (a refused plan is bad input, raised before)."""
    rows = [{"connector": n, "direction": "reverse", **c} for n, c in p.reverse.items()]
    notes = [f"forward flow: topics_exclude += {', '.join(p.forward_exclude_added)}"]
    if p.start:
        notes.append("reverse starts at target offsets: " + ", ".join(f"{k}={v}" for k, v in p.start.items()))
    notes.append("applied" if applied else "plan only: `msk-migrate rollback apply` with the same options makes it")
    is_source = lambda r: r["connector.class"] == SOURCE_CONNECTOR_CLASS  # noqa: E731
    return Outcome("rollback apply" if applied else "rollback plan", "applied" if applied else "planned", 0, rows,
                   s.talked_to(), extra={"applied": applied, **p.to_dict()}, notes=notes,
                   views=[View("reverse connectors (target -> source)", [
                       col("connector", "connector"),
                       col("topics", lambda r: r.get("topics", "-") if is_source(r) else r.get("groups", "-")),
                       col("offset syncs / checkpoints on source", _bookkeeping)])])


def rollback_plan(s: MigrationSession, topics: list[str]) -> Outcome:
    """``msk-migrate rollback plan``: what apply would change; nothing is changed."""
    return plan_outcome(s, plan(s, topics), applied=False)


def rollback_apply(s: MigrationSession, topics: list[str], timeout: float, progress: Progress = quiet) -> Outcome:
    """``msk-migrate rollback apply``: the plan, made (see the module docstring for the order)."""
    p = plan(s, topics)  # every refusal before the first write
    progress("rolling back")
    return plan_outcome(s, apply_rollback(s, p, timeout, progress), applied=True)


# ---- rollback reads the ledger ---------------------------------------------------------------------------
def topics_to_roll_back(view: Any, ledger_location: str, candidates: list[str], asked: list[str]) -> list[str]:
    """The topics a rollback acts on, from the ledger (``view``: a :class:`msk_migrate.ledger.LedgerView`):
    without ``asked`` (no ``--topic``), every topic of ``candidates`` (the wave's, or the migration's) whose
    producers moved; a topic named in ``asked`` whose producers never moved is refused (exit 2, nothing changed)."""
    moved = [t for t in candidates if view.state_of("topic", t) == "producers-moved"]
    for t in asked:
        if view.state_of("topic", t) != "producers-moved":
            state = view.state_of("topic", t) or "no record"
            raise UsageError("--topic", f"{t}'s producers never moved (ledger {ledger_location}: {state}); a rollback reverses "
                             "topics whose producers write to the target",
                             "roll back only topics confirmed by `cutover confirm`; consumers alone move back with "
                             "`offsets sync --to source`")
    if asked:
        return sorted(asked)
    if not moved:
        raise UsageError("--topic", f"no topic{' of these' if candidates else ''} has producers moved (ledger {ledger_location})",
                         "nothing to roll back: a rollback reverses topics confirmed by `cutover confirm`")
    return moved
