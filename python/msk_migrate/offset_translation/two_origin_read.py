"""Reading two-origin partitions for :mod:`.two_origin_window`, and a group's commits translated with them.

Each side's partition is read in windows (:mod:`.two_origin_window`: from a start proven by ListOffsets for a
timestamp, growing backward while the alignment needs more, never past ``MAX_RECORDS`` offsets per window) to its
last stable offset, by one read_committed consumer per cluster (transaction markers and aborted records leave
offset holes, as :mod:`.windows` reads). Every record is classified by its copy mark
(:mod:`msk_migrate.validation.copy_marks`): on side X with peer Y, a record whose last header is
``copied-from.<Y>`` with the value ``<Y>`` is a copy of Y's native (origin Y, identified by its fingerprint with
that mark removed); a record without a ``copied-from.<Y>`` header is X's native (origin X, its fingerprint as is);
a record with the mark elsewhere or another value is neither, and the translation of its partition is refused
naming its offset (a record outside the windows read is not seen).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import OffsetSpec

from ..access.admin import TP, AdminSession
from ..access.offsets import start_and_stable_offsets
from ..errors import UsageError
from ..kafka.consume import IDLE_CHECK_SECONDS, POLL_SECONDS
from ..kafka.fingerprint import fingerprint
from ..validation.copy_marks import MarkState, strip_mark
from .two_origin import OriginRec, TwoOriginTranslation
from .two_origin_window import MAX_RECORDS, WINDOW, WindowTooLarge, translate_windowed

STALL_SECONDS = 30.0


def classify(headers, alias: str, peer: str) -> tuple[str | None, list[tuple[str, bytes | None]] | None]:
    """(origin, headers to fingerprint) of a record on ``alias``'s side; origin None for a wrong mark."""
    stripped, state = strip_mark(headers, peer)
    if state is MarkState.OK:
        return peer, stripped
    if state is MarkState.MISSING:
        return alias, headers
    return None, headers


class BadMark(Exception):
    """A record whose copy mark is wrong or not last: its partition is refused, not translated."""

    def __init__(self, role: str, offset: int, count: int) -> None:
        super().__init__(role, offset, count)
        self.role, self.offset, self.count = role, offset, count


class ClusterReader:
    """One read_committed consumer on one cluster, reading ranges of partitions one at a time."""

    def __init__(self, session: AdminSession, alias: str, peer: str) -> None:
        self.session, self.alias, self.peer = session, alias, peer
        self._consumer: Consumer | None = None

    def consumer(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer(self.session.consumer_config(f"msk-migrate-two-origin-{time.time_ns()}", **{
                "isolation.level": "read_committed", "enable.partition.eof": True, "auto.offset.reset": "earliest"}))
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def read(self, tp: TP, lo: int, hi: int) -> list[OriginRec]:
        """The records of ``tp`` in ``[lo, hi)`` classified by origin; raises :class:`BadMark` for a wrong mark."""
        if hi <= lo:
            return []
        consumer = self.consumer()
        consumer.assign([TopicPartition(tp[0], tp[1], lo)])
        recs: list[OriginRec] = []
        bad: list[int] = []
        last, done = time.time(), False
        while not done:
            msgs = consumer.consume(5000, timeout=POLL_SECONDS)
            if msgs:
                last = time.time()
            for m in msgs:
                if m.topic() is not None and ((m.topic(), m.partition()) != tp or m.offset() < lo):
                    continue  # left from an earlier range this consumer read
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        done = done or m.offset() >= hi
                        continue
                    raise self.session.error(f"reading {tp[0]}[{tp[1]}] failed", Exception(err.str()))
                off = m.offset()
                if off >= hi:
                    done = True
                    break
                origin, headers = classify(m.headers(), self.alias, self.peer)
                ts = m.timestamp()[1]
                if origin is None:
                    bad.append(off)
                else:
                    recs.append(OriginRec(off, origin, fingerprint(m.key(), m.value(), headers, ts), ts))
                done = done or off + 1 >= hi
            if not done and not msgs and time.time() - last >= IDLE_CHECK_SECONDS:
                # a range ending in markers delivers no record at its end
                (pos,) = consumer.position([TopicPartition(tp[0], tp[1])])
                done = pos.offset >= hi
                if not done and time.time() - last > STALL_SECONDS:
                    raise self.session.error(f"reading {tp[0]}[{tp[1]}] stalled for {STALL_SECONDS:.0f}s")
        if bad:
            raise BadMark(self.session.role, bad[0], len(bad))
        return recs


@dataclass
class KafkaSide:
    """One partition on one cluster as :class:`.two_origin_window.Side`."""

    reader: ClusterReader
    tp: TP
    start: int
    end: int
    timestamps: bool

    def read(self, lo: int, hi: int) -> Sequence[OriginRec]:
        return self.reader.read(self.tp, lo, hi)

    def offset_for_time(self, ts: int) -> int:
        found = self.reader.session.list_offsets({self.tp: OffsetSpec.for_timestamp(ts)}).get(self.tp)
        return self.end if found is None or found.offset < 0 else min(found.offset, self.end)


def _sides(session: AdminSession, alias: str, peer: str, tps: list[TP]) -> tuple[ClusterReader, dict[TP, KafkaSide]]:
    ((start, stable),) = start_and_stable_offsets((session, tps))
    log_append = {n for n, c in session.topic_configs({t for t, _ in tps}).items() if c.log_append_time}
    reader = ClusterReader(session, alias, peer)
    return reader, {tp: KafkaSide(reader, tp, start[tp], stable[tp], tp[0] not in log_append) for tp in tps}


def translate_commits(frm: AdminSession, frm_alias: str, to: AdminSession, to_alias: str, committed: dict[TP, int], *,
                      window: int = WINDOW, max_records: int = MAX_RECORDS) -> dict[TP, TwoOriginTranslation]:
    """Each commit point (same topic names on both sides) translated from ``frm`` to ``to``; nothing is written.
    A partition with a wrong mark in a window read is refused (``proven`` False) naming the first such offset;
    a window over ``max_records`` offsets refuses the whole call (one line naming the partition and the fix).
    Each translation's ``window`` holds the window starts and ``records_read`` per side."""
    tps = sorted(committed)
    f_reader, f_sides = _sides(frm, frm_alias, to_alias, tps)
    t_reader, t_sides = _sides(to, to_alias, frm_alias, tps)
    out: dict[TP, TwoOriginTranslation] = {}
    try:
        for tp in tps:
            out[tp] = _translate_one(tp, committed[tp], f_sides[tp], t_sides[tp], frm_alias, to_alias, window, max_records)
    finally:
        f_reader.close()
        t_reader.close()
    return out


def _translate_one(tp: TP, position: int, frm: KafkaSide, to: KafkaSide, frm_alias: str, to_alias: str,
                   window: int, max_records: int) -> TwoOriginTranslation:
    try:
        t, read = translate_windowed(frm, position, to, frm_alias=frm_alias, to_alias=to_alias, window=window,
                                     max_records=max_records)
    except BadMark as bad:
        why = (f"{bad.role} {tp[0]}[{tp[1]}] offset {bad.offset}: copy mark wrong or not last "
               f"({bad.count} record(s))")
        return TwoOriginTranslation(position, None, {}, {}, proven=False, reason=why, problems=(why,))
    except WindowTooLarge as big:
        role = (frm if big.side == "source" else to).reader.session.role
        raise UsageError(f"{tp[0]}[{tp[1]}]", f"the {role} cluster's window spans {big.offsets:,} offsets, more than the "
                         f"{big.bound:,} a two-origin translation reads", f"let the group consume to within "
                         f"{big.bound:,} offsets of the end of the partition on both clusters, then re-run") from None
    return replace(t, window={**(t.window or {}), "records_read": read})
