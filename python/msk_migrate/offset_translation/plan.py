"""Exact offset translation of one stopped consumer group: per partition, where it resumes on the other
cluster, proven by content (see :mod:`.locate` for the alignment and docs/design.md for the proof).

Per partition, in batches over every partition of the group (one metadata request, one ListOffsets
round per question, one consumer per cluster reading small windows):

1. the commit point ``C`` on the cluster the group leaves (``frm``); a commit below the oldest retained
   record means the group resumes at that record (``effective_commit``);
2. ``before``/``after``: up to ``window`` records either side of it (read_committed);
3. a lower bound on the other cluster (``to``): ListOffsets by timestamp of the oldest of those records
   (MM2 keeps record timestamps; on a LogAppendTime topic the broker's clock, with :data:`SKEW_MS`
   allowance), and MM2's checkpoint as the lowest offset ``after[0]`` may be placed at;
4. windows of ``to`` read from the lower bound, growing until the alignment is decided.

A proven partition gets method ``exact``; any other falls back to MM2's checkpoint (method
``checkpoint``) or stays as it is (``none``), each with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka.admin import OffsetSpec

from ..access.admin import TP, AdminSession
from ..access.offsets import Checkpoint, start_and_stable_offsets
from ..errors import UsageError
from .locate import MORE, Alignment, Rec, align
from .windows import Window, read_windows

#: Records compared on each side of the commit point.
WINDOW = 16
#: Target records scanned per partition before a placement is given up (falls back to the checkpoint).
MAX_SCAN = 200_000
#: Source records read before a commit point, in windows (room for offset holes: markers, compacted records).
LOOKBACK = 2
#: ... and, only where a restart replayed the commit point, how far back its re-delivered identities are known.
REPLAY_LOOKBACK = 4
#: Target records read past the matched run to find a restart's replay of the commit point.
TAIL = 256
#: Clock allowance between the clusters when the target stamps LogAppendTime (ms).
SKEW_MS = 5 * 60 * 1000


@dataclass
class PartitionProof:
    """One partition's placement and its evidence (a row of the certificate)."""

    topic: str  #: name on the cluster the group leaves
    partition: int
    to_topic: str
    commit: int  #: the group's committed offset there
    effective_commit: int  #: the offset a consumer resumes at there (commit, or the oldest retained record)
    from_start: int
    from_end: int  #: last stable offset
    to_start: int | None = None
    to_end: int | None = None
    current: int | None = None  #: the group's committed offset on the other cluster now
    checkpoint: int | None = None  #: MM2's translated offset for this commit point (None: no checkpoint)
    lower_bound: int | None = None  #: where the target scan began
    scanned: int = 0  #: target records read
    method: str = "none"  #: exact | checkpoint | none
    reason: str = ""
    target_offset: int | None = None  #: what is (or would be) written
    action: str = "none"  #: write | unchanged | backwards-refused | backwards-forced | none
    before: list[dict[str, int]] = field(default_factory=list)  #: source records before the commit point
    after: list[dict[str, int]] = field(default_factory=list)  #: source records at/after it
    matched: list[dict[str, int]] = field(default_factory=list)  #: source offset, target offset, fp
    redelivered: list[dict[str, int]] = field(default_factory=list)  #: target offset, fp (identities from before the commit)
    duplicates: list[dict[str, int]] = field(default_factory=list)
    extras: list[dict[str, int]] = field(default_factory=list)
    before_dropped: int = 0

    @property
    def proven(self) -> bool:
        return self.method == "exact"

    @property
    def redelivery(self) -> int | None:
        """Records from before the commit point the group sees again (by identity; None when unknown)."""
        return len(self.redelivered) if self.proven else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["redelivery"] = self.redelivery
        return d


def _recs(rows: list[tuple[int, int, int]]) -> list[Rec]:
    return [Rec(o, fp) for o, fp, _ in rows]


def _fps(rows: list[tuple[int, int, int]]) -> list[dict[str, int]]:
    return [{"offset": o, "fp": fp} for o, fp, _ in rows]


def require_group_stopped(frm: AdminSession, to: AdminSession, group: str) -> None:
    """A group with members on either cluster would commit over the translation: refuse (exit 2)."""
    for session in (frm, to):
        members = session.group_members(group)
        if members:
            raise UsageError("--group", f"group {group!r} has {len(members)} active member(s) on the {session.role} "
                             f"cluster ({', '.join(members[:3])})", f"stop its consumers on the {session.role} first")


def translate_group(frm: AdminSession, to: AdminSession, group: str, to_name: Callable[[str], str],
                    topic_ok: Callable[[str], bool], checkpoints: dict[TP, Checkpoint], *, window: int = WINDOW,
                    max_scan: int = MAX_SCAN, force: bool = False, committed: dict[TP, int] | None = None) -> list[PartitionProof]:
    """Every partition of ``group``'s commits on ``frm`` placed on ``to`` (nothing is written here).

    ``checkpoints``: MM2's newest checkpoints of this flow, keyed by (topic on ``to``, partition).
    """
    if committed is None:
        committed = {tp: o for tp, o in frm.committed(group).items() if topic_ok(tp[0])}
    if not committed:
        return []
    return translate_commits(frm, to, committed, to_name, checkpoints, to.committed(group), window=window,
                             max_scan=max_scan, force=force)


def translate_commits(frm: AdminSession, to: AdminSession, committed: dict[TP, int], to_name: Callable[[str], str],
                      checkpoints: dict[TP, Checkpoint], current: dict[TP, int], *, window: int = WINDOW,
                      max_scan: int = MAX_SCAN, force: bool = False) -> list[PartitionProof]:
    """Commit points on ``frm`` (one per partition, of one group or of many sharing them) placed on ``to``:
    one metadata request, one ListOffsets round per question and one consumer per cluster per read round,
    whatever the number of partitions. ``current``: the commits on ``to`` the actions compare with."""
    tps = sorted(committed)
    if not tps:
        return []
    to_topics = to.topics(refresh=True)
    present = [(to_name(t), p) for t, p in tps if to_name(t) in to_topics and p < to_topics[to_name(t)]]
    (from_start, from_end), (to_start, to_end) = start_and_stable_offsets((frm, tps), (to, present))
    log_append = {n for n, c in to.topic_configs({t for t, _ in present}).items() if c.log_append_time}

    proofs: dict[TP, PartitionProof] = {}
    src_windows: dict[TP, Window] = {}
    for t, p in tps:
        c = committed[(t, p)]
        eff = min(max(c, from_start[(t, p)]), from_end[(t, p)])  # below the oldest retained record: resumes there
        tt = (to_name(t), p)
        cp = checkpoints.get(tt)
        pr = PartitionProof(t, p, tt[0], c, eff, from_start[(t, p)], from_end[(t, p)], to_start.get(tt), to_end.get(tt),
                            current.get(tt), cp.downstream_offset if cp and cp.upstream_offset == c else None)
        proofs[(t, p)] = pr
        if tt not in to_end:
            pr.reason = f"topic {tt[0]} partition {p} does not exist on the {to.role} cluster"
            continue
        src_windows[(t, p)] = Window(max(from_start[(t, p)], eff - LOOKBACK * window), from_end[(t, p)], window, eff)
    no_ts = {t for t, _ in src_windows if to_name(t) in log_append}
    read_windows(frm, src_windows, no_ts)

    before: dict[TP, list[Rec]] = {}
    after: dict[TP, list[Rec]] = {}
    known: dict[TP, set[int]] = {}  #: identities of every source record read before the commit point
    bounds: dict[TP, OffsetSpec] = {}
    for tp, w in src_windows.items():
        pr = proofs[tp]
        known[tp] = {fp for o, fp, _ in w.recs if o < pr.effective_commit}
        b = [r for r in w.recs if r[0] < pr.effective_commit][-window:]
        a = [r for r in w.recs if r[0] >= pr.effective_commit][:window]
        pr.before, pr.after = _fps(b), _fps(a)
        before[tp], after[tp] = _recs(b), _recs(a)
        if b or a:
            ts = min(r[2] for r in b + a)
            skew = SKEW_MS if pr.to_topic in log_append else 0
            bounds[(pr.to_topic, tp[1])] = OffsetSpec.for_timestamp(max(ts - skew, 0))
    by_time = to.list_offsets(bounds) if bounds else {}

    # target windows, growing until every partition is decided
    scan: dict[TP, list[Rec]] = {}
    nxt: dict[TP, int] = {}
    open_: dict[TP, int] = {}
    for tp in src_windows:
        pr = proofs[tp]
        tt = (pr.to_topic, tp[1])
        assert pr.to_start is not None and pr.to_end is not None
        if not before[tp] and not after[tp]:
            pr.method, pr.target_offset, pr.lower_bound = "exact", pr.to_end, pr.to_end
            pr.reason = ("the partition holds no record on the " + frm.role + " cluster: the group resumes at the "
                         + to.role + "'s end")
            continue
        res = by_time.get(tt)
        start = pr.to_end if res is None or res.offset < 0 else max(res.offset, pr.to_start)
        pr.lower_bound = start
        scan[tp], nxt[tp] = [], start
        open_[tp] = 2 * (len(before[tp]) + len(after[tp])) + 64
    tails: dict[TP, int] = {}  #: exact partitions whose scan stopped before the target's end: next offset
    while open_:
        wins = {(proofs[tp].to_topic, tp[1]): Window(nxt[tp], proofs[tp].to_end or 0, n, nxt[tp]) for tp, n in open_.items()}
        read_windows(to, wins, log_append)
        for tp in list(open_):
            pr = proofs[tp]
            w = wins[(pr.to_topic, tp[1])]
            scan[tp] += _recs(w.recs)
            if w.recs:
                nxt[tp] = w.recs[-1][0] + 1
            pr.scanned = len(scan[tp])
            final = pr.scanned >= max_scan
            got = align(before[tp], after[tp], scan[tp], pr.checkpoint, w.reached_end, final)
            if got == MORE:
                open_[tp] = min(open_[tp] * 4, max_scan)
                continue
            del open_[tp]
            if isinstance(got, Alignment):
                _exact(pr, got)
                if not w.reached_end and after[tp]:
                    tails[tp] = w.recs[-1][0] + 1
            else:
                pr.reason = _why_not(before[tp], after[tp], scan[tp], w.reached_end, final, to.role)

    if tails:
        wins = {(proofs[tp].to_topic, tp[1]): Window(o, proofs[tp].to_end or 0, TAIL, o) for tp, o in tails.items()}
        read_windows(to, wins, log_append)
        for tp in tails:
            scan[tp] += _recs(wins[(proofs[tp].to_topic, tp[1])].recs)
    replays = {tp: at for tp, pr in proofs.items()
               if pr.method == "exact" and (at := _replay_at(pr, before.get(tp, []), after.get(tp, []), scan.get(tp, [])))}
    # only where a restart replayed the commit point are older identities needed (to tell re-delivered
    # records from the first pass's): read them for those partitions alone
    older = {tp: Window(max(proofs[tp].from_start, src_windows[tp].start - (REPLAY_LOOKBACK - LOOKBACK) * window),
                        src_windows[tp].start) for tp in replays if src_windows[tp].start > proofs[tp].from_start}
    read_windows(frm, older, no_ts)
    for tp, w in older.items():
        known[tp] |= {fp for _, fp, _ in w.recs}
    for tp, (tail, q) in replays.items():
        _replay(proofs[tp], tail, q, known[tp], scan[tp])
    for pr in proofs.values():
        if pr.method != "exact":
            if pr.checkpoint is not None:
                pr.method, pr.target_offset = "checkpoint", pr.checkpoint
                pr.reason += "; MM2's checkpoint is used (re-delivery not proven)"
            else:
                pr.reason += "; no MM2 checkpoint for this commit point either: left as it is"
        pr.action = _action(pr, force)
    return [proofs[tp] for tp in tps]


def _exact(pr: PartitionProof, al: Alignment) -> None:
    pr.method, pr.target_offset = "exact", al.target_offset
    pr.matched = [{"source_offset": s, "target_offset": t, "fp": fp} for s, t, fp in al.matched]
    pr.redelivered = [{"target_offset": o, "fp": fp} for o, fp in al.redelivered]
    pr.duplicates = [{"target_offset": o, "fp": fp} for o, fp in al.duplicates]
    pr.extras = [{"target_offset": o, "fp": fp} for o, fp in al.extras]
    pr.before_dropped = al.before_dropped
    n_b = len(pr.before) - al.before_dropped
    parts = [f"{n_b} record(s) before and {al.after_matched} at/after the commit point matched in order"]
    if not pr.after:
        parts.append("nothing after the commit point yet: resumes after the last record before it")
    elif al.after_matched < len(pr.after):
        parts.append(f"{len(pr.after) - al.after_matched} later record(s) not replicated yet")
    if al.before_dropped:
        parts.append(f"{al.before_dropped} oldest record(s) before the commit point are not on the other cluster")
    if pr.checkpoint is not None:
        parts.append(f"at or above MM2's checkpoint {pr.checkpoint}")
    pr.reason = "; ".join(parts)


def _replay_at(pr: PartitionProof, before: list[Rec], after: list[Rec], scan: list[Rec]) -> tuple[list[Rec], int] | None:
    """A restart's replay past the matched run: the commit point's boundary (last record before it, first
    after it) again. Returns the scanned records past the run and the index of the boundary's second
    record in them, or None."""
    if not before or not after or not pr.matched:
        return None
    end = pr.matched[-1]["target_offset"]
    tail = [r for r in scan if r.offset > end]
    for q in range(1, len(tail)):
        if tail[q].fp == after[0].fp and tail[q - 1].fp == before[-1].fp:
            return tail, q
    return None


def _replay(pr: PartitionProof, tail: list[Rec], q: int, known: set[int], scan: list[Rec]) -> None:
    """Records the replay at ``tail[q]`` wrote before the boundary that are identities from before the
    commit point (``known``) are re-delivered; everything the first pass wrote from the placement up to
    the replay's start is written again by it (duplicates)."""
    k = q - 1
    while k >= 0 and tail[k].fp in known:
        k -= 1
    start = tail[k + 1].offset  # the replay's first record
    pr.redelivered += [{"target_offset": r.offset, "fp": r.fp} for r in tail[k + 1:q]]
    first_pass = [r for r in scan if pr.target_offset is not None and pr.target_offset <= r.offset < start]
    seen = {d["target_offset"] for d in pr.duplicates}
    pr.duplicates += [{"target_offset": r.offset, "fp": r.fp} for r in first_pass if r.offset not in seen]
    pr.reason += (f"; a restart replayed the commit point at {tail[q].offset}: {q - k - 1} record(s) from before "
                  f"it re-delivered, {len(first_pass)} written twice")


def _why_not(before: list[Rec], after: list[Rec], scan: list[Rec], end: bool, final: bool, role: str) -> str:
    have = {r.fp for r in scan}
    if end and before and before[-1].fp not in have:
        return f"not-replicated: the last record before the commit point is not on the {role} cluster yet"
    if end and not before and after and after[0].fp not in have:
        return f"not-replicated: the first record at the commit point is not on the {role} cluster yet"
    if final and not end:
        return f"not located within {len(scan):,} {role} records of the lower bound"
    return f"the {role} cluster's records around the commit point differ from the source's (content mismatch)"


def _action(pr: PartitionProof, force: bool) -> str:
    if pr.target_offset is None:
        return "none"
    if pr.current == pr.target_offset:
        return "unchanged"
    if pr.current is not None and pr.target_offset < pr.current:
        return "backwards-forced" if force else "backwards-refused"
    return "write"


def apply_proofs(to: AdminSession, group: str, proofs: list[PartitionProof]) -> int:
    """Commit the planned offsets on ``to`` in one request; returns how many partitions were written."""
    todo = {(p.to_topic, p.partition): p.target_offset for p in proofs
            if p.action in ("write", "backwards-forced") and p.target_offset is not None}
    if todo:
        to.alter_committed(group, todo)
    return len(todo)
