"""Where the first record after a commit point sits on the other cluster: sequence alignment by content.

Inputs, per partition, all in offset order and as :class:`Rec` (offset + the validator's fingerprint):

- ``before``: the last source records before the commit point (read_committed: no markers, no aborted
  records; a compacted or retention-trimmed source gives fewer or none);
- ``after``: the first source records at or after the commit point;
- ``target``: the target's records from a *lower bound* of where any of them can sit (see
  :mod:`.plan`), read_committed.

The alignment walks ``before + after`` over the target from each candidate position where the target
record equals the first wanted one, in target order, and accepts a target record as

- the next wanted source record (a match);
- a *duplicate*: a record whose identity was already matched or is one of ``before`` (an at-least-once
  restart replays a run of records it had written);
- an *extra*: a record the source no longer holds, only where the source has an offset hole right
  there (a compacted or aborted record replicated before it vanished), at most as many as the hole is wide.

Anything else ends the candidate. The first candidate that matches every wanted record (or every one
the target holds so far, with all of ``before`` matched) wins. Its target offset of ``after[0]`` is the
answer: the FIRST occurrence of the run starting at the commit point, at or above MM2's checkpoint, so
every source record after the commit point is at or after it on the target (no gap); what sits between
it and the end of the matched run and is not a new record is declared as re-delivered (by identity).
When ``before``'s oldest records are not on the target (older retention there), they are dropped one at
a time, never the record right before the commit point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Rec(NamedTuple):
    """One record of a window: its offset and identity (a tuple: built for every record read)."""

    offset: int
    fp: int


@dataclass
class Alignment:
    """A proven placement. ``target_offset`` is where the group resumes on the target."""

    target_offset: int
    matched: list[tuple[int, int, int]] = field(default_factory=list)  #: (source offset, target offset, fp)
    redelivered: list[tuple[int, int]] = field(default_factory=list)  #: (target offset, fp): before-commit identities at/after target_offset
    duplicates: list[tuple[int, int]] = field(default_factory=list)  #: (target offset, fp): 2nd copies of after-commit records
    extras: list[tuple[int, int]] = field(default_factory=list)  #: (target offset, fp): records the source no longer holds
    before_dropped: int = 0  #: oldest ``before`` records not found on the target
    after_matched: int = 0  #: records of ``after`` matched (fewer than wanted: the target ends there for now)


#: :func:`_walk`'s answer when the window ran out before the candidate was decided (read more target).
MORE = "more"


def _walk(wanted: list[Rec], n_before: int, target: list[Rec], j: int, before_fps: set[int],
          min_after: int | None, end_reached: bool) -> Alignment | str | None:
    """Greedy alignment of ``wanted`` (``n_before`` records before the commit point first) from target index ``j``:
    an :class:`Alignment`, None (this candidate fails) or :data:`MORE` (undecided within the window)."""
    i, pos = 0, j
    seen: set[int] = set()
    gap_left = 0
    al = Alignment(-1)
    after_start: int | None = None
    n = len(wanted)
    run = target[j:j + n]
    if len(run) == n and [r.fp for r in run] == [w.fp for w in wanted]:
        # the common case, a plain copy: every step of the walk below would take its match branch, so its
        # outcome is built at once (same matches, same checkpoint rule, same position after the run)
        if n_before < n:
            if min_after is not None and run[n_before].offset < min_after:
                return None  # below MM2's checkpoint (as in the walk)
            after_start = run[n_before].offset
        al.matched = [(w.offset, r.offset, r.fp) for w, r in zip(wanted, run, strict=True)]
        i, pos = n, j + n
    while i < len(wanted) and pos < len(target):
        r, w = target[pos], wanted[i]
        if r.fp == w.fp:
            if i == n_before:
                if min_after is not None and r.offset < min_after:
                    return None  # below MM2's checkpoint: a copy earlier than the placement MM2 already proved
                after_start = r.offset
            al.matched.append((w.offset, r.offset, r.fp))
            seen.add(r.fp)
            i += 1
            gap_left = wanted[i].offset - w.offset - 1 if i < len(wanted) else 0
        elif r.fp in seen or r.fp in before_fps:
            target_list = al.duplicates if (after_start is not None and r.fp not in before_fps) else al.redelivered
            target_list.append((r.offset, r.fp))
        elif gap_left > 0 and i > 0:
            gap_left -= 1
            al.extras.append((r.offset, r.fp))
        else:
            return None
        pos += 1
    if i < len(wanted):
        # the window ends before the run does: read more, unless the target holds nothing more for now
        # (then a placement only when all of ``before`` matched: replication reached the commit point)
        if not end_reached:
            return MORE
        if i < n_before:
            return None
    al.after_matched = i - n_before
    if n_before == len(wanted):
        # nothing after the commit point on the source: what else the target holds from here on is
        # re-delivery (a known identity) or records the source does not have
        for r in target[pos:]:
            (al.redelivered if r.fp in before_fps else al.extras).append((r.offset, r.fp))
    if after_start is None:
        # nothing of ``after`` on the target yet (or nothing after the commit point): resume right after
        # the last record before it
        last = al.matched[-1][1] if al.matched else -1
        al.target_offset = last + 1
    else:
        al.target_offset = after_start
    # re-delivered/duplicates before the placement are not delivered: keep only those at/after it
    al.redelivered = [x for x in al.redelivered if x[0] >= al.target_offset]
    al.duplicates = [x for x in al.duplicates if x[0] >= al.target_offset]
    al.extras = [x for x in al.extras if x[0] >= al.target_offset]
    return al


def align(before: list[Rec], after: list[Rec], target: list[Rec], min_after: int | None = None,
          end_reached: bool = False, final: bool = False) -> Alignment | str | None:
    """The first placement of ``before + after`` on ``target``: an :class:`Alignment`, :data:`MORE` (the
    first candidate needs more of the target than this window) or None (no placement).

    ``min_after``: MM2's checkpoint for this commit point, a lower bound of where ``after[0]`` may be
    placed. ``end_reached``: ``target`` runs to the target's current end. ``final``: no more of the target
    will be read (undecided candidates fail). Oldest ``before`` records are dropped only once the
    window is decided without them.
    """
    decided = end_reached or final
    before_fps = {r.fp for r in before}
    for drop in range(len(before) if before else 1):
        wanted = before[drop:] + after
        if not wanted:
            return None
        first = wanted[0].fp
        for j, r in enumerate(target):
            if r.fp != first:
                continue
            al = _walk(wanted, len(before) - drop, target, j, before_fps, min_after, end_reached)
            if isinstance(al, Alignment):
                al.before_dropped = drop
                return al
            if al == MORE and not final:
                return MORE  # an earlier candidate undecided: never settle for a later occurrence
        if not decided:
            return MORE  # the wanted run may start further on: read more before dropping anything
    return None
