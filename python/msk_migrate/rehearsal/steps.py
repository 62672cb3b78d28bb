"""The rehearsal's steps, one function each, in runbook order. Each takes the :class:`.context.RehearsalContext`,
calls the same functions as the operator command it stands for, and returns its result row (a broken
promise raises :class:`.result.StepFailed`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from ..access.admin import AdminSession, TopicConfigs
from ..access.offsets import end_offsets, partitions
from ..connect_api.apply import apply, status_rows
from ..connect_api.rest import ConnectClient
from ..connectors.render import render_connectors, reverse_spec
from ..kafka.mm2_acls import reverse_source_acls
from ..kafka.selection import topic_selection
from ..local.scram import MM2_USER
from ..offset_translation.request import NotReplicatedYet, SyncRequest
from ..offset_translation.sync import sync_group
from ..runbook.cleanup import delete, leftovers
from ..runbook.cutover import Gate, cutover_check
from ..runbook.group_offsets import verify_offsets
from ..runbook.lag import measure_lag, replicated_positions
from ..runbook.preflight import run_preflight
from ..runbook.proof_mark import NAME as PROOF_MARK
from ..runbook.rollback import apply_rollback, plan
from ..runbook.schema_sync import NAME as SCHEMAS_IN_SYNC
from ..runbook.session import session_of
from ..validation.kafka_meta import synced_config_differences
from . import proof_steps, schema_steps
from .context import RehearsalContext
from .demo import (
    DEMO_GROUPS,
    DEMO_TOPICS,
    MOVED_GROUP,
    MOVED_PRODUCER_RECORDS,
    ROLLBACK_GROUP,
    ROLLBACK_TOPIC,
    SCHEMA_PARTS,
    SCHEMA_TOPICS,
    commit,
    commit_groups,
    produce_demo,
    read_from,
    values_after,
    wait,
)
from .producer_steps import record_group_rolled_back, record_rolled_back, rollback_topics_from_ledger, unfence_for_rollback
from .result import StepFailed
from .schema_demo import commit_schema_group, create_schema_topics, produce_schema_demo, register_demo_schemas, write_moved_avro

TOPICS = list(DEMO_TOPICS)


def environment_up(ctx: RehearsalContext) -> str:
    ctx.say("wiping the previous rehearsal (a rehearsal starts from empty clusters)")
    env = ctx.env
    env.down(wipe=True)
    env.with_schema_registry = False
    env.up()
    ctx.result.status = _registries_up(ctx)
    ctx.source, ctx.target = env.source(), env.target()
    for role in ("source", "target"):
        ctx.apps.secure(env.client_config(role))
    ctx.client = ConnectClient(ctx.result.status["connect"]["url"])
    ctx.registries = env.registry_urls()
    sh = env.shape()
    return (f"source {sh.describe('source')} at {ctx.source.bootstrap_servers}, target {sh.describe('target')} "
            f"at {ctx.target.bootstrap_servers}, worker {ctx.client.url}, registries {ctx.registries.get('source')} -> "
            f"{ctx.registries.get('target')}")


def _registries_up(ctx: RehearsalContext, attempts: int = 3) -> dict[str, Any]:
    """The schema registries, started once the clusters run (``local up --schema-registry`` on the running
    environment): on a busy 2-core machine a registry booting beside the brokers can miss its start-up wait,
    so a registry that did not answer in time is started again."""
    ctx.env.with_schema_registry = True
    for attempt in range(attempts):
        try:
            return ctx.env.up()
        except RuntimeError as exc:
            if "registry" not in str(exc) or attempt == attempts - 1:
                raise
            ctx.say(f"{str(exc).splitlines()[0]}: starting it again")
    raise AssertionError("unreachable")


def produce_demo_data(ctx: RehearsalContext) -> str:
    src, tgt = ctx.clusters()
    produce_demo(ctx.apps, src.bootstrap_servers, ctx.say, ctx.env.shape().source.replication_factor)
    commit_groups(ctx.apps, src.bootstrap_servers)
    registry, _ = schema_steps.registries(ctx)
    create_schema_topics(ctx.apps, src.bootstrap_servers, ctx.env.shape().source.replication_factor)
    registered = register_demo_schemas(registry.url)
    ctx.result.schemas["registered"] = registered
    written = produce_schema_demo(ctx.apps, src.bootstrap_servers, registry.url, ctx.say)
    commit_schema_group(ctx.apps, src.bootstrap_servers, MOVED_GROUP)
    ctx.session = session_of(src, tgt, ctx.migration, ctx.env.worker_spec(), ctx.connect())
    ids = sorted(i for v in registered["ids"].values() for i in v)
    return (f"{sum(n for _, n, _ in DEMO_TOPICS.values()):,} records in {len(DEMO_TOPICS)} topics, groups {', '.join(DEMO_GROUPS)}; "
            f"schema'd: {', '.join(f'{t} {n}' for t, n in written.items())} (Avro, JSON Schema, Protobuf; keys too on "
            f"{', '.join(t for t, parts in SCHEMA_PARTS.items() if 'key' in parts)}) read by {MOVED_GROUP}; "
            f"{len(registered['ids'])} subjects on the source registry, ids {', '.join(map(str, ids))} ({registered['gaps']} gap(s))")


def preflight(ctx: RehearsalContext) -> str:
    rep = run_preflight(ctx.migration_session())
    bad = [c for c in rep.checks if c.status == "fail"]
    if bad:
        raise StepFailed(f"{bad[0].name}: {bad[0].detail}")
    return f"{len(rep.checks)} checks, {sum(c.status == 'warn' for c in rep.checks)} warning(s)"


def apply_connectors(ctx: RehearsalContext) -> str:
    src, tgt = ctx.clusters()
    configs = render_connectors(src, tgt, ctx.migration)
    apply(ctx.connect(), configs, wait=True, timeout=120, progress=ctx.say)
    ctx.result.connectors = status_rows(ctx.connect(), list(configs))
    return ", ".join(f"{r['name']} {r['tasks_running']}/{r['tasks']}" for r in ctx.result.connectors)


def lag_until_in_sync(ctx: RehearsalContext) -> str:
    S, T = ctx.sessions()

    def in_sync():
        rows = measure_lag(ctx.migration_session())
        ctx.say(f"lag: {sum(r.behind for r in rows):,} record(s) behind")
        return rows if rows and all(r.status == "in-sync" for r in rows) else None

    rows = wait(in_sync, ctx.timeout, 2)
    if not rows:
        raise StepFailed("not in sync within the timeout")
    ctx.result.topics = topic_rows(ctx, S, T)
    return f"{len(rows)} partitions in sync, 0 records behind"


def topic_rows(ctx: RehearsalContext, S: AdminSession, T: AdminSession) -> list[dict[str, Any]]:
    """Per topic: records on both sides and the synced topic configs that differ (validation's comparison)."""
    sel = topic_selection(ctx.migration)
    targets = {t: sel.target_name(t) for t in TOPICS}
    s_cfg, t_cfg = S.topic_configs(TOPICS), T.topic_configs(list(targets.values()))
    s_end, t_end = end_offsets(S, partitions(S, TOPICS)), end_offsets(T, partitions(T, list(targets.values())))
    payments = DEMO_TOPICS["shop.payments"][1]
    rows = []
    for t, tt in targets.items():
        src_records = sum(v for (x, _), v in s_end.items() if x == t)
        if t == "shop.payments":  # markers and the aborted batch occupy source offsets but are not copied
            src_records = payments - payments // 10
        # a topic missing on the target differs in every synced config
        diffs = synced_config_differences(s_cfg[t], t_cfg.get(tt) or TopicConfigs(tt, 0))
        rows.append({"topic": t, "target_topic": tt, "source_records": src_records,
                     "target_records": sum(v for (x, _), v in t_end.items() if x == tt),
                     "synced_configs": sorted(s_cfg[t].overrides), "config_differences": diffs})
    return rows


def offsets_translated(ctx: RehearsalContext) -> str:
    previous: list[Any] = [None]

    def settled():
        rows = verify_offsets(ctx.migration_session())
        ok = sum(r.status == "ok" for r in rows)
        ctx.say(f"waiting for translated offsets to settle: {ok}/{len(rows)} partitions translated")
        current = [r.to_dict() for r in rows]
        done = rows and ok == len(rows) and current == previous[0]
        previous[0] = current
        return current if done else None

    rows = wait(settled, 120, ctx.migration.sync_group_offsets_interval_seconds + 2)
    ctx.result.offsets = rows or previous[0] or []
    if not rows:
        raise StepFailed("offsets not translated within 120 s")
    return f"{len(rows)} partitions, never ahead, re-delivery at most {max(r['redelivery'] for r in rows)}"


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Send file descriptor 2 (the JVM's and librdkafka's start-up lines) to ``path`` for a while."""
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _validate(ctx: RehearsalContext, reverse: bool) -> str:
    from ..validation.endpoint import Endpoint
    from ..validation.job import run_validation
    from ..validation.request import SchemaRegistries, ValidationRequest

    s, t = ctx.clusters()
    src, tgt = (t, s) if reverse else (s, t)
    rs, rt = schema_steps.registries(ctx)
    report_dir = ctx.work_dir / ("rehearsal-reverse-validation" if reverse else "rehearsal-validation")
    # the registries of the clusters compared: the record ids are proven on both (reverse: target -> source)
    regs = SchemaRegistries(source=rt.url, target=rs.url) if reverse else SchemaRegistries(source=rs.url, target=rt.url)
    req = ValidationRequest(source=Endpoint.of(src), target=Endpoint.of(tgt), topics=[ROLLBACK_TOPIC] if reverse else [*TOPICS, *SCHEMA_TOPICS],
                            mode="auto", until_timestamp_ms=int(time.time() * 1000) + 1000, report_dir=str(report_dir),
                            schema_registry=regs)
    # a secured source's endpoint names its secrets file: read under either role, nothing in os.environ
    with _stderr_to(ctx.logs):
        report = run_validation(req, progress=ctx.say)
    out = {"verdict": report.verdict, "exit_code": report.exit_code,
           "locations": list(getattr(report, "locations", []) or []), "records_compared": _records_compared(report)}
    if reverse:
        ctx.result.reverse_validation = out
    else:
        ctx.result.validation = out
        ctx.report_dir = str(report_dir)
    text = f"{out['verdict']}, {out['records_compared']} records; report {report_dir / 'report.html'}"
    if report.verdict != "match":
        raise StepFailed(text)
    if not reverse:  # the schema'd topics' rows: every id seen resolves identically on both registries
        text += "; schema rows: " + schema_steps.check_schema_rows(ctx, report.to_dict())
    return text


def _records_compared(report: Any) -> int | None:
    data = report.to_dict() if hasattr(report, "to_dict") else {}
    summary = data.get("summary", {})
    return summary.get("source_records") or summary.get("source_count")


def validate(ctx: RehearsalContext) -> str:
    return _validate(ctx, reverse=False)


def validate_in_reverse(ctx: RehearsalContext) -> str:
    return _validate(ctx, reverse=True)


def cutover_ready(ctx: RehearsalContext) -> str:
    """`cutover check` for the moved groups; its validation evidence the proof follower's mark when it runs
    (`--validation-report <mark>`), the batch report otherwise (which stays the audit document either way)."""
    evidence = ctx.proof_mark or ctx.report_dir

    def ready():
        conds = cutover_check(ctx.migration_session(), Gate([MOVED_GROUP, ROLLBACK_GROUP], max_records=0, max_redelivery=100_000,
                                                            report=evidence, max_report_age_s=3600,
                                                            registries=schema_steps.registries(ctx)))
        conds = [c for c in conds if c.name not in ("validation report", PROOF_MARK) or ctx.validate]
        if all(c.ok for c in conds):
            return conds
        ctx.unmet = [c for c in conds if not c.ok]
        return None

    conds = wait(ready, 60, 3)
    if not conds:
        raise StepFailed(f"{ctx.unmet[0].name}: {ctx.unmet[0].evidence}")
    sync = next((c for c in conds if c.name == SCHEMAS_IN_SYNC), None)
    if sync is None:  # the moved group reads schema'd topics: the gate must have asked
        raise StepFailed(f"no '{SCHEMAS_IN_SYNC}' condition although {MOVED_GROUP} reads {', '.join(SCHEMA_TOPICS)}")
    # each schema'd part found from the records, under its producers' strategy (shop.returns' values: no <topic>-value)
    ctx.result.schemas["gate_strategies"] = schema_steps.check_gate_strategies(sync.evidence)
    text = f"ready: {len(conds)} conditions met for {MOVED_GROUP}, {ROLLBACK_GROUP}; {SCHEMAS_IN_SYNC}: {sync.evidence}"
    return f"{text}; {proof_steps.cutover_evidence(ctx, conds)}" if ctx.proof_mark else text


def _again(again: Counter, expected: Counter) -> str:
    """What a moved group read beyond the records after its commit point, told apart: records from before
    the commit point (the placement is too early) and extra copies of later ones (the log holds them twice)."""
    early = sum(n for v, n in again.items() if v not in expected)
    copies = sum(again.values()) - early
    return (f"{sum(again.values())} record(s) re-delivered: {early} from before the commit point, {copies} extra "
            "cop(ies) of records after it")


def move_consumer_groups(ctx: RehearsalContext) -> str:
    """Consumers stop on the source; `offsets sync` places both groups exactly (a certificate each); a
    consumer on the target reads from the committed offsets and must see exactly the source records
    after the commit point: none missing (no gap), none again (0 re-delivered)."""
    S, _T = ctx.sessions()
    src, tgt = ctx.clusters()
    certs = ctx.work_dir / "rehearsal-certificates"
    placed, notes = 0, []
    for g in (MOVED_GROUP, ROLLBACK_GROUP):
        r = sync_group(ctx.migration_session(), SyncRequest(g, "target", exact_only=True, certificate=str(certs)))
        placed += len(r.partitions)
        notes.append(f"{g} {r.certificate['totals']['exact']}/{len(r.partitions)} exact")
    topic = DEMO_GROUPS[MOVED_GROUP][0]
    src_commit = {p: o for (t, p), o in S.committed(MOVED_GROUP).items() if t == topic}
    expected = Counter(values_after(ctx.apps, src.bootstrap_servers, topic, src_commit))
    seen = Counter(read_from(ctx.apps, tgt.bootstrap_servers, MOVED_GROUP, topic))
    missing, again = expected - seen, seen - expected
    if missing:
        raise StepFailed(f"{sum(missing.values())} record(s) after the source commit point missing on the target")
    if again:
        raise StepFailed(f"{_again(again, expected)} on the target (expected 0)")
    return (f"{placed} partitions placed exactly ({', '.join(notes)}; certificates in {certs}); {MOVED_GROUP} on the "
            f"target read {sum(seen.values()):,} records = the {sum(expected.values()):,} after its source commit "
            f"point: 0 re-delivered, no gap")


def move_producers(ctx: RehearsalContext) -> str:
    _S, T = ctx.sessions()
    _src, tgt = ctx.clusters()
    tps = partitions(T, [ROLLBACK_TOPIC])
    before = end_offsets(T, tps)
    # the moved producers register their schema on the TARGET registry (the source's never saw it: rollback copies it back)
    ctx.moved_schema_id = write_moved_avro(ctx.apps, tgt.bootstrap_servers, ROLLBACK_TOPIC, MOVED_PRODUCER_RECORDS,
                                           schema_steps.registries(ctx)[1].url)
    # the rolled-back group consumes part of the new records on the target, then stops
    half = {tp: before[tp] + (end - before[tp]) // 2 for tp, end in end_offsets(T, tps).items()}
    with contextlib.closing(Consumer(ctx.apps.config(tgt.bootstrap_servers, **{"group.id": ROLLBACK_GROUP, "enable.auto.commit": False}))) as c:
        commit(c, [TopicPartition(t, q, o) for (t, q), o in half.items()])
    ctx.rollback_commit = {q: o for (_, q), o in half.items()}
    return (f"{MOVED_PRODUCER_RECORDS:,} Avro records produced on the target {ROLLBACK_TOPIC} (schema id {ctx.moved_schema_id}, "
            f"registered on the target registry); {ROLLBACK_GROUP} read half and stopped")


def reverse_replication(ctx: RehearsalContext) -> str:
    S, T = ctx.sessions()
    _src, tgt = ctx.clusters()
    # On a secured source the operator first grants the reverse flow's ACLs, for the rolled-back topic and group.
    ctx.env.grant_acls("source", f"User:{MM2_USER}", reverse_source_acls(
        tgt.alias, [ROLLBACK_TOPIC], [ROLLBACK_GROUP], ctx.env.worker_spec().offset_storage_topic,
        reverse_spec(ctx.migration, []).internal_namespace))
    # Rollback reads the ledger: the topics whose producers moved (refusing the consumers-only wave); the fence
    # comes off first, since the reverse flow writes into those topics.
    topics = rollback_topics_from_ledger(ctx)
    unfenced = unfence_for_rollback(ctx, topics)
    pl = plan(ctx.migration_session(), topics)
    apply_rollback(ctx.migration_session(), pl, 120, ctx.say)
    record_rolled_back(ctx, topics)
    want = DEMO_TOPICS[ROLLBACK_TOPIC][1] + ctx.straggler_records + MOVED_PRODUCER_RECORDS
    tps = partitions(S, [ROLLBACK_TOPIC])
    wait(lambda: (n := sum(end_offsets(S, tps).values())) >= want and n, 120, 1)
    time.sleep(2)  # nothing more may arrive: the reverse flow copies only what the producers wrote
    got = sum(end_offsets(S, tps).values())
    if got != want:
        raise StepFailed(f"source {ROLLBACK_TOPIC} holds {got:,} records, expected {want:,}")
    # Durable before a group moves: the reverse task's committed offsets reach the target's end, so a task
    # restart from here on re-copies nothing (an at-least-once flow replays what it copied after its last
    # offset commit, and those copies would reach the rolled-back group).
    rev = reverse_spec(ctx.migration, [ROLLBACK_TOPIC]).connector_names()["source"]
    t_end = end_offsets(T, partitions(T, [ROLLBACK_TOPIC]))
    client = ctx.connect()
    if not wait(lambda: all(replicated_positions(client, rev, tgt.alias).get(tp, 0) >= e for tp, e in t_end.items()), 60, 1):
        raise StepFailed(f"{rev}'s committed offsets did not reach the end of {ROLLBACK_TOPIC} on the target within 60 s")
    return (f"rolled back {', '.join(topics)} (the ledger's producers-moved topics; fence removed: {len(unfenced)} ACL(s)); "
            f"{', '.join(pl.reverse)} RUNNING; source {ROLLBACK_TOPIC} holds {got:,} records (no duplicate of the past)")


def roll_a_group_back(ctx: RehearsalContext) -> str:
    """`offsets sync --to source` once the reverse flow copied the group's commit point; a consumer on the
    source reads from the committed offsets and must see exactly the target records after it."""
    src, tgt = ctx.clusters()
    certs = ctx.work_dir / "rehearsal-certificates"

    def placed():
        try:
            return sync_group(ctx.migration_session(), SyncRequest(ROLLBACK_GROUP, "source", exact_only=True,
                                                                   certificate=str(certs / "rollback")))
        except NotReplicatedYet as exc:
            ctx.rollback_wait = str(exc)
            return None

    r = wait(placed, 90, 2)
    if not r:
        raise StepFailed(ctx.rollback_wait or "the reverse flow did not reach the group's commit point")
    after = Counter(values_after(ctx.apps, tgt.bootstrap_servers, ROLLBACK_TOPIC, ctx.rollback_commit))
    seen = Counter(read_from(ctx.apps, src.bootstrap_servers, ROLLBACK_GROUP, ROLLBACK_TOPIC))
    missing, again = after - seen, seen - after
    if missing:
        raise StepFailed(f"{sum(missing.values())} record(s) the producers wrote on the target after the group's "
                         "commit point are missing on the source")
    if again:
        raise StepFailed(f"{_again(again, after)} on the source (expected 0)")
    record_group_rolled_back(ctx, ROLLBACK_GROUP)
    return (f"{len(r.partitions)} partitions placed exactly on the source (certificate in {certs / 'rollback'}); "
            f"{ROLLBACK_GROUP} on the source read {sum(seen.values()):,} records = the {sum(after.values()):,} "
            "written on the target after its commit: 0 re-delivered, no gap")


def cleanup(ctx: RehearsalContext) -> str:
    _S, T = ctx.sessions()
    client = ctx.connect()
    for name in list(client.connectors()):
        client.delete(name)

    def left():
        return leftovers(ctx.migration_session(), include_worker=False)

    items = left()
    delete(T, items)
    remaining = wait(lambda: not left() or None, 20) is None and left()
    if remaining:
        raise StepFailed(f"still on the target: {', '.join(i.name for i in remaining)}")
    return f"connectors deleted; {len(items)} MM2 topic(s)/group(s) deleted from the target"
