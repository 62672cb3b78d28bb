"""Consumer-group offsets across the migration: verify the translation, and sync a stopped group now.

Verification compares, per group and partition, what a consumer would still have to read:
``source lag = source end - source committed`` and ``target lag = target end - target committed``.
A translated offset is safe when ``target lag >= source lag`` (never ahead: no record is skipped on
the target); the surplus is the number of records the group will see again (MM2 is at-least-once
and its OffsetSyncStore translates groups deep in a backlog coarsely).

Sync (``msk-migrate offsets sync``) writes the newest MM2 checkpoint of a *stopped* group to the target
at once, instead of waiting for MM2's next ``sync.group.offsets.interval.seconds``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..config.migration import ClusterEndpoint, MigrationSpec
from ..errors import UsageError
from ..kafka.admin import AdminSession
from ..kafka.offsets import end_offsets, latest_checkpoints
from ..kafka.selection import group_selection, topic_selection


@dataclass
class OffsetRow:
    group: str
    topic: str
    partition: int
    source_committed: int
    source_end: int
    target_topic: str
    target_committed: int | None
    target_end: int | None
    redelivery: int | None
    status: str  # ok | not-translated | ahead | topic-missing
    redelivery_by: str = "offsets"  #: identity (records located by content) | offsets (arithmetic)

    def to_dict(self) -> dict:
        return asdict(self)


def verify_offsets(source: ClusterEndpoint | AdminSession, target: ClusterEndpoint | AdminSession,
                   migration: MigrationSpec, groups: list[str] | None = None) -> list[OffsetRow]:
    src = source if isinstance(source, AdminSession) else AdminSession.for_endpoint("source", source)
    tgt = target if isinstance(target, AdminSession) else AdminSession.for_endpoint("target", target)
    names = src.groups()
    if groups:
        require_known_groups(groups, names, "source")
        names = [g for g in names if g in groups]
    else:
        names = group_selection(migration).select(names)
    sel = topic_selection(migration)
    target_topics = set(tgt.topics(refresh=True))
    rows: list[OffsetRow] = []
    for group in names:
        s_comm = {k: v for k, v in src.committed(group).items() if sel.matches(k[0])}
        if not s_comm:
            continue
        s_end = end_offsets(src, s_comm)
        present = [(sel.target_name(t), p) for t, p in s_comm if sel.target_name(t) in target_topics]
        t_end = end_offsets(tgt, present)
        t_comm = tgt.committed(group)
        for (topic, part), committed in sorted(s_comm.items()):
            ttopic = sel.target_name(topic)
            if ttopic not in target_topics:
                rows.append(OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, None, None, None, "topic-missing"))
                continue
            tc, te = t_comm.get((ttopic, part)), t_end.get((ttopic, part))
            if tc is None or te is None:
                status, redelivery = "not-translated", None
            else:
                redelivery = (te - tc) - (s_end[(topic, part)] - committed)
                status = "ok" if redelivery >= 0 else "ahead"
            rows.append(OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, tc, te, redelivery, status))
        _by_identity(src, tgt, group, s_comm, t_comm, sel.target_name, rows)
    return rows


def _by_identity(src: AdminSession, tgt: AdminSession, group: str, s_comm: dict, t_comm: dict, to_name, rows: list[OffsetRow]) -> None:
    """Re-delivery by record identity where the placement is proven (markers and duplicates do not count)."""
    from ..offset_translation.identity import identity_redelivery

    counts = identity_redelivery(src, tgt, group, s_comm, t_comm, to_name)
    for r in rows:
        n = counts.get((r.topic, r.partition)) if r.group == group else None
        if n is not None and r.status in ("ok", "ahead"):
            r.redelivery, r.status, r.redelivery_by = n, "ok" if n >= 0 else "ahead", "identity"


def require_known_groups(groups: list[str], known: list[str], where: str) -> None:
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise UsageError("--group", f"unknown consumer group {unknown[0]!r} on the {where} cluster",
                         "check the name with `kafka-consumer-groups --list` (names are case-sensitive)")


def require_inactive(session: AdminSession, group: str, where: str) -> None:
    members = session.group_members(group)
    if members:
        raise UsageError("--group", f"group {group!r} has {len(members)} active member(s) on the {where} cluster "
                         f"({', '.join(members[:3])})", f"stop its consumers on the {where} first")


@dataclass
class SyncRow:
    topic: str
    partition: int
    current: int | None
    translated: int
    action: str  # write | unchanged | backwards-refused | backwards-forced

    def to_dict(self) -> dict:
        return asdict(self)


def plan_offset_sync(source_alias: str, source: AdminSession, target: AdminSession, group: str,
                     force: bool = False) -> list[SyncRow]:
    """What ``offsets sync`` would write for ``group`` on the flow's target (from MM2's newest checkpoints)."""
    cps = latest_checkpoints(target, source_alias).get(group, {})
    if not cps:
        if group not in source.groups():
            require_known_groups([group], [], "source")
        raise UsageError("--group", f"MM2 has no checkpoint for group {group!r} yet",
                         "check that the group matches migration.groups and the checkpoint connector is RUNNING")
    current = target.committed(group)
    rows = []
    for (topic, part), cp in sorted(cps.items()):
        cur = current.get((topic, part))
        if cur == cp.downstream_offset:
            action = "unchanged"
        elif cur is not None and cp.downstream_offset < cur:
            action = "backwards-forced" if force else "backwards-refused"
        else:
            action = "write"
        rows.append(SyncRow(topic, part, cur, cp.downstream_offset, action))
    return rows


def apply_offset_sync(target: AdminSession, group: str, rows: list[SyncRow]) -> None:
    todo = {(r.topic, r.partition): r.translated for r in rows if r.action in ("write", "backwards-forced")}
    if todo:
        target.alter_committed(group, todo)
