"""The offset planner: per partition, a pure function from what was read to where a group resumes on
the other cluster — :func:`assess` (one read -> the next read it needs, or a :class:`Decision`) and
:func:`translate_commits` (complete reads -> one :class:`PartitionPlan` each). No I/O here: the batching
reader (:mod:`.reader`) asks :func:`assess` what to read until every partition is decided.

A decision is a :class:`Placement` (an enum, never a sentence used as a code) with typed data; the
sentence a person reads (:attr:`PartitionPlan.reason`) is derived from it.

Invariants of every decision, for a commit point ``C`` on the cluster the group leaves (``frm``) and the
other cluster (``to``) — the way Kafka's ``OffsetSyncStore`` states its own:

- Invariant A (never ahead): a placed offset ``P`` is at or below the ``to`` copy of the first ``frm``
  record at or after ``C``, so every record after the commit point is delivered (no gap). An exact
  placement is the FIRST occurrence of the matched run at or above both lower bounds (the window's
  oldest timestamp, MM2's checkpoint for ``C``); a fallback is MM2's checkpoint, which MM2 itself keeps
  at or below the true downstream offset.
- Invariant B (never on an unproven record): :attr:`Placement.proven` decisions (EXACT, AT_END, EMPTY) are
  placed only where the records around ``C`` matched in order by fingerprint — every one of ``before``
  (its oldest may be dropped when ``to`` no longer holds them, never the one right before ``C``) and
  every one of ``after`` that ``to`` holds — and nowhere below MM2's checkpoint for ``C``.
- Invariant C (nothing placed past replication): when ``to`` reached its end without the record right
  before ``C`` (or, with none before it, the first at ``C``), the decision is NOT_REPLICATED with no
  offset: not a checkpoint, not ``to``'s end.
- Invariant D (re-delivery declared by identity): every record at or after ``P`` on ``to`` that is a copy
  of a record from before ``C`` is in :attr:`Proof.redelivered`, every second copy of a later record in
  :attr:`Proof.duplicates`, every record ``frm`` no longer holds in :attr:`Proof.extras` — counted by
  fingerprint, not by offset arithmetic; a restart's replay of ``C`` past the run is read for and declared.
- Invariant E (monotonic unless forced): an :class:`Action` never moves a group's committed offset on ``to``
  backwards unless ``force``; a refused move writes nothing (BACKWARDS_REFUSED).
- Invariant F (decided only on enough evidence): :func:`assess` asks for more records while the
  alignment is undecided; a decision on a partial window happens only at :attr:`Limits.max_scan` (then
  NOT_LOCATED, never a placement); :func:`translate_commits` refuses an incomplete read (ValueError).
- Invariant G (pure): the same read gives the same decision; nothing here reads a clock, a cluster or
  the environment.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

from .evidence import FindByTime, PartitionRead, Read, ReadOlder, ReadSource, ReadTarget
from .locate import MORE, Alignment, Rec, align

TP = tuple[str, int]


class Placement(Enum):
    """How a commit point was placed on the other cluster."""

    EXACT = "exact"  #: the records around the commit point matched in order: resumes at the copy of the first after it
    AT_END = "at-end"  #: matched, and nothing after the commit point on ``frm``: resumes after the copy of the last before it
    EMPTY = "empty"  #: ``frm`` holds no record around the commit point: resumes at ``to``'s end
    CHECKPOINT_FALLBACK = "checkpoint"  #: not proven (see :class:`Unproven`): MM2's checkpoint for the commit point
    NOT_REPLICATED = "not-replicated"  #: replication has not reached the commit point: nothing placed
    LEFT = "left"  #: not proven and no checkpoint: left as it is

    @property
    def proven(self) -> bool:
        return self in (Placement.EXACT, Placement.AT_END, Placement.EMPTY)

    @property
    def method(self) -> str:
        """The certificate's word for it: exact | checkpoint | none."""
        return "exact" if self.proven else ("checkpoint" if self is Placement.CHECKPOINT_FALLBACK else "none")


class Unproven(Enum):
    """Why a commit point could not be placed by content."""

    NO_PARTITION = "no-partition"  #: the topic or partition does not exist on ``to``
    LAST_BEFORE_MISSING = "last-before-missing"  #: ``to`` ends without the record right before the commit point
    FIRST_AT_MISSING = "first-at-missing"  #: ``to`` ends without the first record at it (nothing before it)
    NOT_LOCATED = "not-located"  #: the run was not found within :attr:`Limits.max_scan` records
    CONTENT_DIFFERS = "content-differs"  #: ``to``'s records around the commit point differ from ``frm``'s

    @property
    def not_replicated(self) -> bool:
        return self in (Unproven.LAST_BEFORE_MISSING, Unproven.FIRST_AT_MISSING)


class Action(Enum):
    """What writing the placement does to the group's committed offset on ``to``."""

    WRITE = "write"
    UNCHANGED = "unchanged"
    BACKWARDS_REFUSED = "backwards-refused"
    BACKWARDS_FORCED = "backwards-forced"
    NONE = "none"  #: nothing to write (no placement)

    @property
    def writes(self) -> bool:
        return self in (Action.WRITE, Action.BACKWARDS_FORCED)


class Matched(NamedTuple):
    source_offset: int
    target_offset: int
    fp: int


class Copy(NamedTuple):
    """A record on ``to`` the proof declares (re-delivered, duplicate or extra)."""

    target_offset: int
    fp: int


@dataclass(frozen=True)
class Replay:
    """A restart's replay of the commit point found past the matched run."""

    at: int  #: ``to`` offset of the replayed first record after the commit point
    redelivered: int  #: records from before the commit point the replay wrote again after ``P``
    written_twice: int  #: records the first pass wrote from ``P`` to the replay's start


@dataclass(frozen=True)
class Proof:
    """The record-level evidence of a proven placement."""

    matched: tuple[Matched, ...]
    redelivered: tuple[Copy, ...]  #: identities from before the commit point at or after ``P``
    duplicates: tuple[Copy, ...]  #: second copies of records after the commit point
    extras: tuple[Copy, ...]  #: records ``frm`` no longer holds (compacted, aborted after the copy)
    before_dropped: int  #: oldest ``before`` records not on ``to``
    after_matched: int  #: records of ``after`` matched (fewer: ``to`` ends there for now)
    replay: Replay | None = None


@dataclass(frozen=True)
class Decision:
    """One commit point's placement: what kind, where (``target_offset``), why not proven, and the proof.
    Consistent by construction: an offset exactly for proven and checkpoint placements, a reason
    (``unproven``) exactly for unproven ones."""

    placement: Placement
    target_offset: int | None
    unproven: Unproven | None = None
    proof: Proof | None = None

    def __post_init__(self) -> None:
        if (self.placement.proven or self.placement is Placement.CHECKPOINT_FALLBACK) != (self.target_offset is not None):
            raise ValueError(f"{self.placement.name} with target offset {self.target_offset}")
        if (self.unproven is None) != self.placement.proven:
            raise ValueError(f"{self.placement.name} with unproven={self.unproven}")


@dataclass(frozen=True)
class PartitionPlan:
    """One partition of one group: what was read, the decision, the group's commit on ``to`` now, the action."""

    read: PartitionRead
    decision: Decision
    current: int | None
    action: Action

    @property
    def topic(self) -> str:
        return self.read.topic

    @property
    def partition(self) -> int:
        return self.read.partition

    @property
    def to_topic(self) -> str:
        return self.read.to_topic

    @property
    def commit(self) -> int:
        return self.read.commit

    @property
    def effective_commit(self) -> int:
        return self.read.effective_commit

    @property
    def placement(self) -> Placement:
        return self.decision.placement

    @property
    def target_offset(self) -> int | None:
        return self.decision.target_offset

    @property
    def proven(self) -> bool:
        return self.decision.placement.proven

    @property
    def exact(self) -> bool:
        """Placed exactly (by content): the one-origin translation's proven placements are its exact ones."""
        return self.proven

    @property
    def method(self) -> str:
        return self.decision.placement.method

    @property
    def redelivery(self) -> int | None:
        """Records from before the commit point the group sees again (by identity; None when not proven)."""
        return len(self.decision.proof.redelivered) if self.decision.proof else (0 if self.proven else None)

    @property
    def redelivered(self) -> tuple[Copy, ...]:
        return self.decision.proof.redelivered if self.decision.proof else ()

    @property
    def duplicates(self) -> tuple[Copy, ...]:
        return self.decision.proof.duplicates if self.decision.proof else ()

    @property
    def matched(self) -> tuple[Matched, ...]:
        return self.decision.proof.matched if self.decision.proof else ()

    @property
    def reason(self) -> str:
        return reason(self.read, self.decision)

    def row(self) -> dict[str, Any]:
        """The command's row of this partition (console and JSON)."""
        return {"topic": self.to_topic, "partition": self.partition, "from_topic": self.topic, "commit": self.commit,
                "effective_commit": self.effective_commit, "current": self.current, "translated": self.target_offset,
                "checkpoint": self.read.checkpoint, "placement": self.placement.value, "method": self.method,
                "action": self.action.value, "redelivery": self.redelivery, "duplicates": len(self.duplicates),
                "matched": len(self.matched), "reason": self.reason}

    def to_dict(self) -> dict[str, Any]:
        """The certificate's row (its keys are the certificate format: ``cutover check`` reads them)."""
        r, d, pf = self.read, self.decision, self.decision.proof

        def copies(xs: Iterable[Copy]) -> list[dict[str, int]]:
            return [{"target_offset": o, "fp": fp} for o, fp in xs]

        return {
            "topic": r.topic, "partition": r.partition, "to_topic": r.to_topic, "commit": r.commit,
            "effective_commit": r.effective_commit, "from_start": r.source.start, "from_end": r.source.end,
            "to_start": r.target.start if r.target else None, "to_end": r.target.end if r.target else None,
            "current": self.current, "checkpoint": r.checkpoint,
            "lower_bound": r.target.end if d.placement is Placement.EMPTY and r.target else r.lower_bound,
            "scanned": len(r.target_recs), "method": self.method, "reason": self.reason,
            "target_offset": d.target_offset, "action": self.action.value,
            "before": [{"offset": o, "fp": fp} for o, fp in r.before],
            "after": [{"offset": o, "fp": fp} for o, fp in r.after],
            "matched": [m._asdict() for m in self.matched],
            "redelivered": copies(self.redelivered), "duplicates": copies(self.duplicates),
            "extras": copies(pf.extras if pf else ()), "before_dropped": pf.before_dropped if pf else 0,
            "redelivery": self.redelivery,
        }


# ---- the pure step ----------------------------------------------------------------------------------------
def assess(r: PartitionRead) -> Decision | Read:
    """The decision for this commit point, or the next read it needs (see the module's invariants)."""
    lim = r.limits
    if r.target is None:
        return _unproven(r, Unproven.NO_PARTITION)
    eff = r.effective_commit
    if r.window_start is None:
        return ReadSource(max(r.source.start, eff - lim.lookback * lim.window), r.source.end, lim.window, eff)
    before, after = r.before, r.after
    if not before and not after:
        return Decision(Placement.EMPTY, r.target.end)
    if r.time_offset is None:
        compared = {x.offset for x in before + after}
        oldest = min(x.ts for x in r.source_recs if x.offset in compared)
        return FindByTime(max(oldest - (lim.skew_ms if r.log_append_time else 0), 0))
    scan = list(r.target_recs)
    final = len(scan) >= lim.max_scan
    got = align(before, after, scan, r.checkpoint, r.target_end_reached, final)
    if got == MORE:
        first = 2 * (len(before) + len(after)) + 64
        return ReadTarget(r.next_target_offset, min(max(first, 3 * len(scan)), lim.max_scan - len(scan)))
    if not isinstance(got, Alignment):
        return _unproven(r, _why_not(before, after, scan, r.target_end_reached))
    run_end = got.matched[-1][1] if got.matched else -1
    past = len(scan) - bisect_right(scan, run_end, key=_offset)
    if after and not r.target_end_reached and past < lim.tail:
        return ReadTarget(r.next_target_offset, lim.tail - past)  # room for a restart's replay of the commit point
    replay = _replay_at(before, after, run_end, scan)
    if replay is not None and r.older_fps is None and r.window_start > r.source.start:
        start = max(r.source.start, r.window_start - (lim.replay_lookback - lim.lookback) * lim.window)
        return ReadOlder(start, r.window_start)
    return _proven(r, got, replay, scan)


def action_for(target_offset: int | None, current: int | None, force: bool) -> Action:
    """Invariant E: never backwards unless ``force``."""
    if target_offset is None:
        return Action.NONE
    if current == target_offset:
        return Action.UNCHANGED
    if current is not None and target_offset < current:
        return Action.BACKWARDS_FORCED if force else Action.BACKWARDS_REFUSED
    return Action.WRITE


def decide(r: PartitionRead) -> Decision:
    """The decision of a complete read; an incomplete one is refused (Invariant F)."""
    d = assess(r)
    if not isinstance(d, Decision):
        raise ValueError(f"{r.topic}[{r.partition}] commit {r.commit}: the read is incomplete (still needs {d})")
    return d


def plan_decided(decided: Iterable[tuple[PartitionRead, Decision]], current: Mapping[TP, int] | None = None, *,
                 force: bool = False) -> list[PartitionPlan]:
    """Reads with their decisions (one per commit point) -> one plan each, in the order given. ``current``:
    the group's commits on ``to``, keyed by (topic on ``to``, partition), which the actions compare with."""
    current = current or {}
    plans = []
    for r, d in decided:
        now = current.get((r.to_topic, r.partition))
        plans.append(PartitionPlan(r, d, now, action_for(d.target_offset, now, force)))
    return plans


def translate_commits(reads: Iterable[PartitionRead], current: Mapping[TP, int] | None = None, *,
                      force: bool = False) -> list[PartitionPlan]:
    """Complete reads -> one plan each (:func:`plan_decided` of :func:`decide`)."""
    return plan_decided(((r, decide(r)) for r in reads), current, force=force)


# ---- decisions ---------------------------------------------------------------------------------------------
def _unproven(r: PartitionRead, why: Unproven) -> Decision:
    if why.not_replicated:
        return Decision(Placement.NOT_REPLICATED, None, why)
    if r.checkpoint is not None:
        return Decision(Placement.CHECKPOINT_FALLBACK, r.checkpoint, why)
    return Decision(Placement.LEFT, None, why)


def _why_not(before: list[Rec], after: list[Rec], scan: list[Rec], end: bool) -> Unproven:
    have = {x.fp for x in scan}
    if end and before and before[-1].fp not in have:
        return Unproven.LAST_BEFORE_MISSING
    if end and not before and after and after[0].fp not in have:
        return Unproven.FIRST_AT_MISSING
    if not end:
        return Unproven.NOT_LOCATED  # align gives up before the target's end only at max_scan
    return Unproven.CONTENT_DIFFERS


def _offset(x: Rec) -> int:
    return x.offset


def _replay_at(before: list[Rec], after: list[Rec], run_end: int, scan: list[Rec]) -> tuple[list[Rec], int] | None:
    """A restart's replay past the matched run: the commit point's boundary (last record before it, first
    after it) again. Returns the records past the run and the index of the boundary's second record."""
    if not before or not after or run_end < 0:
        return None
    tail = scan[bisect_right(scan, run_end, key=_offset):]
    for q in range(1, len(tail)):
        if tail[q].fp == after[0].fp and tail[q - 1].fp == before[-1].fp:
            return tail, q
    return None


def _proven(r: PartitionRead, al: Alignment, replay: tuple[list[Rec], int] | None, scan: list[Rec]) -> Decision:
    redelivered = [Copy(*x) for x in al.redelivered]
    duplicates = [Copy(*x) for x in al.duplicates]
    found = None
    if replay is not None:
        # the replay's records before the boundary that are identities from before the commit point are
        # re-delivered; what the first pass wrote from the placement up to the replay's start comes twice
        tail, q = replay
        eff = r.effective_commit
        known = {x.fp for x in r.source_recs if x.offset < eff} | (r.older_fps or frozenset())
        k = q - 1
        while k >= 0 and tail[k].fp in known:
            k -= 1
        start = tail[k + 1].offset
        redelivered += [Copy(x.offset, x.fp) for x in tail[k + 1:q]]
        first_pass = [x for x in scan if al.target_offset <= x.offset < start]
        seen = {c.target_offset for c in duplicates}
        duplicates += [Copy(x.offset, x.fp) for x in first_pass if x.offset not in seen]
        found = Replay(tail[q].offset, q - k - 1, len(first_pass))
    proof = Proof(tuple(Matched(*m) for m in al.matched), tuple(redelivered), tuple(duplicates),
                  tuple(Copy(*x) for x in al.extras), al.before_dropped, al.after_matched, found)
    return Decision(Placement.EXACT if r.after else Placement.AT_END, al.target_offset, None, proof)


# ---- sentences for people (derived from the decision, never compared) -------------------------------------------
_UNPROVEN = {
    Unproven.NO_PARTITION: "the topic or partition does not exist on the other cluster",
    Unproven.LAST_BEFORE_MISSING: "replication has not reached the commit point: the last record before it is not on the other cluster yet",
    Unproven.FIRST_AT_MISSING: "replication has not reached the commit point: the first record at it is not on the other cluster yet",
    Unproven.NOT_LOCATED: "not located within {scanned:,} records of the other cluster from the lower bound",
    Unproven.CONTENT_DIFFERS: "the other cluster's records around the commit point differ from the source's (content mismatch)",
}


def reason(r: PartitionRead, d: Decision) -> str:
    """Why this placement, in one line for the table and the certificate."""
    if d.unproven is not None:
        text = _UNPROVEN[d.unproven].format(scanned=len(r.target_recs))
        if d.placement is Placement.CHECKPOINT_FALLBACK:
            return text + "; MM2's checkpoint is used (re-delivery not proven)"
        if d.placement is Placement.LEFT:
            return text + "; no MM2 checkpoint for this commit point either: left as it is"
        return text
    if d.proof is None:  # EMPTY: nothing to match
        return "the partition holds no record around the commit point: the group resumes at the other cluster's end"
    pf, n_after = d.proof, len(r.after)
    parts = [f"{len(r.before) - pf.before_dropped} record(s) before and {pf.after_matched} at/after the commit point matched in order"]
    if d.placement is Placement.AT_END:
        parts.append("nothing after the commit point yet: resumes after the last record before it")
    elif pf.after_matched < n_after:
        parts.append(f"{n_after - pf.after_matched} later record(s) not replicated yet")
    if pf.before_dropped:
        parts.append(f"{pf.before_dropped} oldest record(s) before the commit point are not on the other cluster")
    if r.checkpoint is not None:
        parts.append(f"at or above MM2's checkpoint {r.checkpoint}")
    if pf.replay is not None:
        parts.append(f"a restart replayed the commit point at {pf.replay.at}: {pf.replay.redelivered} record(s) from "
                     f"before it re-delivered, {pf.replay.written_twice} written twice")
    return "; ".join(parts)
