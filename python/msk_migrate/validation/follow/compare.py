"""The in-order comparison of the records past a partition's mark, with the batch validator's rules.

Each record is identified by :func:`msk_migrate.kafka.fingerprint.fingerprint` (the same ``fp`` as the
batch checksum and diff; ``ts_used`` 0 for a LogAppendTime topic). Records are paired in offset order:
the n-th source record past the mark with the n-th target record past it. A pair with equal fingerprints
is proven and the mark moves past both. The first pair that differs stops the partition and is named
with the batch report's categories (:mod:`msk_migrate.validation.diff`):

- ``duplicates``: the target record is a copy of one already proven (MM2 re-delivery); with
  ``allow_duplicates`` it is passed over and counted, as the batch verdict lets duplicates alone pass. A
  re-delivery longer than the ring of recent fingerprints (:data:`RECENT`: an at-least-once restart re-sends
  every record since its last offset commit) is recognised through the comparer's store of proven source
  records (:attr:`PartitionCompare.proven_source`): the source's records from the target record's copy up to
  the mark are the run the target must repeat, in order, before the next record; each one repeated is a
  duplicate like any other;
- ``reordered``: the source record comes later on the target (and the target record later on the source);
- ``missing``: the source record does not come next on the target;
- ``unexpected``: the target record comes from nowhere in the source's pending records;
- ``changed``: the same position holds a different record: what differs (value, headers, header_order,
  timestamp, as :func:`msk_migrate.validation.explain` names them), or ``key``.

A target record past the source's records (:meth:`PartitionCompare.target_only`) is named the same way once
the source is known to hold nothing for it: ``duplicates`` when it repeats a proven record (passed over with
``allow_duplicates``), else ``unexpected``. MM2 copies source to target, so the target is only ever *behind*:
a target record without a source record at its position, after the source was read to an end offset listed
after that target record was read, is never a pending copy.

**Per origin, where copies are marked** (:class:`Origins`: the flow's ``mark_copies`` or ``--copy-marks SRC,TGT``):
each record is given its origin as it is read (:meth:`Origins.source` / :meth:`Origins.target`). A source record
carrying ``copied-from.<TGT>`` (anywhere) came from the target, which the forward flow never copies back: it is
left out (:data:`LEFT_OUT`); a target record without ``copied-from.<SRC>`` is the target's own (:data:`NATIVE`).
Both are of the target's origin, counted below the mark (``origin_target``) and never compared. A target record
whose *last* header is exactly ``copied-from.<SRC>`` = ``SRC``, and no other header of that key, is a copy: the
mark is removed and it is paired, in order, with the source's records of the source's origin (its natives). Any
other placement of the mark (not last, another value, twice) is :data:`BAD_MARK`: reaching the front of the
target's records it stops the partition (category ``copy_mark``). MM2 copies one source partition in offset order
and its filter skips only the records carrying the target's mark, so the copies on the target are exactly the
source's natives in their order (restart re-deliveries aside, named ``duplicates`` as above): the in-order rules
apply unchanged to the two subsequences.

Aborted transactional records and transaction markers are never seen (read_committed consumers skip
them, as the batch reader does); compaction gaps in the source's offsets do not matter (pairing is by
position in the record sequence, not by offset).

Naming waits for evidence, the stop point does not: the first unequal pair is where the mark stops, whatever
is read after it. While a side is still being read (``step(wait=True)``) a pair whose category more records
could change (``missing``, ``unexpected``, ``changed``) is held until the pass's reads are done or either side
holds :data:`LOOKAHEAD` records, so an inserted record is named ``unexpected`` as the batch diff names it, not
``changed`` because its successor had not arrived yet.

Memory: per partition the pending records of the side that is ahead (bounded by the follower, which
pauses a side past :data:`PENDING_LIMIT`) and a ring of the last :data:`RECENT` proven fingerprints.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...kafka.fingerprint import field_hashes, fingerprint
from ...topology.marks import mark_header
from ..copy_marks import MarkState, came_from, strip_mark
from .mark import PartitionMark

#: Proven fingerprints remembered per partition, to recognise a re-delivered copy.
RECENT = 256
#: Pending records of one side past which the follower pauses that side's partition.
PENDING_LIMIT = 20_000
#: Pending records of one side after an unequal pair that are enough to name it while reading goes on.
LOOKAHEAD = 256
#: Proven source records a store of them looks back through for the start of a re-delivery (see
#: :attr:`PartitionCompare.proven_source`): a longer one is named as a difference.
REPLAY_LOOKBACK = 200_000

#: The store of a partition's proven source records: given a target record, the fingerprints of the source's
#: records below the mark from the last one equal to it on (the run a re-delivery starting there repeats), or
#: None when none below the mark is.
ProvenSource = Callable[["Rec"], "list[int] | None"]


#: What a record read is to the comparison (:attr:`Rec.kind`): compared in order (a record of the source's origin:
#: a source record, or a target copy with its mark removed) ...
COMPARED = 0
#: ... a source record copied from the target (it carries ``copied-from.<TGT>``): not expected on the target, counted
LEFT_OUT = 1
#: ... a target record without the source's mark: the target's own (origin: target), counted, not compared
NATIVE = 2
#: ... a target record with the source's mark misplaced, with another value or twice: a mismatch where it stands
BAD_MARK = 3


@dataclass(frozen=True, slots=True)
class Rec:
    offset: int
    fp: int
    ts: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    ts_used: int
    kind: int = COMPARED


def record(offset: int, key: bytes | None, value: bytes | None, headers: Any, ts: int, no_ts: bool,
           kind: int = COMPARED) -> Rec:
    ts_used = 0 if no_ts else ts
    return Rec(offset, fingerprint(key, value, headers, ts_used), ts, key, value, headers, ts_used, kind)


@dataclass(frozen=True)
class Origins:
    """The copy marks of a flow ``source_alias -> target_alias`` (docs/active-active-proof.md): what each record
    read is to the per-origin comparison. The record's fingerprint is of what is compared (a copy's without its
    mark), the batch validator's identity for it."""

    source_alias: str
    target_alias: str

    def as_dict(self) -> dict[str, str]:
        return {"source_alias": self.source_alias, "target_alias": self.target_alias}

    def source(self, offset: int, key: bytes | None, value: bytes | None, headers: Any, ts: int, no_ts: bool) -> Rec:
        kind = LEFT_OUT if came_from(headers, self.target_alias) else COMPARED
        return record(offset, key, value, headers, ts, no_ts, kind)

    def target(self, offset: int, key: bytes | None, value: bytes | None, headers: Any, ts: int, no_ts: bool) -> Rec:
        rest, state = strip_mark(headers, self.source_alias)
        if state is MarkState.MISSING:
            return record(offset, key, value, headers, ts, no_ts, NATIVE)
        if state is MarkState.OK and not any(k == mark_header(self.source_alias) for k, _ in rest or ()):
            return record(offset, key, value, rest, ts, no_ts)
        return record(offset, key, value, headers, ts, no_ts, BAD_MARK)  # compared as it is: it matches nothing


def origins_of(marks: Any) -> Origins | None:
    """The per-origin rules of a request's copy marks (:class:`~..request.CopyMarks`), None without both aliases
    (the follower refuses one alias: it could not tell the source's records that came from the target)."""
    if marks is None or marks.target_alias is None:
        return None
    return Origins(marks.source_alias, marks.target_alias)


def key_repr(key: bytes | None) -> dict[str, Any]:
    """A key as the batch report shows it without --show-keys: the sha256 of its bytes (keys can hold personal
    data, and the mark file is kept and shared like a report)."""
    if key is None:
        return {"key": None, "key_encoding": None}
    return {"key": hashlib.sha256(key).hexdigest(), "key_encoding": "sha256"}


def changed_kinds(s: Rec, t: Rec) -> list[str]:
    """What differs between two records, in the batch report's words."""
    hs, ht = field_hashes(s.key, s.value, s.headers, s.ts_used), field_hashes(t.key, t.value, t.headers, t.ts_used)
    kinds = []
    if hs["h_key"] != ht["h_key"]:
        kinds.append("key")
    if hs["h_value"] != ht["h_value"]:
        kinds.append("value")
    if hs["h_headers_sorted"] != ht["h_headers_sorted"]:
        kinds.append("headers")
    elif hs["h_headers"] != ht["h_headers"]:
        kinds.append("header_order")
    if hs["h_ts"] != ht["h_ts"]:
        kinds.append("timestamp")
    return kinds


@dataclass
class PartitionCompare:
    """The comparison state of one partition: records read past the mark and not yet paired."""

    mark: PartitionMark
    allow_duplicates: bool = False
    #: where a target record not among the recent fingerprints is looked for among the proven source records
    #: (the follower reads the source back); None: only the recent ones are known
    proven_source: ProvenSource | None = None
    src: deque[Rec] = field(default_factory=deque)
    tgt: deque[Rec] = field(default_factory=deque)
    recent: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT))
    #: the proven source fingerprints a re-delivery found by ``proven_source`` has still to repeat, in order
    replay: deque[int] = field(default_factory=deque)
    looked_up: int = -1  #: the target offset last looked for in ``proven_source`` (asked once per record)
    proven_now: int = 0  #: records proven by this process (metrics)

    @property
    def stopped(self) -> bool:
        return self.mark.state != "following"

    def _settle_front(self) -> bool:
        """Count and pass the records of the target's origin at the front of either side (per origin: they are
        not compared), moving the mark past them; a wrong copy mark at the front of the target stops the
        partition there. Returns whether the partition still follows."""
        src, tgt, mark = self.src, self.tgt, self.mark
        while src and src[0].kind == LEFT_OUT:
            mark.source_next = src.popleft().offset + 1
            if mark.origin_target is not None:
                mark.origin_target["source"] += 1
        while tgt and tgt[0].kind == NATIVE:
            mark.target_next = tgt.popleft().offset + 1
            if mark.origin_target is not None:
                mark.origin_target["target"] += 1
        if tgt and tgt[0].kind == BAD_MARK:
            t = tgt[0]
            s_off = src[0].offset if src else mark.source_next
            mark.state = "mismatch"
            mark.mismatch = {"category": "copy_mark", **key_repr(t.key), "source_offset": s_off, "target_offset": t.offset,
                             "timestamp": src[0].ts if src else None, "target_timestamp": t.ts,
                             "reason": "copy mark wrong or misplaced (not the one last header "
                                       "copied-from.<source alias> with the alias as its value)"}
            mark.source_next, mark.target_next = s_off, t.offset
            return False
        return True

    def step(self, wait: bool = False, source_complete: bool = False) -> int:
        """Pair what both sides hold; returns the records proven. Stops at the first difference; with ``wait``
        (a side is still being read) a difference whose name more records could change is held, unpaired and
        not yet stopped, until a call without ``wait`` or :data:`LOOKAHEAD` pending records on either side.
        ``source_complete``: the caller read the source to an end offset listed after every pending target
        record was read, so a target record not among the source's pending records has no source record."""
        if self.stopped:
            return 0
        src, tgt, mark = self.src, self.tgt, self.mark
        n = 0
        while self._settle_front() and src and tgt:
            s, t = src[0], tgt[0]
            if self.replay or s.fp != t.fp:
                redelivered = self._redelivered(t)
                if redelivered is False:
                    self._stop(s, t, "duplicates")
                    break
                if redelivered:
                    continue
            if s.fp == t.fp:
                src.popleft()
                tgt.popleft()
                self.recent.append(s.fp)
                mark.source_next, mark.target_next = s.offset + 1, t.offset + 1
                mark.proven_ts_ms = s.ts
                n += 1
                continue
            if t.fp in self.recent and self.allow_duplicates:
                tgt.popleft()
                mark.target_next = t.offset + 1
                mark.duplicates += 1
                continue
            category = self._category(s, t, source_complete)
            if wait and category not in ("duplicates", "reordered") and max(len(src), len(tgt)) < LOOKAHEAD:
                break
            self._stop(s, t, category)
            break
        mark.compared += n
        self.proven_now += n
        return n

    def _redelivered(self, t: Rec) -> bool | None:
        """Whether the front target record ``t`` is the next record of a re-delivery longer than the ring of
        recent fingerprints: None when it is not; True when it is and was passed over (counted, with
        ``allow_duplicates``); False when it is and, without ``allow_duplicates``, stops the mark as a duplicate.
        A record that continues no re-delivery ends it: the comparison goes on from the records after it."""
        if self.replay and t.fp != self.replay[0]:
            self.replay.clear()
        if not self.replay:
            if self.proven_source is None or t.fp in self.recent or t.offset == self.looked_up:
                return None
            self.looked_up = t.offset  # one read of the source back per target record, whatever it finds
            if self.src and self.src[0].fp == t.fp:
                return None  # the record comes next on the source: nothing to look for
            found = self.proven_source(t)
            if not found:
                return None
            self.replay.extend(found)
        if not self.allow_duplicates:
            return False
        self.replay.popleft()
        self.tgt.popleft()
        self.mark.target_next = t.offset + 1
        self.mark.duplicates += 1
        return True

    def _category(self, s: Rec, t: Rec, source_complete: bool = False) -> str:
        """The batch report's name for the unequal pair ``(s, t)`` at the front, from what both sides hold. With
        ``source_complete`` a target record of another key than ``s`` and without a source record is
        ``unexpected``: the batch diff pairs a changed record by its key only, and ``s`` may still be copied."""
        if t.fp in self.recent:
            return "duplicates"
        src_fps = {r.fp for r in self.src if r.kind == COMPARED}
        tgt_fps = {r.fp for r in self.tgt if r.kind == COMPARED}
        if s.fp in tgt_fps and t.fp in src_fps:
            return "reordered"
        if t.fp in src_fps:
            return "missing"
        if s.fp in tgt_fps or (source_complete and s.key != t.key):
            return "unexpected"
        return "changed"

    def _stop(self, s: Rec, t: Rec, category: str) -> None:
        shown = t if category in ("duplicates", "unexpected") else s
        detail: dict[str, Any] = {"category": category, **key_repr(shown.key), "source_offset": s.offset,
                                  "target_offset": t.offset, "timestamp": s.ts, "target_timestamp": t.ts}
        if category == "changed":
            detail["changed"] = changed_kinds(s, t)
        self.mark.state = "mismatch"
        self.mark.mismatch = detail
        self.mark.source_next, self.mark.target_next = s.offset, t.offset

    @property
    def held(self) -> bool:
        """An unequal pair waits to be named (``step(wait=True)`` pairs every equal one)."""
        return not self.stopped and bool(self.tgt) and bool(self.src)

    @property
    def target_ahead(self) -> bool:
        """Target records wait while no source record does: the target read past the source's records."""
        return not self.stopped and bool(self.tgt) and not self.src

    def target_only(self) -> None:
        """The caller read the source to an end offset it listed *after* reading every pending target record,
        and every source record below it is paired (``source_next`` is at that end, nothing pending on the
        source). A source record copied to a target record was committed before MM2 read it, so before the copy
        was written and read, so below that end: a pending target record has no source record at its position.
        The first one stops the mark at it, named as the batch diff names it: ``duplicates`` when it repeats a
        proven record (passed over and counted with ``allow_duplicates``, as the batch verdict lets duplicates
        pass), else ``unexpected``; ``source_offset`` is the source's end, where its source record would be."""
        mark = self.mark
        while self._settle_front() and self.target_ahead:
            t = self.tgt[0]
            redelivered = self._redelivered(t)
            if redelivered:
                continue
            if redelivered is None and t.fp in self.recent and self.allow_duplicates:
                self.tgt.popleft()
                mark.target_next = t.offset + 1
                mark.duplicates += 1
                continue
            category = "duplicates" if redelivered is False or t.fp in self.recent else "unexpected"
            mark.state = "mismatch"
            mark.mismatch = {"category": category, **key_repr(t.key), "source_offset": mark.source_next,
                             "target_offset": t.offset, "timestamp": None, "target_timestamp": t.ts}
            mark.target_next = t.offset

    def caught_up(self, side: str, position: int) -> None:
        """A side read to ``position`` with nothing pending: every record of it below ``position`` was
        proven (transaction markers and aborted records are not records), so its mark may move there."""
        if self.stopped:
            return
        if side == "source" and not self.src and position > self.mark.source_next:
            self.mark.source_next = position
        elif side == "target" and not self.tgt and position > self.mark.target_next:
            self.mark.target_next = position
