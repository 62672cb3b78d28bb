"""``cutover check``: one readiness gate for moving consumer groups to the target.

Ready when every condition holds; each row carries its evidence:

1. connectors: the flow's connectors AND their tasks RUNNING (a connector with 0 tasks is not ready);
2. lag: the group's topics within ``--max-records`` / ``--max-age`` (see :mod:`.lag`);
3. offsets: translated offsets on the target never ahead of the source, re-delivery within ``--max-redelivery``;
4. inactive: the group has no member on the target yet (MM2 only writes offsets of inactive groups);
5. validation: a report (path or s3://) that finished within ``--max-report-age``, whose verdict is ``match``,
   that covers every topic the groups consume, was read from the flow's clusters (cluster ids), compared at
   least one record in every partition of those topics that holds records, and whose window ends after the
   groups' last committed record (the record before each committed offset; offsets-snapshot reports: the
   snapshot's end at or past each committed offset). Each failing condition is named;
6. schemas in sync (when the gate names the registries and the groups' topics carry schema'd records): every
   version of the source registry on the target under the same id (:mod:`.schema_sync`).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .. import store
from ..access.admin import AdminSession
from ..connect_api.apply import connector_problems, status_rows
from ..errors import UsageError
from ..outcome import Outcome, View, col
from .group_offsets import require_known_groups, verify_offsets
from .lag import measure_lag
from .session import MigrationSession

if TYPE_CHECKING:
    from ..schemas.client import RegistryClient


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


@dataclass(frozen=True)
class Gate:
    """What ``cutover check`` is asked: the groups about to move and the bounds they must be within."""

    groups: list[str]
    max_records: int = 0  #: lag bound per partition
    max_age: float | None = None  #: replication latency bound, seconds (None: not checked)
    max_redelivery: int = 1000  #: records a moved group may see again, per partition
    report: str | None = None  #: the validation report (path, directory or s3://)
    max_report_age_s: float = 3600.0
    certificate: str | None = None  #: the offset certificate of ``offsets sync`` (path, directory or s3://)
    #: (source, target) schema registries: "schemas in sync" is required for groups whose topics carry schema'd records
    registries: tuple[RegistryClient, RegistryClient] | None = None


def cutover_check(s: MigrationSession, gate: Gate) -> list[Condition]:
    """Every condition of the readiness gate for ``gate.groups``, each with its evidence."""
    source, target, client, migration = s.source, s.target, s.connect(), s.migration
    groups, max_records, max_redelivery = gate.groups, gate.max_records, gate.max_redelivery
    require_known_groups(groups, source.groups(), "source")
    conds: list[Condition] = []

    rows = status_rows(client, list(migration.connector_names().values()))
    problems = connector_problems(rows)
    conds.append(Condition("connectors and tasks RUNNING", not problems,
                           "; ".join(problems) if problems else
                           ", ".join(f"{r['name']} {r['tasks_running']}/{r['tasks']}" for r in rows)))

    topics = sorted({t for _, comm in source.committed_many(groups) for t, _ in comm})
    lag = measure_lag(s, topics, max_records, gate.max_age)
    behind = [r for r in lag if r.status != "in-sync"]
    conds.append(Condition("lag within thresholds", bool(lag) and not behind,
                           f"{len(lag)} partition(s) of {', '.join(topics) or 'no topic'}; "
                           + (f"{len(behind)} behind, worst {max(r.behind for r in behind)} records" if behind
                              else f"all within {max_records} record(s)")))

    offs = verify_offsets(s, groups)
    bad = [r for r in offs if r.status != "ok" or (r.redelivery or 0) > max_redelivery]
    worst = max((r.redelivery or 0 for r in offs), default=0)
    conds.append(Condition("translated offsets", bool(offs) and not bad,
                           f"{len(offs)} partition(s); " + (
                               f"{len(bad)} not ready (e.g. {bad[0].topic}[{bad[0].partition}] {bad[0].status}, "
                               f"re-delivery {bad[0].redelivery})" if bad else
                               f"never ahead, re-delivery at most {worst} (limit {max_redelivery})")))

    active = target.group_members_many(groups)
    busy = [g for g, m in active.items() if m]
    conds.append(Condition("group inactive on target", not busy,
                           f"active on target: {', '.join(busy)}" if busy else f"{', '.join(groups)}: no member on the target"))

    if gate.registries is not None:
        from .schema_sync import NAME, schemas_in_sync

        sync = schemas_in_sync(*gate.registries, topics)
        if sync is not None:
            conds.append(Condition(NAME, sync.ok, sync.evidence))
    if gate.certificate:  # the proof of `offsets sync` (offset_translation.certificate)
        from ..offset_translation.certificate import check_certificates

        conds.append(Condition("offset certificate", *check_certificates(gate.certificate, groups, target)))
    if gate.report:
        committed: dict[tuple[str, int], int] = {}
        for g in groups:
            for tp, off in source.committed(g).items():
                committed[tp] = max(off, committed.get(tp, 0))
        evidence = GateEvidence(topics, committed, source.cluster_id(), target.cluster_id(),
                                last_consumed_timestamps(source, committed))
        from .proof_mark import validation_evidence  # beside this module: it reads Condition and GateEvidence from here

        # A batch report or a proof mark (validate --follow) at or past the commit points: the row names which.
        conds.append(validation_evidence(gate.report, gate.max_report_age_s, evidence))
    else:
        conds.append(Condition("validation report", False, "none given (pass --validation-report PATH|s3://...)"))
    return conds


def cutover(s: MigrationSession, gate: Gate) -> Outcome:
    """``msk-migrate cutover check``: exit 0 ready (every condition holds), 1 not ready (the failing ones named)."""
    conds = cutover_check(s, gate)
    ready = all(c.ok for c in conds)
    unmet = "; ".join(c.name for c in conds if not c.ok)
    return Outcome("cutover check", "ready" if ready else "not-ready", 0 if ready else 1, list(conds), s.talked_to(),
                   extra={"ready": ready, "groups": list(gate.groups), "conditions": [c.to_dict() for c in conds]},
                   views=[View(f"cutover check: {', '.join(gate.groups)}", [
                       col("condition", "name"), col("result", lambda c: "ok" if c.ok else "NOT READY", ok=lambda c: c.ok),
                       col("evidence", "evidence")])],
                   notes=["[green]ready to move[/]" if ready else f"[red]not ready: {unmet}[/]"])
