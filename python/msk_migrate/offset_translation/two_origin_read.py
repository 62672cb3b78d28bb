"""Reading two-origin partitions for :mod:`.two_origin`, and a group's commits translated with them.

Each side's partition is read from its start to its last stable offset by one read_committed consumer per
cluster (transaction markers and aborted records leave offset holes, as :mod:`.windows` reads). Every record is
classified by its copy mark (:mod:`msk_migrate.validation.copy_marks`): on side X with peer Y, a record whose
last header is ``copied-from.<Y>`` with the value ``<Y>`` is a copy of Y's native (origin Y, identified by its
fingerprint with that mark removed); a record without a ``copied-from.<Y>`` header is X's native (origin X, its
fingerprint as is); a record with the mark elsewhere or another value is neither, and the translation of its
partition is refused naming its offset.

Whole partitions are read: the proof needs every record of both origins before the position (``MAX_RECORDS`` per
partition bounds it; a longer partition is refused rather than read partly).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, TopicPartition

from ..access.admin import TP, AdminSession
from ..access.offsets import start_and_stable_offsets
from ..kafka.fingerprint import fingerprint
from ..validation.copy_marks import MarkState, strip_mark
from .two_origin import OriginRec, TwoOriginTranslation, translate_position

#: Records per partition read at most for one translation.
MAX_RECORDS = 1_000_000
STALL_SECONDS = 30.0


@dataclass
class SideLog:
    """One side's partition as :mod:`.two_origin` needs it."""

    recs: list[OriginRec] = field(default_factory=list)
    end: int = 0  #: last stable offset when read
    bad_marks: list[int] = field(default_factory=list)  #: offsets of records with a wrong or misplaced mark


def classify(headers, alias: str, peer: str) -> tuple[str | None, list[tuple[str, bytes | None]] | None]:
    """(origin, headers to fingerprint) of a record on ``alias``'s side; origin None for a wrong mark."""
    stripped, state = strip_mark(headers, peer)
    if state is MarkState.OK:
        return peer, stripped
    if state is MarkState.MISSING:
        return alias, headers
    return None, headers


def read_logs(session: AdminSession, alias: str, peer: str, tps: list[TP]) -> dict[TP, SideLog]:
    """Every record of ``tps`` on ``session``'s cluster (whose alias is ``alias``), classified by origin."""
    ((start, stable),) = start_and_stable_offsets((session, tps))
    logs = {tp: SideLog(end=stable[tp]) for tp in tps}
    for tp in tps:
        if stable[tp] - start[tp] > MAX_RECORDS:
            raise session.error(f"{tp[0]}[{tp[1]}] holds {stable[tp] - start[tp]:,} offsets, more than the "
                                f"{MAX_RECORDS:,} a two-origin translation reads")
    todo = {tp: stable[tp] for tp in tps if stable[tp] > start[tp]}
    if not todo:
        return logs
    consumer = Consumer(session.consumer_config(f"msk-migrate-two-origin-{time.time_ns()}", **{
        "isolation.level": "read_committed", "enable.partition.eof": True, "auto.offset.reset": "earliest"}))
    try:
        consumer.assign([TopicPartition(t, p, start[(t, p)]) for (t, p) in todo])
        last = time.time()
        while todo:
            msgs = consumer.consume(5000, timeout=0.2)
            if msgs:
                last = time.time()
            for m in msgs:
                tp = (m.topic(), m.partition())
                if tp not in todo:
                    continue
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if m.offset() >= todo[tp]:
                            del todo[tp]
                        continue
                    raise session.error(f"reading {tp[0]}[{tp[1]}] failed", Exception(err.str()))
                off = m.offset()
                if off >= todo[tp]:
                    del todo[tp]
                    continue
                origin, headers = classify(m.headers(), alias, peer)
                if origin is None:
                    logs[tp].bad_marks.append(off)
                else:
                    logs[tp].recs.append(OriginRec(off, origin, fingerprint(m.key(), m.value(), headers, m.timestamp()[1])))
                if off + 1 >= todo[tp]:
                    del todo[tp]
            if todo and not msgs:
                for pos in consumer.position([TopicPartition(*tp) for tp in todo]):
                    if (pos.topic, pos.partition) in todo and pos.offset >= todo[(pos.topic, pos.partition)]:
                        del todo[(pos.topic, pos.partition)]
                if time.time() - last > STALL_SECONDS:
                    t, p = next(iter(todo))
                    raise session.error(f"reading {t}[{p}] stalled for {STALL_SECONDS:.0f}s")
    finally:
        consumer.close()
    return logs


def translate_commits(frm: AdminSession, frm_alias: str, to: AdminSession, to_alias: str,
                      committed: dict[TP, int]) -> dict[TP, TwoOriginTranslation]:
    """Each commit point (same topic names on both sides) translated from ``frm`` to ``to``; nothing is written.
    A partition with a wrong mark on either side is refused (``proven`` False) naming the first such offset."""
    tps = sorted(committed)
    frm_logs = read_logs(frm, frm_alias, to_alias, tps)
    to_logs = read_logs(to, to_alias, frm_alias, tps)
    out: dict[TP, TwoOriginTranslation] = {}
    for tp in tps:
        bad = [(frm.role, o) for o in frm_logs[tp].bad_marks] + [(to.role, o) for o in to_logs[tp].bad_marks]
        if bad:
            why = f"{bad[0][0]} {tp[0]}[{tp[1]}] offset {bad[0][1]}: copy mark wrong or not last ({len(bad)} record(s))"
            out[tp] = TwoOriginTranslation(committed[tp], None, {}, {}, proven=False, reason=why, problems=(why,))
            continue
        out[tp] = translate_position(frm_logs[tp].recs, committed[tp], to_logs[tp].recs, to_logs[tp].end,
                                     frm_alias=frm_alias, to_alias=to_alias)
    return out
