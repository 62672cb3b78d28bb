"""Steps every topology rehearsal shares, one function each, parameterised by the flow they act on. Each calls
what the operator command it stands for calls and returns its result row; a broken promise raises
:class:`~msk_migrate.rehearsal.result.StepFailed`."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ...access.admin import AdminSession
from ...access.offsets import end_offsets, partitions
from ...connect_api.apply import apply, status_rows
from ...connect_api.rest import ConnectClient
from ...connectors.render import render_connectors
from ...kafka.selection import topic_selection
from ...runbook.group_offsets import verify_offsets
from ...runbook.lag import measure_lag
from ..demo import commit, retrying, wait
from ..result import StepFailed
from .context import FlowCase, TopologyContext

#: Records of each demo topic are this many bytes of value (small: CI size is about the steps, not volume).
VALUE_BYTES = 200


def environment_up(ctx: TopologyContext) -> str:
    """Empty clusters of the topology's shape, the pair's worker, and a worker of its own for every other flow."""
    ctx.say("wiping the previous rehearsal (a rehearsal starts from empty clusters)")
    ctx.env.down(wipe=True)
    ctx.result.status = ctx.env.up()
    roles = ctx.env.shape().roles
    for role in roles:
        ctx.apps.secure(ctx.env.client_config(role))
    workers = []
    for flow in ctx.flows.values():
        if flow.flow_worker is None:
            flow.worker = ctx.env.worker_spec()
        else:
            flow.worker = ctx.env.ensure_flow_worker(flow.flow_worker, flow.source_role, flow.target_role)
        flow.client = ConnectClient(f"http://127.0.0.1:{flow.worker.rest_port}")
        workers.append(f"{flow.label} on {flow.client.url} (group {flow.worker.group_id})")
    ctx.result.status = ctx.env.status()
    clusters = ", ".join(f"{r} {ctx.endpoint(r).bootstrap_servers}" for r in roles)
    return f"{clusters}; workers: {'; '.join(workers)}"


def create_and_fill(ctx: TopologyContext, role: str, topics: dict[str, tuple[int, int]], tag: str) -> int:
    """Create ``topics`` (name -> (partitions, records)) on ``role``'s cluster and write their keyed records
    (key ``<tag>-<topic>-<i>``, a header naming the writer); returns the records written."""
    ep = ctx.endpoint(role)
    admin = AdminClient(ctx.apps.config(ep.bootstrap_servers))
    rf = ctx.env.shape().side(role).replication_factor

    def create() -> None:
        futs = admin.create_topics([NewTopic(t, p, rf) for t, (p, _) in topics.items()])
        for f in futs.values():
            f.result(timeout=30)

    retrying(f"create {', '.join(topics)} on {role}", create)
    p = Producer(ctx.apps.config(ep.bootstrap_servers, **{"enable.idempotence": True, "linger.ms": 20}))
    written = 0
    for topic, (_parts, n) in topics.items():
        for i in range(n):
            p.produce(topic, key=f"{tag}-{topic}-{i}".encode(), value=bytes([i % 251]) * VALUE_BYTES,
                      headers=[("writer", tag.encode())])
            written += 1
            if i % 1000 == 999:
                p.flush(30)
    if p.flush(60):
        raise StepFailed(f"{role}: records still unsent after 60 s")
    return written


def create_and_fill_existing(ctx: TopologyContext, role: str, topic: str, n: int, tag: str) -> int:
    """``n`` more keyed records into the existing ``topic`` on ``role``'s cluster (producers that moved there)."""
    p = Producer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{"enable.idempotence": True, "linger.ms": 20}))
    for i in range(n):
        p.produce(topic, key=f"{tag}-{topic}-{i}".encode(), value=bytes([i % 251]) * VALUE_BYTES, headers=[("writer", tag.encode())])
    if p.flush(60):
        raise StepFailed(f"{role}: records still unsent after 60 s")
    return n


def commit_half(ctx: TopologyContext, role: str, group: str, topic: str) -> dict[int, int]:
    """``group`` commits half of ``topic``'s log on ``role``'s cluster (as a consumer that read half and stopped)."""
    ep = ctx.endpoint(role)
    c = Consumer(ctx.apps.config(ep.bootstrap_servers, **{"group.id": group, "enable.auto.commit": False}))
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        offsets = []
        for q in parts:
            _lo, hi = c.get_watermark_offsets(TopicPartition(topic, q), timeout=10)
            offsets.append(TopicPartition(topic, q, hi // 2))
        commit(c, offsets)
        return {tp.partition: tp.offset for tp in offsets}
    finally:
        c.close()


def apply_flow(ctx: TopologyContext, flow: FlowCase) -> str:
    src, tgt = ctx.endpoints(flow)
    configs = render_connectors(src, tgt, flow.spec)
    client = ctx.connect(flow)
    apply(client, configs, wait=True, timeout=120, progress=ctx.say)
    rows = status_rows(client, list(configs))
    return ", ".join(f"{r['name']} {r['tasks_running']}/{r['tasks']}" for r in rows) + f" on {client.url}"


def in_sync(ctx: TopologyContext, flow: FlowCase) -> str:
    session = ctx.session(flow)

    def synced():
        rows = measure_lag(session)
        ctx.say(f"{flow.label}: {sum(r.behind for r in rows):,} record(s) behind")
        return rows if rows and all(r.status == "in-sync" for r in rows) else None

    rows = wait(synced, ctx.timeout, 2)
    if not rows:
        raise StepFailed(f"{flow.label}: not in sync within {ctx.timeout:.0f} s")
    return f"{len(rows)} partitions in sync, 0 records behind"


def offsets_translated(ctx: TopologyContext, flow: FlowCase) -> str:
    session = ctx.session(flow)
    previous: list[Any] = [None]

    def settled():
        rows = verify_offsets(session)
        current = [r.to_dict() for r in rows]
        done = rows and all(r.status == "ok" for r in rows) and current == previous[0]
        previous[0] = current
        return current if done else None

    rows = wait(settled, 120, flow.spec.sync_group_offsets_interval_seconds + 2)
    if not rows:
        raise StepFailed(f"{flow.label}: offsets not translated within 120 s ({previous[0]})")
    groups = sorted({r["group"] for r in rows})
    return f"{len(rows)} partition(s) of {', '.join(groups)} translated, never ahead"


def topic_counts(ctx: TopologyContext, role: str, topics: Iterable[str]) -> dict[str, int]:
    """Records per topic on ``role``'s cluster (end - start offsets summed; no compaction or transactions here)."""
    ep = ctx.endpoint(role)
    session = AdminSession.for_endpoint(role, ep)
    names = [t for t in topics if t in session.topics(refresh=True)]
    ends = end_offsets(session, partitions(session, names))
    return {t: sum(v for (x, _), v in ends.items() if x == t) for t in names}


def validate_flow(ctx: TopologyContext, flow: FlowCase, topics: list[str]) -> str:
    """The validation job (native engine) over ``topics`` of ``flow``, renames followed; a match or the step fails."""
    from ...validation.endpoint import Endpoint
    from ...validation.job import run_validation
    from ...validation.request import ValidationRequest

    src, tgt = ctx.endpoints(flow)
    sel = topic_selection(flow.spec)
    report_dir = ctx.work_dir / f"validation-{flow.label}"
    req = ValidationRequest(source=Endpoint.of(src), target=Endpoint.of(tgt), topics=topics, mode="auto", engine="native",
                            topic_map={t: sel.target_name(t) for t in topics if sel.target_name(t) != t},
                            until_timestamp_ms=int(time.time() * 1000) + 1000, report_dir=str(report_dir))
    report = run_validation(req, progress=ctx.say)
    summary = report.to_dict().get("summary", {})
    records = summary.get("source_records") or summary.get("source_count")
    ctx.figures.setdefault(flow.label, {})["validation"] = {"verdict": report.verdict, "records": records,
                                                            "report": str(report_dir)}
    text = f"{report.verdict}, {records} records of {', '.join(topics)}; report {report_dir / 'report.html'}"
    if report.verdict != "match":
        raise StepFailed(text)
    return text


def remove_connectors(ctx: TopologyContext, flow: FlowCase) -> list[str]:
    """Delete ``flow``'s connectors from its worker (the step before its cleanup); the names deleted."""
    client = ctx.connect(flow)
    ours = [n for n in client.connectors() if n.startswith(f"{flow.spec.name}-")]
    for name in ours:
        client.delete(name)
    wait(lambda: not set(ours) & set(client.connectors()), 60, 1)
    return ours
