"""The in-order comparison of the records past a partition's mark, with the batch validator's rules.

Each record is identified by :func:`msk_migrate.kafka.fingerprint.fingerprint` (the same ``fp`` as the
batch checksum and diff; ``ts_used`` 0 for a LogAppendTime topic). Records are paired in offset order:
the n-th source record past the mark with the n-th target record past it. A pair with equal fingerprints
is proven and the mark moves past both. The first pair that differs stops the partition and is named
with the batch report's categories (:mod:`msk_migrate.validation.diff`):

- ``duplicates``: the target record is a copy of one already proven (MM2 re-delivery); with
  ``allow_duplicates`` it is passed over and counted, as the batch verdict lets duplicates alone pass;
- ``reordered``: the source record comes later on the target (and the target record later on the source);
- ``missing``: the source record does not come next on the target;
- ``unexpected``: the target record comes from nowhere in the source's pending records;
- ``changed``: the same position holds a different record: what differs (value, headers, header_order,
  timestamp, as :func:`msk_migrate.validation.explain` names them), or ``key``.

A target record past the source's records (:meth:`PartitionCompare.target_only`) is named the same way once
the source is known to hold nothing for it: ``duplicates`` when it repeats a proven record (passed over with
``allow_duplicates``), else ``unexpected``. MM2 copies source to target, so the target is only ever *behind*:
a target record without a source record at its position, after the source was read to an end offset listed
after that target record was read, is never a pending copy. (Copy marks and ``origin: target`` records, the
only target records a batch run leaves out or strips, do not reach the follower: a flow with ``mark_copies`` is
refused.)

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
from dataclasses import dataclass, field
from typing import Any

from ...kafka.fingerprint import field_hashes, fingerprint
from .mark import PartitionMark

#: Proven fingerprints remembered per partition, to recognise a re-delivered copy.
RECENT = 256
#: Pending records of one side past which the follower pauses that side's partition.
PENDING_LIMIT = 20_000
#: Pending records of one side after an unequal pair that are enough to name it while reading goes on.
LOOKAHEAD = 256


@dataclass(frozen=True, slots=True)
class Rec:
    offset: int
    fp: int
    ts: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    ts_used: int


def record(offset: int, key: bytes | None, value: bytes | None, headers: Any, ts: int, no_ts: bool) -> Rec:
    ts_used = 0 if no_ts else ts
    return Rec(offset, fingerprint(key, value, headers, ts_used), ts, key, value, headers, ts_used)


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
    src: deque[Rec] = field(default_factory=deque)
    tgt: deque[Rec] = field(default_factory=deque)
    recent: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT))
    proven_now: int = 0  #: records proven by this process (metrics)

    @property
    def stopped(self) -> bool:
        return self.mark.state != "following"

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
        while src and tgt:
            s, t = src[0], tgt[0]
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

    def _category(self, s: Rec, t: Rec, source_complete: bool = False) -> str:
        """The batch report's name for the unequal pair ``(s, t)`` at the front, from what both sides hold. With
        ``source_complete`` a target record of another key than ``s`` and without a source record is
        ``unexpected``: the batch diff pairs a changed record by its key only, and ``s`` may still be copied."""
        if t.fp in self.recent:
            return "duplicates"
        src_fps = {r.fp for r in self.src}
        tgt_fps = {r.fp for r in self.tgt}
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
        while self.target_ahead:
            t = self.tgt[0]
            if t.fp in self.recent and self.allow_duplicates:
                self.tgt.popleft()
                mark.target_next = t.offset + 1
                mark.duplicates += 1
                continue
            category = "duplicates" if t.fp in self.recent else "unexpected"
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
