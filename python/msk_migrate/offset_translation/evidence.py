"""What was read for one commit point, as data: the planner's only input (:mod:`.planner`) and what the
reader fills (:mod:`.reader`).

A :class:`PartitionRead` holds, for one partition and one commit point on the cluster a group leaves
(``frm``): both clusters' log bounds, MM2's checkpoint for that commit point, whether the other cluster
(``to``) stamps its own time, and the records read so far — the source window around the commit point,
the target's offset for the oldest timestamp in it, the target records read from there on, and (only
where a restart replayed the commit point) identities from further back on the source. Each read
starts empty (``None`` or ``()``); the planner says what to read next as one of the :data:`Read`
requests, and the reader answers it in batches over every partition.

Invariants: a read is immutable (the reader makes a new one per answer, :func:`dataclasses.replace`);
records are in offset order, as a read_committed consumer delivers them (no markers, no aborted
records); fingerprints of a topic the other cluster stamps with LogAppendTime were taken with timestamp
0; :meth:`PartitionRead.to_dict` / :meth:`PartitionRead.from_dict` round-trip exactly (the unit tests'
recorded windows are this JSON).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

from .locate import Rec


class TimedRec(NamedTuple):
    """A source record of the window: offset, fingerprint, and its timestamp (ms) for the lower bound."""

    offset: int
    fp: int
    ts: int


@dataclass(frozen=True)
class Span:
    """A partition's readable range: its oldest retained offset and its last stable offset."""

    start: int
    end: int


@dataclass(frozen=True)
class Limits:
    """How much the reader may read per partition (the planner asks within these)."""

    window: int = 16  #: records compared on each side of the commit point
    max_scan: int = 200_000  #: target records read before a placement is given up
    lookback: int = 2  #: source windows read before the commit point (room for markers and compacted holes)
    replay_lookback: int = 4  #: ... and how far back, only where a restart replayed the commit point
    tail: int = 256  #: target records read past the matched run, to find a restart's replay of it
    skew_ms: int = 5 * 60 * 1000  #: clock allowance between the clusters when ``to`` stamps LogAppendTime


LIMITS = Limits()

#: The fields ``before`` and ``after`` are derived from (see :meth:`PartitionRead.answered`).
_WINDOW_FIELDS = frozenset({"source", "commit", "limits", "window_start", "source_recs"})


# ---- what the planner asks the reader for ---------------------------------------------------------------
@dataclass(frozen=True)
class ReadSource:
    """Source records in ``[start, end)``, stopping once ``want`` records at or above ``from_offset`` arrived."""

    start: int
    end: int
    want: int
    from_offset: int


@dataclass(frozen=True)
class FindByTime:
    """The target's first offset whose timestamp is at or after ``timestamp`` (ListOffsets)."""

    timestamp: int


@dataclass(frozen=True)
class ReadTarget:
    """Up to ``want`` more target records from ``start`` (to the target's last stable offset)."""

    start: int
    want: int


@dataclass(frozen=True)
class ReadOlder:
    """The identities of the source records in ``[start, end)`` (before the first window)."""

    start: int
    end: int


Read = ReadSource | FindByTime | ReadTarget | ReadOlder


@dataclass(frozen=True)
class PartitionRead:
    """Everything read for one commit point (see the module docstring)."""

    topic: str  #: name on ``frm``
    partition: int
    to_topic: str  #: name on ``to``
    commit: int  #: the group's committed offset on ``frm``
    source: Span
    target: Span | None = None  #: None: the partition does not exist on ``to``
    checkpoint: int | None = None  #: MM2's downstream offset for exactly this commit point
    log_append_time: bool = False  #: ``to`` stamps its own timestamps on this topic
    limits: Limits = LIMITS
    window_start: int | None = None  #: where the source window was read from (None: not read yet)
    source_recs: tuple[TimedRec, ...] = ()
    time_offset: int | None = None  #: the answer to :class:`FindByTime` (-1: no such offset; None: not asked)
    target_recs: tuple[Rec, ...] = ()
    target_end_reached: bool = False  #: the target records run to ``target.end``
    older_fps: frozenset[int] | None = None  #: identities before ``window_start`` (None: not read)

    @property
    def effective_commit(self) -> int:
        """Where a consumer resumes on ``frm``: the commit, or the oldest retained record when it is below
        it, or the last stable offset when it is above."""
        return min(max(self.commit, self.source.start), self.source.end)

    # cached: the planner asks for them several times per read (a frozen read never changes them)
    @cached_property
    def before(self) -> list[Rec]:
        """Up to ``window`` source records right before the commit point."""
        eff = self.effective_commit
        return [Rec(r.offset, r.fp) for r in self.source_recs if r.offset < eff][-self.limits.window:]

    @cached_property
    def after(self) -> list[Rec]:
        """Up to ``window`` source records at or after the commit point."""
        eff = self.effective_commit
        return [Rec(r.offset, r.fp) for r in self.source_recs if r.offset >= eff][:self.limits.window]

    def answered(self, **changes: Any) -> PartitionRead:
        """A new read with ``changes`` (the reader's answer to one request). ``before`` and ``after`` depend
        only on the source window, the commit and the limits: when those are unchanged they are carried
        over, so the planner's later rounds do not build them again."""
        new = replace(self, **changes)
        if _WINDOW_FIELDS.isdisjoint(changes):
            for name in ("before", "after"):
                if name in self.__dict__:
                    new.__dict__[name] = self.__dict__[name]  # what cached_property itself writes
        return new

    @property
    def lower_bound(self) -> int | None:
        """Where the target is read from: the offset of the window's oldest timestamp (the target's end
        when it has none that late), never below the target's oldest record."""
        if self.time_offset is None or self.target is None:
            return None
        return self.target.end if self.time_offset < 0 else max(self.time_offset, self.target.start)

    @property
    def next_target_offset(self) -> int:
        """Where the next target read starts: after the last record read, or at the lower bound."""
        if self.target_recs:
            return self.target_recs[-1].offset + 1
        lb = self.lower_bound
        return lb if lb is not None else 0

    def to_dict(self) -> dict[str, Any]:
        """JSON data (records as lists; the recorded windows of the unit tests)."""
        return {
            "topic": self.topic, "partition": self.partition, "to_topic": self.to_topic, "commit": self.commit,
            "source": [self.source.start, self.source.end],
            "target": None if self.target is None else [self.target.start, self.target.end],
            "checkpoint": self.checkpoint, "log_append_time": self.log_append_time,
            "limits": self.limits.__dict__, "window_start": self.window_start,
            "source_recs": [list(r) for r in self.source_recs], "time_offset": self.time_offset,
            "target_recs": [list(r) for r in self.target_recs], "target_end_reached": self.target_end_reached,
            "older_fps": None if self.older_fps is None else sorted(self.older_fps),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PartitionRead:
        return cls(
            d["topic"], d["partition"], d["to_topic"], d["commit"], Span(*d["source"]),
            None if d["target"] is None else Span(*d["target"]), d["checkpoint"], d["log_append_time"],
            Limits(**d["limits"]), d["window_start"], tuple(TimedRec(*r) for r in d["source_recs"]), d["time_offset"],
            tuple(Rec(*r) for r in d["target_recs"]), d["target_end_reached"],
            None if d["older_fps"] is None else frozenset(d["older_fps"]))
