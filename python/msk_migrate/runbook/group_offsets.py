"""Consumer-group offsets across the migration: verify the translation, and sync a stopped group now.

Verification compares, per group and partition, what a consumer would still have to read:
``source lag = source end - source committed`` and ``target lag = target end - target committed``.
A translated offset is safe when ``target lag >= source lag`` (never ahead: no record is skipped on
the target); the surplus is the number of records the group will see again (MM2 is at-least-once
and its OffsetSyncStore translates groups deep in a backlog coarsely).

Where a group's placement can be proven (:mod:`msk_migrate.offset_translation`), re-delivery is counted by
record identity instead: transaction markers and at-least-once duplicates then do not distort it. Moving a
stopped group (``msk-migrate offsets sync``) lives in :mod:`msk_migrate.offset_translation`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..access.admin import TP, AdminSession
from ..access.offsets import end_offsets_of
from ..errors import UsageError
from ..kafka.selection import group_selection, topic_selection
from ..offset_translation.identity import identity_redelivery_many
from ..outcome import Outcome, View, col
from .session import MigrationSession


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
        return dict(self.__dict__)  # flat fields: a plain copy (asdict deep-copies; 20,000 rows cost a second)


def verify_offsets(s: MigrationSession, groups: list[str] | None = None) -> list[OffsetRow]:
    """Every row of :func:`iter_offset_rows` (callers that can stream should use that)."""
    return list(iter_offset_rows(s, groups))


def iter_offset_rows(s: MigrationSession, groups: list[str] | None = None, chunk: int = 256) -> Iterator[OffsetRow]:
    """Rows group by group, streamed: memory holds two chunks of ``chunk`` groups' offsets (the one placed,
    the next one fetched) and one end offset per partition (never every offset of every group). Per chunk
    of groups: OffsetFetch requests in flight together on each cluster, and one ListOffsets round per
    cluster for end offsets not asked yet."""
    src, tgt, migration = s.source, s.target, s.migration
    names = src.groups()
    if groups:
        require_known_groups(groups, names, "source")
        wanted = set(groups)
        names = [g for g in names if g in wanted]
    else:
        names = group_selection(migration).select(names)
    sel = topic_selection(migration)
    target_partitions = tgt.topics(refresh=True)  # read once: every chunk's placements use it
    chosen = functools.cache(sel.matches)  # per topic, not per group-partition (20,000 regex runs at 1,000 groups)

    s_end: dict[TP, int] = {}
    t_end: dict[TP, int] = {}
    chunks = [names[i:i + chunk] for i in range(0, len(names), chunk)]
    # The next chunk's commits are fetched while this one is placed: OffsetFetch is mostly waiting on the
    # coordinators, the placement mostly this process's CPU. Memory holds two chunks' offsets at most.
    with ThreadPoolExecutor(1, thread_name_prefix="offset-fetch") as ahead:
        fetching = ahead.submit(_committed_both, src, tgt, chunks[0], chosen) if chunks else None
        for k in range(len(chunks)):
            assert fetching is not None
            batch, t_comms = fetching.result()
            fetching = ahead.submit(_committed_both, src, tgt, chunks[k + 1], chosen) if k + 1 < len(chunks) else None
            yield from _chunk_rows(src, tgt, batch, t_comms, s_end, t_end, sel.target_name, target_partitions)


def _chunk_rows(src: AdminSession, tgt: AdminSession, batch: list[tuple[str, dict[TP, int]]], t_comms: dict[str, dict[TP, int]],
                s_end: dict[TP, int], t_end: dict[TP, int], target_name: Callable[[str], str],
                target_topics: Mapping[str, int]) -> Iterator[OffsetRow]:
    """The rows of one chunk of groups: end offsets not asked yet (added to ``s_end`` / ``t_end``), the
    identity counts of the chunk, then each group's rows."""
    if not batch:
        return
    need = {tp for _, comm in batch for tp in comm if tp not in s_end}
    tneed = {(target_name(t), p) for _, comm in batch for t, p in comm
             if target_name(t) in target_topics and (target_name(t), p) not in t_end}
    s_new, t_new = end_offsets_of((src, need), (tgt, tneed))
    s_end.update(s_new)
    t_end.update(t_new)
    counts = identity_redelivery_many(src, tgt, [(g, s_comm, t_comms[g]) for g, s_comm in batch], target_name, target_topics)
    for group, s_comm in batch:
        rows = list(_group_rows(group, s_comm, t_comms[group], s_end, t_end, target_name, target_topics))
        _apply_identity(rows, counts.get(group, {}))
        yield from rows


def _committed_both(src: AdminSession, tgt: AdminSession, groups: list[str], keep: Callable[[str], bool]
                    ) -> tuple[list[tuple[str, dict[TP, int]]], dict[str, dict[TP, int]]]:
    """(groups with a commit on a ``keep`` topic of the source, with those commits; their commits on the
    target). The target's OffsetFetch of a group is sent as the source's answer shows its commits, so both
    clusters' requests are in flight together, and the target is asked about those groups only."""
    batch: list[tuple[str, dict[TP, int]]] = []

    def committed_on_source() -> Iterator[str]:
        for g, comm in src.committed_many(groups):
            comm = {k: v for k, v in comm.items() if keep(k[0])}
            if comm:
                batch.append((g, comm))
                yield g

    t_comms = dict(tgt.committed_many(committed_on_source()))
    return batch, t_comms


def _group_rows(group: str, s_comm: dict[TP, int], t_comm: dict[TP, int], s_end: dict[TP, int], t_end: dict[TP, int],
                target_name: Callable[[str], str], target_topics: Mapping[str, int]) -> Iterator[OffsetRow]:
    for (topic, part), committed in sorted(s_comm.items()):
        ttopic = target_name(topic)
        if ttopic not in target_topics:
            yield OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, None, None, None, "topic-missing")
            continue
        tc, te = t_comm.get((ttopic, part)), t_end.get((ttopic, part))
        if tc is None or te is None:
            status, redelivery = "not-translated", None
        else:
            redelivery = (te - tc) - (s_end[(topic, part)] - committed)
            status = "ok" if redelivery >= 0 else "ahead"
        yield OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, tc, te, redelivery, status)


def _apply_identity(rows: list[OffsetRow], counts: dict[TP, int]) -> None:
    """Where the placement is proven, re-delivery by identity replaces the offset arithmetic (markers and
    duplicates do not count)."""
    for r in rows:
        n = counts.get((r.topic, r.partition))
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
class TopicOffsets:
    """One topic's group-partitions summarised (the text table at scale; JSON keeps every row)."""
    topic: str
    rows: int = 0
    bad: int = 0  #: rows whose status is not ok
    max_redelivery: int = 0
    group_names: set[str] = field(default_factory=set)
    worst: list[OffsetRow] = field(default_factory=list)  #: not-ok rows first, then the largest re-delivery (at most 3)

    @property
    def groups(self) -> int:
        return len(self.group_names)


class OffsetSummary:
    """Consumes rows as they stream past (:meth:`feed`), keeping per topic counts and its 3 worst rows,
    the first ``keep`` rows (the detailed table of a small run), and the verdict: memory is flat in the
    number of groups."""

    def __init__(self, keep: int = 50, worst: int = 3):
        self.keep, self.worst_n = keep, worst
        self.kept: list[OffsetRow] = []
        self.count = 0
        self.bad = 0
        self.group_count = 0
        self._last_group: str | None = None
        self._topics: dict[str, TopicOffsets] = {}

    def feed(self, rows: Iterable[OffsetRow]) -> Iterator[OffsetRow]:
        for r in rows:
            self.add(r)
            yield r

    def add(self, r: OffsetRow) -> None:
        self.count += 1
        if r.group != self._last_group:
            self.group_count, self._last_group = self.group_count + 1, r.group
        if len(self.kept) < self.keep:
            self.kept.append(r)
        s = self._topics.setdefault(r.topic, TopicOffsets(r.topic))
        s.rows += 1
        s.group_names.add(r.group)
        s.bad += r.status != "ok"
        self.bad += r.status != "ok"
        s.max_redelivery = max(s.max_redelivery, r.redelivery or 0)
        s.worst = sorted([*s.worst, r], key=_badness)[:self.worst_n]

    def topics(self) -> list[TopicOffsets]:
        """Topics with not-ok rows first, then by the largest re-delivery."""
        return sorted(self._topics.values(), key=lambda s: (-s.bad, -s.max_redelivery, s.topic))

    def ok(self) -> bool:
        """Verified: at least one group-partition compared and every one ok (never passes on nothing)."""
        return self.count > 0 and self.bad == 0

    def verdict(self) -> str:
        if self.count == 0:
            return "nothing-compared"
        return "ok" if self.bad == 0 else "not-ok"

    def exit_code(self) -> int:
        return 0 if self.ok() else 1


def _badness(r: OffsetRow) -> tuple:
    return (r.status == "ok", -(r.redelivery or 0), r.group, r.partition)


#: Above this many rows text output summarises per topic (every row stays in --output json).
DETAIL_ROWS = 50


def _green(ok: bool, text: str) -> str:
    return f"[{'green' if ok else 'red'}]{text}[/]"


def offsets_view(rows: list[OffsetRow]) -> View:
    """The detailed table: one row per group-partition."""
    return View("consumer group offsets (source -> target)", [
        col("group", "group"), col("topic", "topic"), col("p", "partition", True),
        col("source committed/end", lambda r: f"{r.source_committed}/{r.source_end}", True),
        col("target committed/end", lambda r: f"{r.target_committed}/{r.target_end}", True),
        col("re-delivery", "redelivery", True), col("status", lambda r: _green(r.status == "ok", r.status))], rows)


def summary_view(summary: OffsetSummary) -> View:
    """Per topic, not-ok first, with its worst rows (the table at scale)."""
    def worst(t: TopicOffsets) -> str:
        return ", ".join(f"{r.group}[{r.partition}] {r.status}" + (f" {r.redelivery}" if r.redelivery is not None else "")
                         for r in t.worst) or "-"

    return View("consumer group offsets per topic (source -> target), not-ok first", [
        col("topic", "topic"), col("groups", "groups", True), col("partitions", "rows", True),
        col("not ok", lambda t: _green(t.bad == 0, str(t.bad)), True), col("max re-delivery", "max_redelivery", True),
        col("worst", worst)], summary.topics())


def offsets_verify(s: MigrationSession, groups: list[str] | None = None) -> Outcome:
    """``msk-migrate offsets verify``: rows streamed (10,000 partitions of 1,000 groups stay flat in
    memory); exit 0 when at least one group-partition was compared and every one is ok, else 1."""
    summary = OffsetSummary(keep=DETAIL_ROWS)

    def end(o: Outcome) -> None:
        o.views = [offsets_view(summary.kept) if summary.count <= DETAIL_ROWS else summary_view(summary)]
        o.notes = [f"{summary.count} group-partition(s) of {summary.group_count} group(s): {summary.verdict()}"]

    return Outcome("offsets verify", "nothing-compared", 1, talked_to=s.talked_to(),
                   stream=summary.feed(iter_offset_rows(s, groups)), end=end,
                   tail=lambda: {"verdict": summary.verdict(), "exit_code": summary.exit_code(), "in_sync": summary.exit_code() == 0})
