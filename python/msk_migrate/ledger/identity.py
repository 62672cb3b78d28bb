"""A topic's identity: is the source topic MM2 copies now the one whose replication started?

A topic deleted and recreated under the same name is a new topic to Kafka, but not to MM2: its source
connector keeps the offsets it stored for the old topic and resumes there, so it skips the new topic's
first records (all of them, when the new topic has fewer records than the old one had) while ``lag`` sees
its position at or past the source's end and reports "in-sync". The ledger records each topic's identity
when its replication starts, and the commands that would trust MM2's position (``connectors apply``, ``lag``,
every gate) compare it with the topic now.

What the identity is:

- **Kafka >= 2.8**: the topic id (a UUID the broker assigns at creation, never reused; DescribeTopics through
  the admin client). ``{"kind": "topic-id", "topic_id": "<base64>", "partitions": N}``.
- **Older brokers** (no topic ids: the broker answers the zero UUID): partition 0's first record at the time
  of recording, by offset, timestamp and a digest of its key, value and headers.
  ``{"kind": "first-record", "partitions": N, "offset": O, "timestamp": T, "digest": "<sha256/16>"}``
  (``offset`` None when partition 0 was empty). Compared by reading the record at ``O`` again. It cannot
  decide once retention has removed offset ``O`` (or when partition 0 was empty): the topic is then reported
  ``unverifiable``, not changed.

Independent of the ledger and of the broker's version, :func:`check_identity` also flags a partition whose
MM2 position (``positions``: the source connector's committed offsets) is past the source's end offset
(``ends``): offsets never go backwards on a topic, so the topic was recreated (or truncated). And a partition
count that went down is a recreated topic (Kafka never removes partitions).

API: :func:`read_identities` ``(source, topics)``; :func:`check_identity` ``(session, topics, view=None,
positions=None, ends=None) -> list[Changed]``; :func:`refuse_changed` (the same, raising one UsageError that
names the topics and the fix); :func:`replicating_changes` (the ledger changes ``connectors apply`` records).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..access.admin import AdminSession
from ..errors import UsageError
from .records import Change, LedgerView

#: The zero UUID an older broker (no topic ids) answers, as confluent-kafka prints it.
ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"

TP = tuple[str, int]


@dataclass(frozen=True)
class Changed:
    """One topic whose identity changed since its replication started."""

    topic: str
    why: str
    recorded: dict[str, Any] | None
    now: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reset_fix(topics: Iterable[str], connector: str | None = None) -> str:
    """The fix, as one sentence: reset the topics' source offsets through Connect's offsets API."""
    names = " ".join(f"--topic {t}" for t in topics)
    where = f" of {connector}" if connector else ""
    return (f"reset the source offsets{where} for the recreated topic(s) with `msk-migrate connectors reset-topic {names}` "
            "(stops the source connector, deletes those partitions' offsets through Connect's offsets API, resumes it: MM2 "
            "copies the new topic from its first record, and the ledger records the new identity)")


def _digest(msg: Any) -> str:
    h = hashlib.sha256()
    for part in (msg.key() or b"", b"\x00", msg.value() or b"", b"\x00"):
        h.update(part)
    for k, v in msg.headers() or []:
        h.update(k.encode() + b"=" + (v or b"") + b"\x00")
    return h.hexdigest()[:16]


def _records_at(source: AdminSession, wanted: Mapping[str, int], timeout: float = 10.0) -> dict[str, Any]:
    """The record at ``wanted[topic]`` of each topic's partition 0, read by ONE consumer assigned all of them
    (a topic whose record is not read within ``timeout``, e.g. a transaction marker there, is left out)."""
    from confluent_kafka import Consumer, TopicPartition

    if not wanted:
        return {}
    consumer = Consumer(source.consumer_config(f"msk-migrate-identity-{time.time_ns()}", **{"isolation.level": "read_uncommitted"}))
    consumer.assign([TopicPartition(t, 0, o) for t, o in wanted.items()])
    found: dict[str, Any] = {}
    deadline = time.time() + timeout
    try:
        while time.time() < deadline and len(found) < len(wanted):
            for msg in consumer.consume(500, timeout=0.5):
                if msg.error() is not None:
                    continue
                t = str(msg.topic())
                if t in wanted and t not in found and msg.offset() >= wanted[t]:
                    found[t] = msg
                    consumer.pause([TopicPartition(t, 0)])
    finally:
        consumer.close()
    return found


def _topic_ids(source: AdminSession, topics: list[str]) -> dict[str, str | None]:
    """Topic -> its id (None when the broker has no topic ids, or did not describe it)."""
    from confluent_kafka import KafkaException, TopicCollection

    out: dict[str, str | None] = {}
    if not topics:
        return out
    futures = source.admin.describe_topics(TopicCollection(topics), request_timeout=source.timeout)
    for name, fut in futures.items():
        try:
            tid = str(fut.result(timeout=source.timeout + 5).topic_id)
        except (KafkaException, AttributeError):  # an older broker without DescribeTopics ids / the topic is gone
            tid = None
        out[name] = None if not tid or tid == ZERO_TOPIC_ID else tid
    return out


def read_identities(source: AdminSession, topics: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The identity of each of ``topics`` on ``source`` now (topics absent from the source are left out)."""
    from ..access.offsets import end_offsets, start_offsets

    present = source.topics(refresh=True)
    names = [t for t in topics if t in present]
    ids = _topic_ids(source, names)
    out: dict[str, dict[str, Any]] = {}
    legacy = [t for t in names if ids.get(t) is None]
    starts = start_offsets(source, [(t, 0) for t in legacy]) if legacy else {}
    ends = end_offsets(source, [(t, 0) for t in legacy]) if legacy else {}
    firsts = _records_at(source, {t: starts[(t, 0)] for t in legacy if ends[(t, 0)] > starts[(t, 0)]})
    for t in names:
        if ids.get(t):
            out[t] = {"kind": "topic-id", "topic_id": ids[t], "partitions": present[t]}
            continue
        msg = firsts.get(t)
        out[t] = {"kind": "first-record", "partitions": present[t], "offset": msg.offset() if msg else None,
                  "timestamp": msg.timestamp()[1] if msg else None, "digest": _digest(msg) if msg else None}
    return out


def _compare(recorded: dict[str, Any], now: dict[str, Any]) -> str | None:
    """Why the topic is not the recorded one, from what the two identities alone tell (None: the same, or a
    first-record identity that :func:`_compare_first_records` decides)."""
    if int(now.get("partitions") or 0) < int(recorded.get("partitions") or 0):
        return f"it has {now['partitions']} partition(s), fewer than the {recorded['partitions']} recorded (Kafka never removes partitions)"
    if recorded.get("kind") == "topic-id" and now.get("kind") == "topic-id" and now["topic_id"] != recorded["topic_id"]:
        return f"its topic id is {now['topic_id']}, not {recorded['topic_id']} recorded when replication started"
    return None


def _compare_first_records(source: AdminSession, recorded: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """Topic -> why its partition 0 no longer holds the first record recorded (older brokers). A recorded offset
    that retention removed, or an empty partition when recorded, cannot be decided and is not reported."""
    from ..access.offsets import end_offsets, start_offsets

    at = {t: int(r["offset"]) for t, r in recorded.items() if r.get("kind") == "first-record" and r.get("offset") is not None}
    if not at:
        return {}
    tps = [(t, 0) for t in at]
    starts, ends = start_offsets(source, tps), end_offsets(source, tps)
    out: dict[str, str] = {}
    readable = {}
    for t, o in at.items():
        if ends[(t, 0)] <= o:
            out[t] = f"partition 0 ends at offset {ends[(t, 0)]}, before offset {o} of the first record recorded when replication started"
        elif starts[(t, 0)] <= o:
            readable[t] = o
    records = _records_at(source, readable)
    for t, o in readable.items():
        msg = records.get(t)
        if msg is None or msg.offset() != o or (msg.timestamp()[1], _digest(msg)) != (recorded[t].get("timestamp"), recorded[t].get("digest")):
            out[t] = f"partition 0's record at offset {o} is not the one recorded when replication started"
    return out


def check_identity(session: Any, topics: Iterable[str], view: LedgerView | None = None,
                   positions: Mapping[TP, int] | None = None, ends: Mapping[TP, int] | None = None) -> list[Changed]:
    """The topics of ``topics`` that are not the ones whose replication started. ``session``: a
    MigrationSession (its ``source``) or an AdminSession of the source. ``view``: the ledger (recorded
    identities); ``positions``/``ends``: MM2's next source offset and the source's end per partition."""
    source: AdminSession = getattr(session, "source", session)
    names = list(topics)
    changed: dict[str, Changed] = {}
    for (t, p), pos in sorted((positions or {}).items()):
        end = (ends or {}).get((t, p))
        if t in names and end is not None and pos > end and t not in changed:
            changed[t] = Changed(t, f"MM2's position {pos} on partition {p} is past the source's end offset {end} "
                                    "(offsets never go backwards: the topic was recreated or truncated)", None, {"partition": p, "end": end})
    recorded = {t: rec.identity for t in names if view is not None and (rec := view.get("topic", t)) is not None and rec.identity}
    if recorded:
        now = read_identities(source, [t for t in recorded if t not in changed])
        same_so_far = {}
        for t, ident in now.items():
            why = _compare(recorded[t], ident)
            if why:
                changed[t] = Changed(t, why, recorded[t], ident)
            else:
                same_so_far[t] = recorded[t]
        for t, why in _compare_first_records(source, same_so_far).items():
            changed[t] = Changed(t, why, recorded[t], now[t])
    return [changed[t] for t in sorted(changed)]


def refuse_changed(session: Any, topics: Iterable[str], view: LedgerView | None = None,
                   positions: Mapping[TP, int] | None = None, ends: Mapping[TP, int] | None = None,
                   connector: str | None = None) -> None:
    """:func:`check_identity`, and one UsageError (exit 2) naming the first changed topic, how many, and the fix."""
    changed = check_identity(session, topics, view, positions, ends)
    if not changed:
        return
    first = changed[0]
    more = f" (and {len(changed) - 1} more: {', '.join(c.topic for c in changed[1:])})" if len(changed) > 1 else ""
    raise UsageError(f"topic {first.topic}", f"recreated since its replication started: {first.why}{more}; MM2 would resume "
                     "from the old topic's offsets and skip the new topic's records", reset_fix([c.topic for c in changed], connector))


def replicating_changes(view: LedgerView, identities: Mapping[str, dict[str, Any]], waves: Mapping[str, str | None]) -> list[Change]:
    """What ``connectors apply`` records: ``replicating`` with the identity for every topic the ledger does not
    hold yet, and the identity alone (state kept) for a recorded topic that has none."""
    out = []
    for t, ident in sorted(identities.items()):
        rec = view.get("topic", t)
        if rec is None:
            out.append(Change("topic", t, "replicating", wave=waves.get(t), identity=ident))
        elif not rec.identity:
            out.append(Change("topic", t, rec.state, wave=rec.wave or waves.get(t), identity=ident,
                              detail="identity recorded"))
    return out
