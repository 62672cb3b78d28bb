"""The two-origin translation (:mod:`.two_origin`) computed from windows of both partitions instead of whole logs.

Pure: the partitions are read through :class:`Side` (records of an offset range, Kafka's ListOffsets for a
timestamp), which :mod:`.two_origin_read` implements on the clusters and tests implement on lists, as MM2's
MirrorCheckpointTask takes its stores. :func:`.two_origin.translate_position` on the whole logs is the oracle:
where this answers, it answers the same offset, exactness, re-delivered records per origin and duplicates past
the offset; where it cannot prove that, its windows grow backward, and at both partitions' starts it *is* the
oracle.

**Windows.** Side F holds the group's position ``p`` (its natives are origin f, its copies origin t); side T is
the other. A window is ``[s, end)`` with ``end`` the last stable offset read once at the beginning. ``τ`` is the
smallest timestamp of F's records in ``[max(start, p - span), end)``; then ``sF = ListOffsets(F, τ)`` and
``sT = ListOffsets(T, τ)``. ListOffsets returns the earliest offset whose timestamp is >= τ, so:

(a) every record before a window has a timestamp < τ; (b) every record with a timestamp >= τ is in its window.

MM2 keeps timestamps (CreateTime) and a record's identity (fingerprint) includes it, so (b) holds for a record's
copies and its native alike. Topics stamped with LogAppendTime have no such bound: they are read whole.

**Alignment, per origin o** (natives on side X, copies on side Y). The *anchor* is o's first native in X's window
with a timestamp >= τ; by (a) every native before it (*pre-anchor*) has a timestamp < τ. Its first copy ``c*`` is
the first copy in Y's window with its identity: by (b) it is in the window, and no pre-anchor native shares the
identity (timestamps differ), so no earlier copy can be one of it. Copies are first copies in native order
(:func:`.two_origin.place_copies`), so every pre-anchor native's first copy precedes ``c*``, and at ``c*`` the
oracle's placement is exactly "next native = the anchor, no re-run": :func:`.two_origin.place_copies` run from
``c*`` on the natives from the anchor makes the oracle's decisions, shifted by the pre-anchor count, except where
the oracle could re-run from a pre-anchor native: only a copy with a timestamp < τ can be identical to one, and
such a copy taken as the next native is refused (``unsure``) rather than guessed. The copies in Y's window before
``c*`` are copies of pre-anchor natives, whose order there is unknown; the answer must not depend on them:

- on F, o = t: they lie before ``p`` (then the group consumed exactly the pre-anchor natives of t and those the
  aligned copies before ``p`` name);
- on T, o = f: they lie before the answer (then everything before the anchor is covered there);
- on F, o = f: the pre-anchor natives in F's window lie before ``p`` (all consumed).

(The first and the last hold by the choice of τ, every record of F from ``p - span`` on having a timestamp >= τ;
they are checked all the same, so :func:`translate_in_windows` holds for any windows that satisfy (a) and (b).)

Every other condition violated (no anchor: an origin with no recent record in a window; an anchor not copied yet;
a copy not placed) grows the window (the span doubles), never guesses. Counts: ``consumed``/``covered`` per origin
count that origin's records from the native side's window start (``window.source_start`` for F's natives,
``window.target_start`` for T's); ``duplicates`` counts the restart duplicates among the aligned copies
(from ``window.duplicates_from``); ``duplicates_ahead`` and the re-delivered records are the oracle's.

**Bound.** A window longer than ``max_records`` offsets on either side is refused (:class:`WindowTooLarge`): the
bound is on what one translation reads, not on the partition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from .two_origin import OriginRec, Placed, Redelivery, TwoOriginTranslation, _by_origin, place_copies, reason, translate_position

#: Offsets before the position the first window spans (doubled while the alignment needs more).
WINDOW = 4096
#: Offsets a window may span on one side (what one translation reads of one partition, at most).
MAX_RECORDS = 1_000_000


class Side(Protocol):
    """One side's partition as the windowed translation reads it (offsets and bounds as a read_committed consumer
    sees them: ``end`` is the last stable offset)."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def timestamps(self) -> bool:
        """True when records keep their producer's timestamp (CreateTime): ListOffsets bounds the window."""
        ...

    def read(self, lo: int, hi: int) -> Sequence[OriginRec]:
        """The records in ``[lo, hi)``, in offset order."""
        ...

    def offset_for_time(self, ts: int) -> int:
        """The earliest offset whose record has a timestamp >= ``ts`` (``end`` when none): Kafka's ListOffsets."""
        ...


class WindowTooLarge(ValueError):
    """The window one translation would read is over the bound on one side."""

    def __init__(self, side: str, offsets: int, bound: int) -> None:
        super().__init__(f"the {side} side's window spans {offsets:,} offsets, more than the {bound:,} a two-origin "
                         "translation reads")
        self.side, self.offsets, self.bound = side, offsets, bound


@dataclass(frozen=True)
class Windows:
    """Both windows of one attempt: the records from each start to the end, and the bound ``tau`` (None: both
    windows start at their partition's start, where the oracle itself answers)."""

    frm: Sequence[OriginRec]
    frm_start: int
    to: Sequence[OriginRec]
    to_start: int
    to_end: int
    tau: int | None


@dataclass(frozen=True)
class _Aligned:
    """One origin aligned across the windows: ``pre`` natives of the native-side window before the anchor, the
    natives from the anchor, the copies from the anchor's first copy placed on them, and the copies before it."""

    pre: int
    natives: Sequence[OriginRec]
    copies: Sequence[OriginRec]
    placed: Placed
    before: Sequence[OriginRec]

    def next_after(self, offset: int) -> int:
        """The first native (counted from the anchor) not copied before ``offset`` on the copy side."""
        return max((k + 1 for c, k in zip(self.copies, self.placed.ordinal, strict=True) if c.offset < offset), default=0)


def _align(natives: Sequence[OriginRec], copies: Sequence[OriginRec], tau: int, what: str) -> _Aligned | str:
    """Align one origin (see the module doc) or say why the windows must grow."""
    a = next((i for i, r in enumerate(natives) if r.ts >= tau), None)
    if a is None:
        return f"origin {what}: no native of the window with a timestamp >= {tau}"
    c = next((i for i, r in enumerate(copies) if r.fp == natives[a].fp), None)
    if c is None:
        return f"origin {what}: its first native of the window (offset {natives[a].offset}) has no copy in the window"
    placed = place_copies(copies[c:], natives[a:], unsure=lambda r: r.ts < tau)
    if placed.problem:
        return f"origin {what}: {placed.problem}"
    return _Aligned(a, natives[a:], copies[c:], placed, copies[:c])


def translate_in_windows(w: Windows, position: int, *, frm_alias: str, to_alias: str) -> TwoOriginTranslation | str:
    """The oracle's answer for ``position`` from the windows ``w``, or why they must grow (a string)."""
    window: dict[str, object] = {"source_start": w.frm_start, "target_start": w.to_start}
    if w.tau is None:
        whole = translate_position(w.frm, position, w.to, w.to_end, frm_alias=frm_alias, to_alias=to_alias)
        return replace(whole, window={**window, "duplicates_from": {"source": w.frm_start, "target": w.to_start}})
    here, there = _by_origin(w.frm), _by_origin(w.to)
    f = _align(here.get(frm_alias, []), there.get(frm_alias, []), w.tau, frm_alias)
    t = _align(there.get(to_alias, []), here.get(to_alias, []), w.tau, to_alias)
    if isinstance(f, str) or isinstance(t, str):
        return f if isinstance(f, str) else str(t)
    consumed_f = sum(1 for r in here[frm_alias] if r.offset < position)
    if consumed_f < f.pre:
        return f"origin {frm_alias}: a native before the anchor lies at or after the position"
    if any(c.offset >= position for c in t.before):
        return f"origin {to_alias}: a copy before the anchor's copy lies at or after the position"
    consumed_t = t.pre + t.next_after(position)
    want = {frm_alias: consumed_f - f.pre, to_alias: consumed_t - t.pre}  # counted from the anchors
    x_f = next((c.offset for c, k in zip(f.copies, f.placed.ordinal, strict=True) if k >= want[frm_alias]), None)
    x_t = t.natives[want[to_alias]].offset if want[to_alias] < len(t.natives) else None
    offset = min((x for x in (x_f, x_t) if x is not None), default=w.to_end)
    if any(c.offset >= offset for c in f.before):
        return f"origin {frm_alias}: a copy before the anchor's copy lies at or after the answer {offset}"
    have = {frm_alias: f.next_after(offset), to_alias: sum(1 for r in t.natives if r.offset < offset)}
    # the re-delivered records per origin: present on T at or after the offset, first copies of consumed natives
    present = {frm_alias: tuple(c for c, k, first in zip(f.copies, f.placed.ordinal, f.placed.first, strict=True)
                                if first and c.offset >= offset and have[frm_alias] <= k < want[frm_alias]),
               to_alias: tuple(r for i, r in enumerate(there[to_alias]) if r.offset >= offset and i < consumed_t)}
    consumed = {frm_alias: consumed_f, to_alias: consumed_t}
    covered = {frm_alias: f.pre + have[frm_alias], to_alias: t.pre + have[to_alias]}
    redelivered = tuple(Redelivery(o, present[o], consumed[o] - covered[o] - len(present[o]))
                        for o in sorted(consumed) if consumed[o] > covered[o])
    ahead = sum(1 for c, k, first in zip(f.copies, f.placed.ordinal, f.placed.first, strict=True)
                if c.offset >= offset and not first and k < want[frm_alias])
    duplicates = {s: n for s, n in (("source", t.placed.duplicates), ("target", f.placed.duplicates)) if n}
    window["duplicates_from"] = {"source": t.copies[0].offset, "target": f.copies[0].offset}
    return TwoOriginTranslation(position, offset, {o: n for o, n in consumed.items() if n}, covered, redelivered,
                                reason=reason(offset, redelivered, duplicates, ahead), duplicates=duplicates,
                                duplicates_ahead=ahead, window=window)


@dataclass
class _Suffix:
    """What has been read of one side: its records from ``lo`` to its end (reads extend it backward only)."""

    side: Side
    lo: int
    recs: list[OriginRec] = field(default_factory=list)

    def extend(self, lo: int) -> None:
        if lo < self.lo:
            self.recs[:0] = self.side.read(lo, self.lo)
            self.lo = lo

    def since(self, lo: int) -> list[OriginRec]:
        return [r for r in self.recs if r.offset >= lo]


def translate_windowed(frm: Side, position: int, to: Side, *, frm_alias: str, to_alias: str, window: int = WINDOW,
                       max_records: int = MAX_RECORDS) -> tuple[TwoOriginTranslation, dict[str, int]]:
    """Translate ``position`` on ``frm`` to ``to`` (as :func:`.two_origin.translate_position` on the whole logs),
    reading windows that grow backward from ``window`` offsets until the answer is proven (see the module doc).
    Returns the translation and the records read per side (``source``: ``frm``, ``target``: ``to``). Raises
    :class:`WindowTooLarge` before reading a window over ``max_records`` offsets on either side."""
    read = {"source": _Suffix(frm, frm.end), "target": _Suffix(to, to.end)}
    span = max(1, window)
    while True:
        lo = max(frm.start, min(position, frm.end) - span)
        tau = None
        if lo > frm.start and frm.timestamps and to.timestamps:
            _within(frm.end - lo, "source", max_records)
            read["source"].extend(lo)
            tau = min((r.ts for r in read["source"].since(lo)), default=None)
        if tau is None and lo > frm.start and frm.timestamps and to.timestamps:
            span *= 2  # no record to take a timestamp from yet
            continue
        starts = ((frm.start, to.start) if tau is None else
                  (min(lo, frm.offset_for_time(tau)), min(to.end, to.offset_for_time(tau))))
        _within(frm.end - starts[0], "source", max_records)
        _within(to.end - starts[1], "target", max_records)
        read["source"].extend(starts[0])
        read["target"].extend(starts[1])
        w = Windows(read["source"].since(starts[0]), starts[0], read["target"].since(starts[1]), starts[1], to.end, tau)
        answer = translate_in_windows(w, position, frm_alias=frm_alias, to_alias=to_alias)
        if isinstance(answer, TwoOriginTranslation):
            return answer, {s: len(r.recs) for s, r in read.items()}
        span *= 2


def _within(offsets: int, side: str, bound: int) -> None:
    if offsets > bound:
        raise WindowTooLarge(side, offsets, bound)
