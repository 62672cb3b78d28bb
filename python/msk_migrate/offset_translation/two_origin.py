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

Pure: no I/O. :mod:`.two_origin_read` reads the logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple


class OriginRec(NamedTuple):
    """One record of a two-origin partition: its offset on this side, the alias of the cluster its producer wrote
    it to (this side's alias for a native), and its identity (fingerprint, a copy's mark removed)."""

    offset: int
    origin: str
    fp: int


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

    ``offset`` is where the group resumes on the target side (None when not ``proven``). ``consumed``: records
    per origin before the position on the source side; ``covered``: records per origin before ``offset`` on the
    target side. ``exact`` ⇔ covered == consumed for every origin (then ``redelivered`` is empty). The group never
    skips a record: covered <= consumed per origin, by construction."""

    position: int
    offset: int | None
    consumed: dict[str, int]
    covered: dict[str, int]
    redelivered: tuple[Redelivery, ...] = ()
    proven: bool = True
    reason: str = ""
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exact(self) -> bool:
        return self.proven and not self.redelivered

    @property
    def redelivered_count(self) -> int:
        return sum(r.count for r in self.redelivered)

    def as_dict(self) -> dict[str, object]:
        return {"position": self.position, "offset": self.offset, "proven": self.proven, "exact": self.exact,
                "consumed": dict(self.consumed), "covered": dict(self.covered),
                "redelivered": [r.as_dict() for r in self.redelivered], "reason": self.reason}


def _by_origin(recs: Iterable[OriginRec]) -> dict[str, list[OriginRec]]:
    out: dict[str, list[OriginRec]] = {}
    for r in recs:
        out.setdefault(r.origin, []).append(r)
    return out


def _in_order(log: Sequence[OriginRec], side: str) -> None:
    for prev, cur in pairwise(log):
        if cur.offset <= prev.offset:
            raise ValueError(f"{side} log is not in offset order at offset {cur.offset}")


def translate_position(frm: Sequence[OriginRec], position: int, to: Sequence[OriginRec], to_end: int | None = None) -> TwoOriginTranslation:
    """Translate the group position ``position`` on the side whose log is ``frm`` to the side whose log is ``to``.

    ``frm`` must hold every record before ``position`` (the logs as a read_committed consumer reads them, from
    the partition's start); ``to`` every record of the other side from its start. ``to_end``: the other side's end
    offset (the answer when every record there is consumed; default: its last record's offset + 1, or 0).
    Raises ValueError for a log out of offset order (a caller's bug, not evidence)."""
    _in_order(frm, "source-side")
    _in_order(to, "target-side")
    end = to_end if to_end is not None else (to[-1].offset + 1 if to else 0)
    consumed_recs = _by_origin(r for r in frm if r.offset < position)
    there = _by_origin(to)
    consumed = {o: len(rs) for o, rs in sorted(consumed_recs.items())}

    problems: list[str] = []
    for origin, rs in sorted(consumed_recs.items()):
        theirs = there.get(origin, [])
        for i, (mine, other) in enumerate(zip(rs, theirs, strict=False)):
            if mine.fp != other.fp:
                problems.append(f"origin {origin}: record #{i} differs (offset {mine.offset} here, {other.offset} there: "
                                "a copy lost, reordered, duplicated or changed)")
                break
    if problems:
        return TwoOriginTranslation(position, None, consumed, {}, proven=False, reason=problems[0], problems=tuple(problems))

    # the first record on ``to`` the group has not consumed, of each origin; the earliest of them bounds the answer
    firsts = [rs[consumed.get(origin, 0)].offset for origin, rs in there.items() if len(rs) > consumed.get(origin, 0)]
    offset = min(firsts, default=end)
    covered = {o: sum(1 for r in there.get(o, []) if r.offset < offset) for o in sorted(set(consumed) | set(there))}
    redelivered = []
    for origin in sorted(set(consumed) | set(there)):
        want, have = consumed.get(origin, 0), covered.get(origin, 0)
        if want > have:
            present = tuple(there.get(origin, [])[have:want])
            redelivered.append(Redelivery(origin, present, want - have - len(present)))
    why = ("exact: every record consumed lies before the offset and none after it" if not redelivered else
           f"no exact offset: resuming at {offset} re-delivers " +
           ", ".join(f"{r.count} record(s) of origin {r.origin}" for r in redelivered) + "; none is skipped")
    return TwoOriginTranslation(position, offset, consumed, covered, tuple(redelivered), reason=why)


def exact_offsets(frm: Sequence[OriginRec], position: int, to: Sequence[OriginRec]) -> list[int]:
    """Every record offset ``o`` of ``to`` (and its end) with a(o) = a1 and b(o) = b1: the exact points, by the
    definition itself (quadratic; for tests and small proofs)."""
    consumed = {o: len(rs) for o, rs in _by_origin(r for r in frm if r.offset < position).items()}
    candidates = sorted({r.offset for r in to} | {to[-1].offset + 1 if to else 0})
    out = []
    for o in candidates:
        before = {k: len(v) for k, v in _by_origin(r for r in to if r.offset < o).items()}
        if {k: v for k, v in before.items() if v} == {k: v for k, v in consumed.items() if v}:
            out.append(o)
    return out
