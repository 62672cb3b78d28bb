"""Consolidation: two self-managed clusters retired into one target, each migration its own flow and worker.

Clusters: the pair's ``source`` (migration ``ops``, on the pair's worker) and the ``peer`` (migration ``billing``,
on a worker of its own) into the one ``target``. Both sources hold a topic ``shared.events`` and a consumer
group ``shared-audit``: replicated as selected, the two topics would interleave into one target topic and the
two groups overwrite each other's offsets. ``topology check`` refuses that (exit 2, one line naming both sources
and the setting that clears it; every collision refusal is exit 2, offline or found on the clusters); the
billing flow then maps its topic to ``billing.shared.events`` (``topic_renames``: the policy JAR's rename,
followed by validation) and leaves the group out (``groups_exclude``: MM2 renames no group), after which the
check is clean and both flows replicate, translate offsets and validate to a match on their own. Cleaning the
ops migration up leaves billing's connectors, MM2 topics and the shared heartbeats topic alone.
"""

from __future__ import annotations

from collections.abc import Callable

from ...config.migration import MigrationSpec
from ...kafka import names
from ...runbook.cleanup import delete, leftovers
from ..result import StepFailed
from . import steps
from .context import FlowCase, TopologyContext

SHARED_TOPIC, SHARED_GROUP = "shared.events", "shared-audit"
#: topic -> (partitions, records) on each source
OPS_TOPICS = {"ops.orders": (3, 1500), SHARED_TOPIC: (2, 400)}
BILLING_TOPICS = {"billing.invoices": (3, 1200), SHARED_TOPIC: (2, 300)}
RENAMED = "billing.shared.events"

_FAST = dict(replication_factor=1, internal_replication_factor=1, refresh_topics_interval_seconds=5,
             refresh_groups_interval_seconds=5, emit_checkpoints_interval_seconds=2,
             sync_group_offsets_interval_seconds=2, emit_heartbeats_interval_seconds=2, tasks_max=2)


def flows(rf: int) -> dict[str, FlowCase]:
    """The two migrations as first written: both select ``shared.*`` topics and groups (the collision)."""
    fast = {**_FAST, "replication_factor": rf, "internal_replication_factor": rf}
    ops = MigrationSpec(name="ops", topics=[r"ops\..*", r"shared\..*"], groups=["ops-.*", "shared-.*"], **fast)
    billing = MigrationSpec(name="billing", topics=[r"billing\..*", r"shared\..*"], groups=["billing-.*", "shared-.*"], **fast)
    return {"ops": FlowCase("ops", "source", "target", ops),
            "billing": FlowCase("billing", "peer", "target", billing, flow_worker="billing")}


def produce(ctx: TopologyContext) -> str:
    n_ops = steps.create_and_fill(ctx, "source", OPS_TOPICS, "ops")
    n_billing = steps.create_and_fill(ctx, "peer", BILLING_TOPICS, "billing")
    steps.commit_half(ctx, "source", "ops-fulfilment", "ops.orders")
    steps.commit_half(ctx, "peer", "billing-ledger", "billing.invoices")
    steps.commit_half(ctx, "source", SHARED_GROUP, SHARED_TOPIC)
    steps.commit_half(ctx, "peer", SHARED_GROUP, SHARED_TOPIC)
    return (f"source: {n_ops:,} records in {', '.join(OPS_TOPICS)}; peer: {n_billing:,} in {', '.join(BILLING_TOPICS)}; "
            f"groups ops-fulfilment, billing-ledger, and {SHARED_GROUP} on both sources")


def collision_refused(ctx: TopologyContext) -> str:
    a, b = ctx.flows["ops"], ctx.flows["billing"]
    code, doc, err = ctx.cli("topology", "check", "--config", str(ctx.flow_file(a)), "--config", str(ctx.flow_file(b)))
    if code != 2:
        raise StepFailed(f"topology check exited {code}, not 2 (a collision refused): {err or doc.get('verdict')}")
    text = " ".join(str(r) for r in doc.get("rows", []))
    src, peer = ctx.endpoint("source").bootstrap_servers, ctx.endpoint("peer").bootstrap_servers
    missing = [w for w in (SHARED_TOPIC, SHARED_GROUP, src, peer) if w not in text]
    if missing:
        raise StepFailed(f"topology check's rows do not name {', '.join(missing)}: {text[:400]}")
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    if len(lines) != 1 or not all(w in lines[0] for w in (src, peer, "migration.")):
        raise StepFailed(f"topology check's refusal is not one line naming both sources and the setting: {err[:400]}")
    problems = [r for r in doc.get("rows", []) if r.get("row") == "problem"]
    return (f"exit 2, {len(problems)} problem(s): topic {SHARED_TOPIC} and group {SHARED_GROUP} come from both "
            f"{src} and {peer}; nothing applied")


def _preflight_row(ctx: TopologyContext, me: FlowCase, other: FlowCase) -> dict:
    """``msk-migrate preflight --config ME --with-config OTHER``'s row for the other migrations into the target."""
    from ...runbook.preflight import OTHER_MIGRATIONS

    code, doc, err = ctx.cli("preflight", "--config", str(ctx.flow_file(me)), "--with-config", str(ctx.flow_file(other)))
    rows = [c for c in doc.get("checks", []) if c.get("name") == OTHER_MIGRATIONS]
    if not rows:
        raise StepFailed(f"preflight (exit {code}) has no '{OTHER_MIGRATIONS}' row: {err[:300]}")
    return rows[0]


def preflight_refuses(ctx: TopologyContext) -> str:
    """Preflight of ops, told about billing, fails its row naming both sources (before anything is applied)."""
    row = _preflight_row(ctx, ctx.flows["ops"], ctx.flows["billing"])
    src, peer = ctx.endpoint("source").bootstrap_servers, ctx.endpoint("peer").bootstrap_servers
    if row["status"] != "fail" or src not in row["detail"] or peer not in row["detail"] or SHARED_TOPIC not in row["detail"]:
        raise StepFailed(f"preflight's row: {row}")
    return f"preflight --with-config billing: '{row['name']}' fail: {row['detail'][:160]}"


def names_mapped(ctx: TopologyContext) -> str:
    b = ctx.flows["billing"]
    b.spec = b.spec.model_copy(update={"topic_renames": {SHARED_TOPIC: RENAMED},
                                       "groups_exclude": [*b.spec.groups_exclude, "shared-.*"]})
    code, doc, err = ctx.cli("topology", "check", "--config", str(ctx.flow_file(ctx.flows["ops"])), "--config", str(ctx.flow_file(b)))
    if code != 0:
        raise StepFailed(f"topology check exited {code} after the mapping: {err or doc.get('rows')}")
    kinds = sorted({r.get("kind") for r in doc.get("rows", []) if r.get("row") == "relation"})
    row = _preflight_row(ctx, ctx.flows["ops"], b)
    if row["status"] != "ok":
        raise StepFailed(f"preflight's row after the mapping: {row}")
    return (f"billing maps {SHARED_TOPIC} -> {RENAMED} (topic_renames) and leaves {SHARED_GROUP} out (groups_exclude); "
            f"topology check exit 0, {doc.get('verdict')} ({', '.join(map(str, kinds))}); preflight's row ok")


def _each(fn: Callable[[TopologyContext, FlowCase], str]) -> Callable[[TopologyContext], str]:
    return lambda ctx: "; ".join(f"{f.label}: {fn(ctx, f)}" for f in ctx.flows.values())


def validate(ctx: TopologyContext) -> str:
    ops = steps.validate_flow(ctx, ctx.flows["ops"], list(OPS_TOPICS))
    billing = steps.validate_flow(ctx, ctx.flows["billing"], list(BILLING_TOPICS))
    return f"ops: {ops}; billing: {billing}"


def nothing_interleaved(ctx: TopologyContext) -> str:
    """Each source's shared.events went to its own target topic: counts equal, record for record."""
    src = steps.topic_counts(ctx, "source", OPS_TOPICS)
    peer = steps.topic_counts(ctx, "peer", BILLING_TOPICS)
    tgt = steps.topic_counts(ctx, "target", [*OPS_TOPICS, "billing.invoices", RENAMED])
    pairs = {("source", t, t): (src[t], tgt.get(t)) for t in OPS_TOPICS}
    pairs.update({("peer", t, RENAMED if t == SHARED_TOPIC else t): (peer[t], tgt.get(RENAMED if t == SHARED_TOPIC else t))
                  for t in BILLING_TOPICS})
    ctx.result.topics = [{"flow": "ops" if r == "source" else "billing", "cluster": r, "source topic": s, "target topic": t,
                          "source records": a, "target records": b} for (r, s, t), (a, b) in pairs.items()]
    bad = [f"{r}:{s} {a} -> {t} {b}" for (r, s, t), (a, b) in pairs.items() if a != b]
    if bad:
        raise StepFailed("record counts differ: " + "; ".join(bad))
    return (f"target {SHARED_TOPIC} {tgt[SHARED_TOPIC]} (source's only), {RENAMED} {tgt[RENAMED]} (peer's only); "
            f"{len(pairs)} topic pairs equal")


def cleanup_one(ctx: TopologyContext) -> str:
    """Retire the ops migration: its connectors gone, its leftovers deleted; billing keeps replicating."""
    ops, billing = ctx.flows["ops"], ctx.flows["billing"]
    removed = steps.remove_connectors(ctx, ops)
    session = ctx.session(ops)
    billing_mm2 = [t for t in names.flow_internal_topics("peer", "target", billing.spec.internal_namespace)
                   if t in session.target.topics(refresh=True)]  # billing's, as they are before ops' cleanup
    items = leftovers(session, include_worker=False)
    delete(session.target, items)
    deleted = sorted(i.name for i in items if i.kind != "kept")
    kept = [i for i in items if i.kind == "kept"]
    topics = steps.wait(lambda: (t := set(session.target.topics(refresh=True))).isdisjoint(deleted) and t, 30, 1) \
        or set(session.target.topics(refresh=True))
    gone = [t for t in billing_mm2 if t not in topics]
    if gone or not billing_mm2:
        raise StepFailed(f"billing's MM2 topics deleted by ops' cleanup: {gone}" if gone else "billing had no MM2 topics to keep")
    if names.HEARTBEATS_TOPIC not in topics or not any(i.name == names.HEARTBEATS_TOPIC for i in kept):
        raise StepFailed(f"the shared {names.HEARTBEATS_TOPIC} topic was not kept (billing's heartbeats still arrive there)")
    running = [r for r in ctx.connect(billing).connectors() if r.startswith("billing-")]
    states = {n: ctx.connect(billing).status(n)["connector"]["state"] for n in running}
    if not running or any(s != "RUNNING" for s in states.values()):
        raise StepFailed(f"billing's connectors after ops' cleanup: {states}")
    steps.create_and_fill(ctx, "peer", {"billing.late": (1, 50)}, "billing")  # billing still replicates
    steps.wait(lambda: steps.topic_counts(ctx, "target", ["billing.late"]).get("billing.late") == 50, ctx.timeout, 2)
    if steps.topic_counts(ctx, "target", ["billing.late"]).get("billing.late") != 50:
        raise StepFailed("billing stopped replicating after ops' cleanup (billing.late did not arrive)")
    return (f"ops: {len(removed)} connector(s) removed, deleted {', '.join(deleted)}; kept {names.HEARTBEATS_TOPIC} "
            f"({kept[0].why}); billing: {len(running)} connector(s) RUNNING, its MM2 topics {', '.join(billing_mm2)} in place, "
            "a new topic still arrives")


PLAN: list[tuple[str, Callable[[TopologyContext], str]]] = [
    ("environment up", steps.environment_up),
    ("produce on both sources", produce),
    ("collision refused", collision_refused),
    ("preflight refuses it too", preflight_refuses),
    ("names mapped", names_mapped),
    ("apply both flows", _each(steps.apply_flow)),
    ("lag until in sync", _each(steps.in_sync)),
    ("offsets translated", _each(steps.offsets_translated)),
    ("validate each flow", validate),
    ("nothing interleaved", nothing_interleaved),
    ("cleanup of one migration", cleanup_one),
]
