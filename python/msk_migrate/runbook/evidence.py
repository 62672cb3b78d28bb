"""The evidence a cutover gate weighs: one :class:`Condition` per row, and a batch validation report read as
evidence (:func:`check_validation`) against what the moving groups consumed (:class:`GateEvidence`). Shared by
the consumer gate (:mod:`.cutover`), the proof mark's reading (:mod:`.proof_mark`) and the producer gate
(:mod:`.producers.gate`), none of which imports another for it."""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import asdict, dataclass

from .. import store
from ..access.admin import AdminSession
from ..errors import UsageError


@dataclass
class Condition:
    name: str
    ok: bool
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)


def read_report(location: str) -> dict:
    """The validation report at ``location`` (report.json, its directory, or s3://); anything else: exit 2 naming the option."""
    body = store.document(location, "--validation-report", "report.json").read_bytes("pass the report directory or its report.json")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise UsageError("--validation-report", f"cannot read {location}: {str(exc).splitlines()[0]}",
                         "pass the report.json written by `msk-migrate validate`") from None
    if not isinstance(data, dict) or "verdict" not in data:
        raise UsageError("--validation-report", f"{location} is not a validation report", "pass report.json of `msk-migrate validate`")
    return data


@dataclass
class GateEvidence:
    """What the validation report must cover, measured on the flow's clusters when the gate runs."""

    topics: list[str]  #: every topic the groups consume (their committed offsets on the source)
    committed: dict[tuple[str, int], int]  #: the groups' highest committed offset per partition
    source_cluster_id: str | None
    target_cluster_id: str | None
    last_consumed_ms: dict[tuple[str, int], int]  #: timestamp of the record before each committed offset


def report_problems(rep: dict, ev: GateEvidence) -> list[str]:
    """Each condition the report fails, named: verdict, topics covered, clusters, records compared per
    partition, window end vs the groups' last committed record. Empty = the report is evidence."""
    out: list[str] = []
    if rep.get("verdict") != "match":
        reason = rep.get("verdict_reason")
        out.append(f"verdict {rep.get('verdict')}" + (f" ({reason})" if reason else ""))
    covered = set(rep.get("topics_covered") or [t.get("topic") for t in rep.get("topics", [])])
    missing = [t for t in ev.topics if t not in covered]
    if missing:
        out.append(f"does not cover topic(s) the group consumes: {', '.join(missing)}")
    for role, want in (("source", ev.source_cluster_id), ("target", ev.target_cluster_id)):
        got = (rep.get(role) or {}).get("cluster_id")
        if got is None:
            out.append(f"records no {role} cluster id (written by an older msk-migrate): validate again")
        elif want is not None and got != want:
            out.append(f"comes from another {role} cluster: report {got} ({(rep.get(role) or {}).get('bootstrap_servers')}), "
                       f"flow {want}")
    parts = {(t.get("topic"), p.get("partition")): p for t in rep.get("topics", []) for p in t.get("partitions", [])}
    empty = [f"{t}[{n}]" for (t, n), p in sorted(parts.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0))
             if t in ev.topics and (p.get("source_log") or {}).get("has_records", True) and not p.get("source_count")]
    if empty:
        out.append(f"compared no record in {len(empty)} partition(s) that hold records: {', '.join(empty[:5])}"
                   + (" ..." if len(empty) > 5 else ""))
    win = rep.get("window") or {}
    if win.get("kind") == "offsets":
        def snap_end(tp: tuple[str, int]) -> int:
            return int(((parts.get(tp) or {}).get("source") or {}).get("end_offset") or -1)

        short = [f"{t}[{n}] snapshot end {snap_end((t, n))} < committed {c}"
                 for (t, n), c in sorted(ev.committed.items()) if t in covered and snap_end((t, n)) < c]
        if short:
            out.append("window ends before the group's last commit: " + "; ".join(short[:3]))
    else:
        until = win.get("until_timestamp_ms")
        late = sorted(tp for tp, ts in ev.last_consumed_ms.items() if until is None or ts >= until)
        if late:
            t, n = late[0]
            out.append(f"window ends ({win.get('until')}) before the group's last commit: {t}[{n}] was consumed up to "
                       f"a record of {iso_ms(ev.last_consumed_ms[late[0]])}" + (f" (+{len(late) - 1} more)" if len(late) > 1 else ""))
    return out


def iso_ms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def check_validation(location: str, max_age_s: float, evidence: GateEvidence | None = None) -> Condition:
    rep = read_report(location)
    finished = (rep.get("run") or {}).get("finished_at")
    age = None
    if finished:
        t = dt.datetime.fromisoformat(finished.replace("Z", "+00:00"))
        age = (dt.datetime.now(dt.UTC) - t).total_seconds()
    fresh = age is not None and age <= max_age_s
    problems = report_problems(rep, evidence) if evidence is not None else (
        [] if rep["verdict"] == "match" else [f"verdict {rep['verdict']}"])
    ok = not problems and fresh
    age_text = f"{age / 60:.0f} min old" if age is not None else "no finish time"
    if problems:
        return Condition("validation report", False, f"{'; '.join(problems)}; {age_text}, {location}")
    return Condition("validation report", ok, f"verdict {rep['verdict']}, {age_text} (limit {max_age_s / 60:.0f} min), "
                     f"{rep.get('summary', {}).get('source_records')} record(s) compared, {location}")


def last_consumed_timestamps(source: AdminSession, committed: dict[tuple[str, int], int],
                             timeout: float = 15.0) -> dict[tuple[str, int], int]:
    """Timestamp of the record just before each committed offset (what the group consumed last)."""
    from confluent_kafka import Consumer, TopicPartition

    todo = {tp: c - 1 for tp, c in committed.items() if c > 0}
    if not todo:
        return {}
    consumer = Consumer(source.consumer_config(f"msk-migrate-gate-{time.time_ns()}", **{"auto.offset.reset": "earliest"}))
    consumer.assign([TopicPartition(t, p, o) for (t, p), o in todo.items()])
    out: dict[tuple[str, int], int] = {}
    deadline = time.time() + timeout
    try:
        while len(out) < len(todo) and time.time() < deadline:
            for msg in consumer.consume(100, timeout=0.5):
                tp = (msg.topic(), msg.partition())
                if msg.error() or tp in out or tp not in todo:
                    continue
                out[tp] = msg.timestamp()[1]
                consumer.pause([TopicPartition(*tp)])
    finally:
        consumer.close()
    return out
