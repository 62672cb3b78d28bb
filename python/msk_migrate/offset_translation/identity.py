"""Re-delivery counted by record identity, for ``offsets verify`` and the cutover gate.

Offset arithmetic (``(target end - target committed) - (source end - source committed)``) counts
transaction markers, aborted records and a restart's duplicates as re-delivery (or hides a gap behind
them). Here each partition's exact placement ``P`` (:mod:`.planner`) is located first; then a group
committed at ``c`` on the target re-reads the records in ``[c, P)`` (counted as records a
read_committed consumer gets, not offsets) plus the earlier identities the proof finds after ``P``.
A committed offset above ``P`` skips the records in ``[P, c)``: returned negative (a gap).

Many groups are counted together (:func:`identity_redelivery_many`): a placement depends only on the
partition and its commit point, so groups that share one are placed once, and every placement and
every count range of the batch is read by one consumer per cluster and round (at 1,000 groups the
cost is a handful of rounds, not a consumer per group).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from ..access.admin import TP, AdminSession
from .plan import place_commits
from .planner import PartitionPlan
from .windows import Window, read_windows

#: Ranges longer than this are not read (the offset arithmetic is kept for them).
MAX_COUNT = 1_000_000

V = TypeVar("V", int, tuple[int, int])

#: One group's input: (group, its commits on the source, its commits on the target).
GroupCommits = tuple[str, dict[TP, int], dict[TP, int]]


def _layers(keys: Iterable[tuple[TP, V]]) -> list[dict[TP, V]]:
    """Split (partition, value) pairs into rounds holding each partition at most once."""
    per_tp: dict[TP, list[V]] = {}
    for tp, v in sorted(set(keys)):
        per_tp.setdefault(tp, []).append(v)
    depth = max((len(v) for v in per_tp.values()), default=0)
    return [{tp: vs[k] for tp, vs in per_tp.items() if k < len(vs)} for k in range(depth)]


def identity_redelivery_many(src: AdminSession, tgt: AdminSession, groups: list[GroupCommits],
                             to_name: Callable[[str], str], tgt_topics: Mapping[str, int] | None = None
                             ) -> dict[str, dict[TP, int]]:
    """group -> (source topic, partition) -> records the group re-reads on the target (negative: records
    skipped), for every partition whose placement is proven; others are left out. ``tgt_topics``: the
    target's topics as the caller has just read them (default: read afresh)."""
    wanted = [(g, {tp: c for tp, c in comm.items() if (to_name(tp[0]), tp[1]) in t_comm}, t_comm)
              for g, comm, t_comm in groups]
    proofs: dict[tuple[TP, int], PartitionPlan] = {}
    for layer in _layers((tp, c) for _, comm, _ in wanted for tp, c in comm.items()):
        for placed in place_commits(src, tgt, layer, to_name, {}, {}, to_topics=tgt_topics):
            proofs[((placed.topic, placed.partition), placed.commit)] = placed

    # per group and partition: the range to count, [target commit, P) or [P, target commit) (shared by the
    # groups that agree on it), its sign, and the earlier identities the proof found after P
    plan: dict[str, dict[TP, tuple[TP, int, int, int, int]]] = {}
    for g, comm, t_comm in wanted:
        for tp, c in comm.items():
            pr = proofs.get((tp, c))
            if pr is None or not pr.proven or pr.target_offset is None:
                continue
            tt = (pr.to_topic, pr.partition)
            lo, hi = sorted((t_comm[tt], pr.target_offset))
            if hi - lo > MAX_COUNT:
                continue
            behind = t_comm[tt] <= pr.target_offset
            plan.setdefault(g, {})[tp] = (tt, lo, hi, 1 if behind else -1, (pr.redelivery or 0) if behind else 0)
    counted: dict[tuple[TP, int, int], int] = {}
    ranges = {(tt, (lo, hi)) for rows in plan.values() for tt, lo, hi, _, _ in rows.values() if hi > lo}
    for batch in _layers(ranges):
        wins = {tt: Window(lo, hi) for tt, (lo, hi) in batch.items()}
        read_windows(tgt, wins)
        counted.update({(tt, *batch[tt]): len(w.recs) for tt, w in wins.items()})
    return {g: {tp: sign * counted.get((tt, lo, hi), 0) + extra for tp, (tt, lo, hi, sign, extra) in rows.items()}
            for g, rows in plan.items()}


def identity_redelivery(src: AdminSession, tgt: AdminSession, group: str, committed: dict[TP, int],
                        target_committed: dict[TP, int], to_name: Callable[[str], str]) -> dict[TP, int]:
    """:func:`identity_redelivery_many` for one group."""
    return identity_redelivery_many(src, tgt, [(group, committed, target_committed)], to_name).get(group, {})
