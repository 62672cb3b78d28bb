"""``cutover check``: one readiness gate for moving consumer groups to the target.

Ready when every condition holds; each row carries its evidence:

1. connectors: the flow's connectors AND their tasks RUNNING (a connector with 0 tasks is not ready);
2. lag: the group's topics within ``--max-records`` / ``--max-age`` (see :mod:`.lag`);
3. offsets: translated offsets on the target never ahead of the source, re-delivery within ``--max-redelivery``;
4. inactive: the group has no member on the target yet (MM2 only writes offsets of inactive groups);
5. validation: a report (path or s3://) that finished within ``--max-report-age-seconds``, whose verdict is ``match``,
   that covers every topic the groups consume, was read from the flow's clusters (cluster ids), compared at
   least one record in every partition of those topics that holds records, and whose window ends after the
   groups' last committed record (the record before each committed offset; offsets-snapshot reports: the
   snapshot's end at or past each committed offset). Each failing condition is named;
6. schemas in sync (when the gate names the registries and the groups' topics carry schema'd records): every
   version of the source registry on the target under the same id, and every Protobuf message index the topics'
   newest records carry naming a message of the schema the target holds under their id (:mod:`.schema_sync`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..connect_api.apply import connector_problems, status_rows
from ..outcome import Outcome, View, col
from .evidence import Condition, GateEvidence, last_consumed_timestamps
from .group_offsets import require_known_groups, verify_offsets
from .lag import measure_lag
from .proof_mark import validation_evidence
from .session import MigrationSession

if TYPE_CHECKING:
    from ..schemas.client import RegistryClient


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
        from .record_ids import tail_ids
        from .schema_sync import NAME, schemas_in_sync

        # schema'd topics and their subjects from the ids their newest records carry (any subject strategy)
        sync = schemas_in_sync(*gate.registries, topics, tail_ids(source, topics).topics, s.migration.topic_renames)
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
