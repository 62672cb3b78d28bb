"""The batching reader: what the planner needs, read for many partitions at once.

One metadata request on the other cluster (``to``), one ListOffsets round for both clusters' bounds,
one DescribeConfigs for LogAppendTime; then rounds: every undecided partition says what it needs next
(:func:`.planner.assess`), and each kind of need is one batched read per round — source windows and
older identities by one read_committed consumer on ``frm``, target windows by one on ``to``
(:mod:`.windows`), lower bounds by one ListOffsets-by-timestamp call. A partition leaves the rounds once
the planner decides it, so a round reads only what is still open. The result is data
(:class:`.evidence.PartitionRead`), each with the planner's decision on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from confluent_kafka.admin import OffsetSpec

from ..access.admin import TP, AdminSession
from ..access.offsets import Checkpoint, start_and_stable_offsets
from .evidence import LIMITS, FindByTime, Limits, PartitionRead, Read, ReadOlder, ReadSource, ReadTarget, Span, TimedRec
from .locate import Rec
from .planner import Decision, assess
from .windows import Window, read_windows


def read_commit_points(frm: AdminSession, to: AdminSession, committed: dict[TP, int], to_name: Callable[[str], str],
                       checkpoints: dict[TP, Checkpoint], limits: Limits = LIMITS,
                       to_topics: Mapping[str, int] | None = None) -> list[tuple[PartitionRead, Decision]]:
    """Everything the planner needs for each commit point in ``committed`` (one per partition of ``frm``),
    in partition order, with the decision the last round reached on it (:func:`.planner.assess` of the
    complete read: the planner is pure, so it is not asked again). ``checkpoints``: MM2's newest, keyed by (topic on ``to``, partition); one counts
    only for exactly this commit point. ``to_topics``: ``to``'s topics and partition counts as the caller
    has just read them (a command placing many chunks reads them once); by default read afresh here."""
    tps = sorted(committed)
    if not tps:
        return []
    if to_topics is None:
        to_topics = to.topics(refresh=True)
    present = [(to_name(t), p) for t, p in tps if to_name(t) in to_topics and p < to_topics[to_name(t)]]
    (from_start, from_end), (to_start, to_end) = start_and_stable_offsets((frm, tps), (to, present))
    log_append = {n for n, c in to.topic_configs({t for t, _ in present}).items() if c.log_append_time}
    reads: dict[TP, PartitionRead] = {}
    for t, p in tps:
        tt = (to_name(t), p)
        cp = checkpoints.get(tt)
        reads[(t, p)] = PartitionRead(
            t, p, tt[0], committed[(t, p)], Span(from_start[(t, p)], from_end[(t, p)]),
            Span(to_start[tt], to_end[tt]) if tt in to_end else None,
            cp.downstream_offset if cp and cp.upstream_offset == committed[(t, p)] else None,
            tt[0] in log_append, limits)
    decided: dict[TP, Decision] = {}
    open_ = list(tps)
    while open_:
        needs: dict[TP, Read] = {}
        for tp in open_:
            got = assess(reads[tp])
            if isinstance(got, Decision):
                decided[tp] = got
            else:
                needs[tp] = got
        reads.update(_answer(frm, to, reads, needs))
        open_ = list(needs)
    return [(reads[tp], decided[tp]) for tp in tps]


def _answer(frm: AdminSession, to: AdminSession, reads: dict[TP, PartitionRead], needs: dict[TP, Read]) -> dict[TP, PartitionRead]:
    """One round: every need of one kind in one batched call; the reads with their answers."""
    out: dict[TP, PartitionRead] = {}
    no_ts = {r.topic for r in reads.values() if r.log_append_time}  # fingerprints with timestamp 0 on both sides

    source = {tp: n for tp, n in needs.items() if isinstance(n, ReadSource)}
    wins = read_windows(frm, {tp: Window(n.start, n.end, n.want, n.from_offset) for tp, n in source.items()}, no_ts)
    for tp, n in source.items():
        out[tp] = reads[tp].answered(window_start=n.start, source_recs=tuple(TimedRec(*x) for x in wins[tp].recs))

    older = {tp: n for tp, n in needs.items() if isinstance(n, ReadOlder)}
    wins = read_windows(frm, {tp: Window(n.start, n.end) for tp, n in older.items()}, no_ts)
    for tp in older:
        out[tp] = reads[tp].answered(older_fps=frozenset(fp for _, fp, _ in wins[tp].recs))

    by_time = {tp: n for tp, n in needs.items() if isinstance(n, FindByTime)}
    if by_time:
        found = to.list_offsets({(reads[tp].to_topic, tp[1]): OffsetSpec.for_timestamp(n.timestamp) for tp, n in by_time.items()})
        for tp in by_time:
            res = found.get((reads[tp].to_topic, tp[1]))
            out[tp] = reads[tp].answered(time_offset=-1 if res is None or res.offset < 0 else res.offset)

    target = {tp: n for tp, n in needs.items() if isinstance(n, ReadTarget)}
    t_wins = {(reads[tp].to_topic, tp[1]): Window(n.start, _end(reads[tp]), n.want, n.start) for tp, n in target.items()}
    read_windows(to, t_wins, {reads[tp].to_topic for tp in target if reads[tp].log_append_time})
    for tp in target:
        w = t_wins[(reads[tp].to_topic, tp[1])]
        r = reads[tp]
        out[tp] = r.answered(target_recs=r.target_recs + tuple(Rec(o, fp) for o, fp, _ in w.recs), target_end_reached=w.reached_end)
    return out


def _end(r: PartitionRead) -> int:
    assert r.target is not None  # the planner reads the target only of a partition that exists there
    return r.target.end
