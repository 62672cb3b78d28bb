"""Fan-out: one source into two targets (two regions or accounts), each its own flow and worker, each proven on
its own; a rollback from one target while the other keeps replicating.

Clusters: the pair's ``source`` into the pair's ``target`` (migration ``east``, on the pair's worker) and into the
``peer`` (migration ``west``, on a worker of its own whose home is the peer). ``topology check`` names the
relation fan-out and refuses a third flow whose target is its own source (bad input, exit 2). Both flows
replicate, translate offsets and validate to a match. Then east's producers move to the target and are rolled
back (``rollback apply``: east's forward flow excludes the topic, its reverse flow copies the target's new records
to the source), while west keeps replicating: the rolled-back records reach the peer too, and west validates
to a match again over the source's whole topic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from ...config.migration import MigrationSpec
from ...runbook.rollback import apply_rollback, plan
from ..result import StepFailed
from . import steps
from .consolidate import _FAST, _each
from .context import FlowCase, TopologyContext

TOPIC, GROUP = "shop.orders", "shop-billing"
TOPICS = {TOPIC: (3, 1500), "shop.events": (2, 600)}
MOVED_RECORDS = 300  #: written on the target by the moved producers, then rolled back


def flows(rf: int) -> dict[str, FlowCase]:
    fast = {**_FAST, "replication_factor": rf, "internal_replication_factor": rf}
    east = MigrationSpec(name="east", topics=[r"shop\..*"], groups=["shop-.*"], **fast)
    west = MigrationSpec(name="west", topics=[r"shop\..*"], groups=["shop-.*"], **{**fast, "replication_factor": 1,
                                                                                     "internal_replication_factor": 1})
    return {"east": FlowCase("east", "source", "target", east),
            "west": FlowCase("west", "source", "peer", west, flow_worker="west")}


def produce(ctx: TopologyContext) -> str:
    n = steps.create_and_fill(ctx, "source", TOPICS, "shop")
    steps.commit_half(ctx, "source", GROUP, TOPIC)
    return f"source: {n:,} records in {', '.join(TOPICS)}; group {GROUP} read half of {TOPIC}"


def topology_checked(ctx: TopologyContext) -> str:
    east, west = ctx.flows["east"], ctx.flows["west"]
    files = [str(ctx.flow_file(east)), str(ctx.flow_file(west))]
    code, doc, err = ctx.cli("topology", "check", "--config", files[0], "--config", files[1])
    kinds = sorted({str(r.get("kind")) for r in doc.get("rows", []) if r.get("row") == "relation"})
    if code != 0 or "fan-out" not in kinds:
        raise StepFailed(f"topology check exited {code} with relations {kinds}: {err or doc.get('rows')}")
    # a third flow whose target is its own source: bad input, before any connection
    loop = FlowCase("loopback", "source", "source", east.spec.model_copy(update={"name": "loopback"}))
    src = ctx.endpoint("source")
    code2, _doc2, err2 = ctx.cli("topology", "check", "--config", files[0], "--config", str(_aliased(ctx.flow_file(loop))))
    if code2 != 2 or "target.bootstrap_servers" not in err2 or len(err2.splitlines()) != 1:
        raise StepFailed(f"a fan-out to its own source was not refused as bad input (exit {code2}): {err2[:300]}")
    return f"exit 0, relation {', '.join(kinds)}; a flow into its own source {src.bootstrap_servers}: exit 2, '{err2}'"


def _aliased(path: Path) -> Path:
    """The loopback flow file with distinct aliases (MM2 refuses one alias on both sides before the topology
    check could): the source's cluster under the target alias ``again``, written as ``localhost`` rather than
    127.0.0.1 (another bootstrap string of the same cluster: the check tells it by the cluster id it reads)."""
    doc = yaml.safe_load(path.read_text())
    doc["target"]["alias"] = "again"
    doc["target"]["bootstrap_servers"] = doc["target"]["bootstrap_servers"].replace("127.0.0.1", "localhost")
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def validate(ctx: TopologyContext) -> str:
    east = steps.validate_flow(ctx, ctx.flows["east"], list(TOPICS))
    west = steps.validate_flow(ctx, ctx.flows["west"], list(TOPICS))
    return f"east: {east}; west: {west}"


def rollback_from_one_target(ctx: TopologyContext) -> str:
    """east's producers move to the target and are rolled back; west keeps replicating the source."""
    east = ctx.flows["east"]
    before = steps.topic_counts(ctx, "source", [TOPIC])[TOPIC]
    steps.create_and_fill_existing(ctx, "target", TOPIC, MOVED_RECORDS, "moved")
    session = ctx.session(east)
    pl = plan(session, [TOPIC])
    apply_rollback(session, pl, 120, ctx.say)
    want = before + MOVED_RECORDS
    got = steps.wait(lambda: (n := steps.topic_counts(ctx, "source", [TOPIC])[TOPIC]) >= want and n, ctx.timeout, 2)
    if got != want:
        raise StepFailed(f"source {TOPIC} holds {got} records after the rollback, expected {want}")
    on_peer = steps.wait(lambda: (n := steps.topic_counts(ctx, "peer", [TOPIC])[TOPIC]) >= want and n, ctx.timeout, 2)
    if on_peer != want:
        raise StepFailed(f"west: the peer's {TOPIC} holds {on_peer} records, expected {want} (the rolled-back ones too)")
    return (f"east: {', '.join(pl.reverse)} copied {MOVED_RECORDS} records of the moved producers back "
            f"(source {TOPIC} {before} -> {got}); west kept replicating: the peer's {TOPIC} holds {on_peer}")


def west_still_proven(ctx: TopologyContext) -> str:
    counts = {r: steps.topic_counts(ctx, r, TOPICS) for r in ("source", "target", "peer")}
    ctx.result.topics = [{"flow": f, "cluster": c, "source topic": t, "target topic": t, "source records": counts["source"][t],
                          "target records": counts[c].get(t)} for f, c in (("east", "target"), ("west", "peer")) for t in TOPICS]
    return "west: " + steps.validate_flow(ctx, ctx.flows["west"], list(TOPICS))


PLAN: list[tuple[str, Callable[[TopologyContext], str]]] = [
    ("environment up", steps.environment_up),
    ("produce on the source", produce),
    ("topology check", topology_checked),
    ("apply both flows", _each(steps.apply_flow)),
    ("lag until in sync", _each(steps.in_sync)),
    ("offsets translated", _each(steps.offsets_translated)),
    ("validate each target", validate),
    ("rollback from one target", rollback_from_one_target),
    ("the other target still proven", west_still_proven),
]
