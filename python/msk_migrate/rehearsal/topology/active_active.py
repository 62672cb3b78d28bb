"""Active/active with identical topic names: both directions at once, loop-free by copy marks, and the app-by-app
move where every consumer sees every record exactly once.

Clusters: the pair (``source``, ``target``); ``app.events`` exists on both. Flow ``east`` (source -> target, the
pair's worker) and flow ``west`` (target -> source, a worker of its own whose home is the source) both set
``migration.mark_copies``: each copy carries ``msk-migrate.copied-from.<alias>`` and neither flow copies back what
the other brought in (docs/active-active.md). Neither flow syncs group offsets: MM2 translates by one offset-sync
stream, and a position on a two-origin partition is a set of records of both origins (the two-origin
translation moves groups instead: docs/active-active-proof.md).

Steps: the same flows without marks are refused (a loop, exit 2); with marks the check names the relation
active/active; both producers write while both flows run; 60 s after they stop each side holds the union and no
more (no loop); each direction validates as the same multiset per partition, each origin in order; then the
app-by-app move: the billing producer moves to the source while its consumer stays on the target, and the orders
consumer moves to the target while its producer stays on the source -- each group reads every record exactly
once (counted by record identity).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

from confluent_kafka import Consumer, Producer, TopicPartition

from ...access.admin import AdminSession
from ...access.offsets import end_offsets, partitions
from ...config.migration import MigrationSpec
from ...kafka.fingerprint import fingerprint
from ...offset_translation.request import SyncRequest
from ...offset_translation.sync import move_group
from ...validation.copy_marks import strip_mark
from ..demo import commit, wait
from ..result import StepFailed
from . import steps
from .consolidate import _FAST, _each
from .context import FlowCase, TopologyContext

TOPIC = "app.events"
PARTITIONS = 3
#: natives written on each side before the flows start, and again while both run
BEFORE = {"source": 600, "target": 400}
DURING = {"source": 300, "target": 300}
MOVED = 200  #: records the billing producer writes after it moved to the source
AFTER = 150  #: records each side's producers write after the orders consumer moved
STABLE_SECONDS = 60  #: how long the counts must stay at the union once producers stop (no loop)


def flows(rf: int) -> dict[str, FlowCase]:
    fast = {**_FAST, "replication_factor": rf, "internal_replication_factor": rf, "mark_copies": True,
            "sync_group_offsets": False, "sync_topic_configs": False}
    east = MigrationSpec(name="east", topics=[r"app\..*"], groups=["app-.*"], **fast)
    west = MigrationSpec(name="west", topics=[r"app\..*"], groups=["app-.*"], **fast)
    return {"east": FlowCase("east", "source", "target", east),
            "west": FlowCase("west", "target", "source", west, flow_worker="west")}


def _write(ctx: TopologyContext, role: str, n: int, tag: str, start: int = 0) -> None:
    p = Producer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{"enable.idempotence": True, "linger.ms": 20}))
    for i in range(start, start + n):
        p.produce(TOPIC, key=f"{tag}-{i}".encode(), value=f"{tag} record {i}".encode() * 4, headers=[("app", tag.encode())])
        if i % 500 == 499:
            p.flush(30)
    if p.flush(60):
        raise StepFailed(f"{role}: {tag}'s records still unsent after 60 s")


def produce(ctx: TopologyContext) -> str:
    steps.create_and_fill(ctx, "source", {TOPIC: (PARTITIONS, 0)}, "orders")
    steps.create_and_fill(ctx, "target", {TOPIC: (PARTITIONS, 0)}, "billing")
    _write(ctx, "source", BEFORE["source"], "orders")
    _write(ctx, "target", BEFORE["target"], "billing")
    return (f"{TOPIC} ({PARTITIONS} partitions) on both clusters; the orders app wrote {BEFORE['source']} on the source, "
            f"the billing app {BEFORE['target']} on the target")


def loop_refused(ctx: TopologyContext) -> str:
    east, west = ctx.flows["east"], ctx.flows["west"]
    unmarked = [ctx.flow_file(f, f.spec.model_copy(update={"mark_copies": False}), suffix="-unmarked") for f in (east, west)]
    code, _doc, err = ctx.cli("topology", "check", "--config", str(unmarked[0]), "--config", str(unmarked[1]))
    if code != 2 or "mark_copies" not in err or len(err.splitlines()) != 1:
        raise StepFailed(f"two unmarked flows over {TOPIC} both ways were not refused as a loop (exit {code}): {err[:300]}")
    refused = err
    code, doc, err = ctx.cli("topology", "check", "--config", str(ctx.flow_file(east)), "--config", str(ctx.flow_file(west)))
    kinds = sorted({str(r.get("kind")) for r in doc.get("rows", []) if r.get("row") == "relation"})
    if code != 0 or not any("active" in k for k in kinds):
        raise StepFailed(f"the marked flows: topology check exited {code}, relations {kinds}: {err or doc.get('rows')}")
    return f"without marks: exit 2, '{refused}'; with marks: exit 0, relation {', '.join(kinds)}"


def write_while_replicating(ctx: TopologyContext) -> str:
    threads = [threading.Thread(target=_write, args=(ctx, role, DURING[role], tag, BEFORE[role]))
               for role, tag in (("source", "orders"), ("target", "billing"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return f"the orders app wrote {DURING['source']} more on the source and the billing app {DURING['target']} on the target, both at once"


def _count(ctx: TopologyContext, role: str) -> int:
    return steps.topic_counts(ctx, role, [TOPIC]).get(TOPIC, 0)


def no_loop(ctx: TopologyContext) -> str:
    """Each side reaches the union, then stays there for :data:`STABLE_SECONDS` (a loop would keep adding)."""
    union = sum(BEFORE.values()) + sum(DURING.values())
    reached = wait(lambda: _count(ctx, "source") >= union and _count(ctx, "target") >= union, ctx.timeout, 2)
    if not reached:
        raise StepFailed(f"the union ({union}) not reached on both sides within {ctx.timeout:.0f} s: "
                         f"source {_count(ctx, 'source')}, target {_count(ctx, 'target')}")
    samples = []
    t0 = time.time()
    while time.time() - t0 < STABLE_SECONDS:
        samples.append((_count(ctx, "source"), _count(ctx, "target")))
        time.sleep(5)
    samples.append((_count(ctx, "source"), _count(ctx, "target")))
    if set(samples) != {(union, union)}:
        raise StepFailed(f"counts moved after the producers stopped (a loop or a duplicate): {samples}")
    ctx.figures["loop"] = {"union": union, "samples": len(samples), "seconds": STABLE_SECONDS}
    return (f"source and target each hold {union} = {sum(BEFORE.values())} + {sum(DURING.values())} records, "
            f"unchanged in {len(samples)} samples over {STABLE_SECONDS} s")


def _validate(ctx: TopologyContext, flow: FlowCase) -> str:
    from ...validation.endpoint import Endpoint
    from ...validation.job import run_validation
    from ...validation.request import CopyMarks, ValidationRequest

    src, tgt = ctx.endpoints(flow)
    report_dir = ctx.work_dir / f"validation-{flow.label}"
    req = ValidationRequest(source=Endpoint.of(src), target=Endpoint.of(tgt), topics=[TOPIC], mode="auto", engine="native",
                            compare="multiset", marks=CopyMarks(source_alias=src.alias, target_alias=tgt.alias),
                            until_timestamp_ms=int(time.time() * 1000) + 1000, report_dir=str(report_dir))
    report = run_validation(req, progress=ctx.say)
    ctx.figures.setdefault(flow.label, {})["validation"] = {"verdict": report.verdict, "report": str(report_dir)}
    if report.verdict != "match":
        raise StepFailed(f"{flow.label}: {report.verdict}; report {report_dir / 'report.html'}")
    return f"{report.verdict} (multiset per partition, each origin in order); report {report_dir / 'report.html'}"


def validate(ctx: TopologyContext) -> str:
    return "; ".join(f"{f.label}: {_validate(ctx, f)}" for f in ctx.flows.values())


def _identity(msg, peer: str) -> int:
    """A record's identity on either side: its fingerprint with the peer's copy mark (if any) removed."""
    headers, _state = strip_mark(msg.headers(), peer)
    return fingerprint(msg.key(), msg.value(), headers, msg.timestamp()[1])


def _read(ctx: TopologyContext, role: str, peer: str, group: str, until: dict[int, int] | None = None,
          start: dict[int, int] | None = None) -> list[int]:
    """The identities a consumer of ``group`` reads on ``role`` from ``start`` (else its commits) to ``until``
    (else the current end), committing where it stops."""
    ep = ctx.endpoint(role)
    session = AdminSession.for_endpoint(role, ep)
    ends = until or {q: o for (_t, q), o in end_offsets(session, partitions(session, [TOPIC])).items()}
    c = Consumer(ctx.apps.config(ep.bootstrap_servers, **{"group.id": group, "enable.auto.commit": False,
                                                           "isolation.level": "read_committed"}))
    try:
        committed = start or {tp.partition: max(tp.offset, 0) for tp in
                              c.committed([TopicPartition(TOPIC, q) for q in range(PARTITIONS)], timeout=10)}
        c.assign([TopicPartition(TOPIC, q, committed.get(q, 0)) for q in range(PARTITIONS)])
        out: list[int] = []
        todo = {q for q in range(PARTITIONS) if ends[q] > committed.get(q, 0)}
        deadline = time.time() + 60
        while todo and time.time() < deadline:
            for msg in c.consume(500, timeout=1):
                if msg.error() or msg.partition() not in todo or msg.offset() >= ends[msg.partition()]:
                    continue
                out.append(_identity(msg, peer))
                if msg.offset() + 1 >= ends[msg.partition()]:
                    todo.discard(msg.partition())
        if todo:
            raise StepFailed(f"{group} on {role}: partitions {sorted(todo)} not read to their end within 60 s")
        commit(c, [TopicPartition(TOPIC, q, ends[q]) for q in range(PARTITIONS)])
        return out
    finally:
        c.close()


def producer_moves_first(ctx: TopologyContext) -> str:
    """The billing app's producer moves to the source; its consumer (app-billing-reader) stays on the target and
    reads the moved producer's records -- east's copies now -- exactly once."""
    seen = _read(ctx, "target", "source", "app-billing-reader")  # caught up before the move
    _write(ctx, "source", MOVED, "billing", BEFORE["target"] + DURING["target"])  # the producer now writes on the source
    want = sum(BEFORE.values()) + sum(DURING.values()) + MOVED
    if not wait(lambda: _count(ctx, "target") >= want, ctx.timeout, 2):
        raise StepFailed(f"the moved producer's records did not reach the target ({_count(ctx, 'target')} < {want})")
    after = _read(ctx, "target", "source", "app-billing-reader")
    both = Counter(seen + after)
    twice = sum(n - 1 for n in both.values() if n > 1)
    if len(after) != MOVED or twice:
        raise StepFailed(f"billing-reader read {len(after)} new record(s) (expected {MOVED}), {twice} twice")
    ctx.figures["producer_moved"] = {"records": MOVED, "read_once": len(after)}
    return (f"billing producer now writes on the source; billing-reader stays on the target and read its {MOVED} records "
            f"once each (copied by east); {len(seen) + len(after)} records read in all, none twice")


def consumer_moves(ctx: TopologyContext) -> str:
    """The orders app's consumer group moves to the target while its producer stays on the source: its source
    position translated by the two-origin translation, then it reads on the target; nothing missed or twice."""
    group = "app-orders-reader"
    seen = _read(ctx, "source", "target", group)  # drained on the source, committed at the end
    # `msk-migrate offsets sync --group app-orders-reader --certificate …` on the east flow (it marks its copies:
    # the two-origin translation moves the group)
    res = move_group(ctx.session(ctx.flows["east"]), SyncRequest(group, "target", certificate=str(ctx.work_dir / "certificates")),
                     ctx.say)
    if res.translation != "two-origin":
        raise StepFailed("offsets sync did not take the two-origin translation for a flow that marks its copies")
    translated = {(p.topic, p.partition): p.translation for p in res.partitions}
    if not all(tr.proven for tr in translated.values()) or res.written != len(translated):
        raise StepFailed(f"offsets sync wrote {res.written} of {len(translated)}: "
                         + "; ".join(tr.reason for tr in translated.values() if not tr.proven))
    committed = {tp: tr.position for tp, tr in translated.items()}
    exact = res.exact
    redelivered = sum(tr.redelivered_count for tr in translated.values())
    start = {q: translated[(TOPIC, q)].offset or 0 for q in range(PARTITIONS)}
    for role, tag, base in (("source", "orders", BEFORE["source"] + DURING["source"]),
                            ("target", "billing", 10_000)):
        _write(ctx, role, AFTER, tag, base)  # both apps keep writing after the move
    want = sum(BEFORE.values()) + sum(DURING.values()) + MOVED + 2 * AFTER
    if not wait(lambda: _count(ctx, "target") >= want, ctx.timeout, 2):
        raise StepFailed(f"the target did not reach {want} records ({_count(ctx, 'target')})")
    after = _read(ctx, "target", "source", group)
    both = Counter(seen + after)
    twice = sum(n - 1 for n in both.values() if n > 1)
    if len(both) != want or twice != redelivered:
        raise StepFailed(f"{group}: {len(both)} distinct records read of {want}, {twice} twice "
                         f"(the translation declared {redelivered})")
    ctx.figures["consumer_moved"] = {"exact": exact, "redelivered": redelivered, "records": want}
    return (f"{group} drained on the source, moved by offsets sync ({res.verdict}, two-origin; certificate "
            f"{', '.join(res.locations)}; {'exact' if exact else f'{redelivered} re-delivered, declared'}: "
            f"{', '.join(f'[{q}] {committed[(TOPIC, q)]}->{start[q]}' for q in range(PARTITIONS))}), then read on the target: "
            f"{len(both)} distinct records of {want}, {twice} twice")


def validate_again(ctx: TopologyContext) -> str:
    return validate(ctx)


PLAN: list[tuple[str, Callable[[TopologyContext], str]]] = [
    ("environment up", steps.environment_up),
    ("produce on both clusters", produce),
    ("loop refused without marks", loop_refused),
    ("apply both flows", _each(steps.apply_flow)),
    ("write on both sides at once", write_while_replicating),
    ("no loop: the union, stable", no_loop),
    ("validate both directions", validate),
    ("a producer moves first", producer_moves_first),
    ("a consumer moves", consumer_moves),
    ("validate both directions again", validate_again),
]
