"""Exact offset translation for a partition fed from both sides (active/active with identical topic names).

In active/active each side's partition holds its *natives* (written there by producers) and the *copies* of the
other side's natives (written by the opposite flow, each with one trailing copy mark,
:mod:`msk_migrate.validation.copy_marks`). MM2 keeps the order of one origin's records within a partition, but
the interleaving of the two origins differs from side to side. So a consumer group's position is not one offset
stream: at position ``p`` on side B it has consumed the set

    {B-natives before p} ∪ {A-copies before p} = (prefix b1 of B's natives, prefix a1 of A's natives).

On side A an offset ``o`` covers (prefix a(o) of A's natives, prefix b(o) of the B-copies there); both are
monotone in ``o``. Definitions, per partition:

- **exact**: an ``o`` with a(o) = a1 and b(o) = b1 — the group re-reads nothing and skips nothing;
- otherwise the answer is the **largest ``o`` with a(o) <= a1 and b(o) <= b1**: no record the group has not
  consumed lies before ``o`` (nothing is skipped), and the records it will read again are exactly the A-natives
  a(o)..a1-1 and the B-copies b(o)..b1-1 present on A, plus the B-natives b(o)..b1-1 not yet copied to A
  (``pending``: delivered again once copied). Every one is listed by offset and fingerprint.

Both cases are the same computation: ``o`` = the offset on A of the first record, of either origin, that the
group has not consumed (the log end when there is none). It is exact iff every origin's consumed prefix lies
before it.

Records are identified as the validator and the one-origin translation identify them: the fingerprint of
:func:`msk_migrate.kafka.fingerprint.fingerprint`, of a copy *with its mark removed* (so a copy and its native
have the same identity). The proof obligation checked here: per origin, the consumed prefix on B and the records
of that origin on A agree record by record (same fingerprints in the same order) as far as A holds them; when
they do not (a copy lost, reordered, duplicated or changed), the translation is refused (``proven`` False) with
the first disagreement named, never guessed.

**MM2 restarts.** Under at-least-once a restarted MirrorSourceTask resumes from its last committed source offset,
so a copy log may hold a *re-run*: records it already copied, again, in order, before the copying goes on. Copies
are placed by identity and position against their natives (:func:`place_copies`): each copy is the next native not
yet copied, or the next record of the re-run it continues, or starts a re-run at an earlier native of the same
identity whose following records the next copies repeat. A copy that is none of these (lost, reordered or changed)
refuses the translation as before. Counts are over distinct records (a duplicate is consumed or covered with its
first copy), so a restart never makes a translation inexact; the duplicates are counted (``duplicates``), and those
the group will read past the offset (MM2 wrote them again; every consumer of that side reads them) are named apart
(``duplicates_ahead``), never as the translation's re-delivery.

Pure: no I/O. :mod:`.two_origin_window` translates from windows of both partitions (this definition is its
oracle); :mod:`.two_origin_read` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple


class OriginRec(NamedTuple):
    """One record of a two-origin partition: its offset on this side, the alias of the cluster its producer wrote
    it to (this side's alias for a native), and its identity (fingerprint, a copy's mark removed)."""

    offset: int
    origin: str
    fp: int
    ts: int = 0  #: its timestamp (ms; part of its identity): bounds the windows of :mod:`.two_origin_window`


@dataclass(frozen=True)
class Redelivery:
    """What the group reads again of one origin after the translation (all counts of records, not offsets)."""

    origin: str
    records: tuple[OriginRec, ...] = ()  #: present on the target side, in offset order
    pending: int = 0  #: consumed but not yet copied to the target side: read again once copied

    @property
    def count(self) -> int:
        return len(self.records) + self.pending

    @property
    def first_offset(self) -> int | None:
        return self.records[0].offset if self.records else None

    @property
    def last_offset(self) -> int | None:
        return self.records[-1].offset if self.records else None

    def as_dict(self) -> dict[str, object]:
        return {"origin": self.origin, "count": self.count, "present": len(self.records), "pending": self.pending,
                "first_offset": self.first_offset, "last_offset": self.last_offset}


@dataclass(frozen=True)
class TwoOriginTranslation:
    """The translation of one position of one partition, with its evidence.

    ``offset`` is where the group resumes on the target side (None when not ``proven``). ``consumed``: distinct
    records per origin before the position on the source side; ``covered``: distinct records per origin before
    ``offset`` on the target side. ``exact`` ⇔ covered == consumed for every origin (then ``redelivered`` is
    empty). The group never skips a record: covered <= consumed per origin, by construction. ``duplicates``:
    restart duplicates recognised per side (``source``/``target``); ``duplicates_ahead``: those on the target
    side past ``offset`` whose record the group consumed (MM2 wrote them twice; not the translation's doing)."""

    position: int
    offset: int | None
    consumed: dict[str, int]
    covered: dict[str, int]
    redelivered: tuple[Redelivery, ...] = ()
    proven: bool = True
    reason: str = ""
    problems: tuple[str, ...] = field(default_factory=tuple)
    duplicates: dict[str, int] = field(default_factory=dict)
    duplicates_ahead: int = 0
    #: the windows it was computed from (:mod:`.two_origin_window`): then ``consumed``/``covered`` count from the
    #: native side's window start and ``duplicates`` from the aligned copies; None: whole logs, counts from the start
    window: dict[str, object] | None = None

    @property
    def exact(self) -> bool:
        return self.proven and not self.redelivered

    @property
    def redelivered_count(self) -> int:
        return sum(r.count for r in self.redelivered)

    def as_dict(self) -> dict[str, object]:
        return {"position": self.position, "offset": self.offset, "proven": self.proven, "exact": self.exact,
                "consumed": dict(self.consumed), "covered": dict(self.covered),
                "redelivered": [r.as_dict() for r in self.redelivered], "reason": self.reason,
                "restart_duplicates": dict(self.duplicates), "restart_duplicates_ahead": self.duplicates_ahead,
                **({"window": self.window} if self.window is not None else {})}


def _by_origin(recs: Iterable[OriginRec]) -> dict[str, list[OriginRec]]:
    out: dict[str, list[OriginRec]] = {}
    for r in recs:
        out.setdefault(r.origin, []).append(r)
    return out


def _in_order(log: Sequence[OriginRec], side: str) -> None:
    for prev, cur in pairwise(log):
        if cur.offset <= prev.offset:
            raise ValueError(f"{side} log is not in offset order at offset {cur.offset}")


class Placed(NamedTuple):
    """Copies placed on their natives: ``ordinal[i]`` is the native ordinal of copy ``i``; ``first[i]`` whether it
    is that native's first copy (else a restart duplicate). ``problem``: why the copies cannot be placed (then
    the lists stop at the copy that could not be)."""

    ordinal: list[int]
    first: list[bool]
    problem: str = ""

    @property
    def duplicates(self) -> int:
        return self.first.count(False)


def place_copies(copies: Sequence[OriginRec], natives: Sequence[OriginRec],
                 unsure: Callable[[OriginRec], bool] | None = None) -> Placed:
    """Place every copy on its native (see the module doc, "MM2 restarts"). The decision per copy, in this order:
    it continues the current re-run (the next native of the run, before the first not yet copied: a re-run ends
    before new copies begin); it is the next native not yet copied; it starts a re-run at the latest earlier native
    of its identity whose following natives the next copies repeat up to the first not yet copied (as far as the
    log goes). A copy that could be the next native and a re-run alike (identical natives) is refused rather than
    guessed, as is one that is neither.

    ``unsure``: copies that may be identical to a native *before* ``natives`` (a window of them): such a copy is
    not taken as the next native unless a re-run within ``natives`` is excluded too, which it cannot be; refused."""
    where: dict[int, list[int]] = {}
    for k, r in enumerate(natives):
        where.setdefault(r.fp, []).append(k)
    index: list[int] = []
    first: list[bool] = []
    nxt = 0  # the first native not yet copied
    run: int | None = None  # the next native of the re-run in progress
    for i, c in enumerate(copies):
        if run is not None and run < nxt and natives[run].fp == c.fp:
            index.append(run)
            first.append(False)
            run = run + 1 if run + 1 < nxt else None
            continue
        start = next((k for k in reversed(where.get(c.fp, ())) if k < nxt
                      and all(t.fp == natives[k + j].fp for j, t in enumerate(copies[i:i + (nxt - k)]))), None)
        if nxt < len(natives) and natives[nxt].fp == c.fp:
            if start is not None:  # the same record twice among the natives: which one this is decides the position
                return Placed(index, first, f"copy #{i} (offset {c.offset}) is the next record ({nxt}) or a restart re-run "
                                            f"from record {start}, which is identical to it: cannot be placed by identity")
            if unsure is not None and unsure(c):  # a re-run from an identical native before the window is not excluded
                return Placed(index, first, f"copy #{i} (offset {c.offset}) is the next record ({nxt}) or may re-run an "
                                            "identical record before the window")
            index.append(nxt)
            first.append(True)
            nxt, run = nxt + 1, None
            continue
        if start is None:
            return Placed(index, first, f"copy #{i} (offset {c.offset}) is neither the next record ({nxt}) nor a re-run of "
                                        "earlier ones: a copy lost, reordered or changed")
        index.append(start)
        first.append(False)
        run = start + 1 if start + 1 < nxt else None
    return Placed(index, first)


def translate_position(frm: Sequence[OriginRec], position: int, to: Sequence[OriginRec], to_end: int | None = None, *,
                       frm_alias: str, to_alias: str) -> TwoOriginTranslation:
    """Translate the group position ``position`` on the side whose log is ``frm`` (cluster alias ``frm_alias``:
    its natives are that origin's) to the side whose log is ``to`` (alias ``to_alias``).

    ``frm`` must hold every record before ``position`` (the logs as a read_committed consumer reads them, from
    the partition's start); ``to`` every record of the other side from its start. ``to_end``: the other side's end
    offset (the answer when every record there is consumed; default: its last record's offset + 1, or 0).
    Raises ValueError for a log out of offset order (a caller's bug, not evidence)."""
    _in_order(frm, "source-side")
    _in_order(to, "target-side")
    end = to_end if to_end is not None else (to[-1].offset + 1 if to else 0)
    here, there = _by_origin(frm), _by_origin(to)

    # every record of either log as (native ordinal, first copy?): natives are their own ordinals
    def placed(log: dict[str, list[OriginRec]], alias: str, other: dict[str, list[OriginRec]]) -> dict[str, Placed]:
        out = {}
        for origin, rs in log.items():
            if origin == alias:
                out[origin] = Placed(list(range(len(rs))), [True] * len(rs))
            else:
                out[origin] = place_copies(rs, other.get(origin, []))
        return out

    here_p, there_p = placed(here, frm_alias, there), placed(there, to_alias, here)
    problems = [f"origin {o} on the {side}: {p.problem}" for side, ps in (("source side", here_p), ("target side", there_p))
                for o, p in sorted(ps.items()) if p.problem]
    consumed: dict[str, int] = {}
    for origin, rs in sorted(here.items()):
        ix = [k for r, k in zip(rs, here_p[origin].ordinal, strict=False) if r.offset < position]
        if ix:
            consumed[origin] = max(ix) + 1
    if problems:
        return TwoOriginTranslation(position, None, consumed, {}, proven=False, reason=problems[0], problems=tuple(problems))

    # the first record on ``to`` the group has not consumed, of each origin; the earliest of them bounds the answer
    firsts = [next((r.offset for r, k in zip(rs, there_p[o].ordinal, strict=True) if k >= consumed.get(o, 0)), None)
              for o, rs in there.items()]
    offset = min((f for f in firsts if f is not None), default=end)
    origins = sorted(set(consumed) | set(there))
    covered = {o: max((k + 1 for r, k in zip(there.get(o, []), there_p[o].ordinal, strict=True) if r.offset < offset), default=0)
               if o in there else 0 for o in origins}
    redelivered = []
    ahead = 0
    for origin in origins:
        want, have = consumed.get(origin, 0), covered.get(origin, 0)
        rs, p = there.get(origin, []), there_p.get(origin, Placed([], []))
        ahead += sum(1 for r, k, f in zip(rs, p.ordinal, p.first, strict=True) if r.offset >= offset and not f and k < want)
        if want > have:
            present = tuple(r for r, k, f in zip(rs, p.ordinal, p.first, strict=True) if f and have <= k < want)
            redelivered.append(Redelivery(origin, present, want - have - len(present)))
    duplicates = {side: n for side, n in (("source", sum(p.duplicates for p in here_p.values())),
                                          ("target", sum(p.duplicates for p in there_p.values()))) if n}
    return TwoOriginTranslation(position, offset, consumed, covered, tuple(redelivered),
                                reason=reason(offset, redelivered, duplicates, ahead), duplicates=duplicates,
                                duplicates_ahead=ahead)


def reason(offset: int, redelivered: Sequence[Redelivery], duplicates: dict[str, int], ahead: int) -> str:
    """The one-line reason of a proven translation (shared by the whole and the windowed computation)."""
    why = ("exact: every record consumed lies before the offset and none after it" if not redelivered else
           f"no exact offset: resuming at {offset} re-delivers " +
           ", ".join(f"{r.count} record(s) of origin {r.origin}" for r in redelivered) + "; none is skipped")
    if duplicates:
        why += (f"; MM2 restart duplicates recognised by identity and position: {sum(duplicates.values())}"
                + (f", {ahead} past the offset (MM2 wrote them twice: every consumer of this side reads them)" if ahead else ""))
    return why


def exact_offsets(frm: Sequence[OriginRec], position: int, to: Sequence[OriginRec]) -> list[int]:
    """Every record offset ``o`` of ``to`` (and its end) with a(o) = a1 and b(o) = b1: the exact points, by the
    definition itself (quadratic; for tests and small proofs of logs without restart duplicates)."""
    consumed = {o: len(rs) for o, rs in _by_origin(r for r in frm if r.offset < position).items()}
    candidates = sorted({r.offset for r in to} | {to[-1].offset + 1 if to else 0})
    out = []
    for o in candidates:
        before = {k: len(v) for k, v in _by_origin(r for r in to if r.offset < o).items()}
        if {k: v for k, v in before.items() if v} == {k: v for k, v in consumed.items() if v}:
            out.append(o)
    return out
