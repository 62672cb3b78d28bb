"""The local migration rehearsal: the whole runbook, for real, in one command, one table row per step.

preflight -> apply -> lag until in sync -> validate -> cutover check -> move a consumer group (a consumer
on the target starts at the translated offset and sees every record after its source commit point) ->
move producers -> reverse replication -> roll a group back to the source (it sees every record the
producers wrote on the target) -> validate in reverse -> cleanup.

Every step calls the same functions as the operator commands (``msk-migrate preflight``, ``lag``,
``cutover check``, ``offsets sync``, ``rollback apply``, ``cleanup``) on the local clusters.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ..access.admin import AdminSession, quiet
from ..access.offsets import end_offsets, partitions
from ..config.flow import REHEARSAL_MIGRATION
from ..connect.apply import apply, status_rows
from ..connect.rest import ConnectClient
from ..connectors.render import render_connectors
from ..kafka.produce import produce_waiting
from ..kafka.selection import topic_selection
from ..local.harness import DEFAULT_DIR, LocalEnvironment
from ..local.shape import EnvironmentShape
from .offsets import verify_offsets

#: topic -> (partitions, records, config)
DEMO_TOPICS: dict[str, tuple[int, int, dict[str, str]]] = {
    "shop.orders": (6, 60_000, {"retention.ms": "604800000", "max.message.bytes": "2097152"}),
    "shop.events": (3, 45_000, {}),
    "shop.customers": (2, 12_000, {"cleanup.policy": "compact"}),
    "shop.payments": (2, 3_000, {}),  # transactional, with one aborted transaction
}
#: group -> (topic, fraction of the log consumed)
DEMO_GROUPS = {"shop-billing": ("shop.orders", 1.0), "shop-analytics": ("shop.events", 0.6)}


#: The group moved to the target (no gap), and the group rolled back to the source with its topic.
MOVED_GROUP, ROLLBACK_GROUP, ROLLBACK_TOPIC = "shop-analytics", "shop-billing", "shop.orders"
#: How long the demo producer may take to have every record acknowledged (acks=all: with 3 replicas on a busy
#: 2-core machine, several times the single-broker figure).
FLUSH_SECONDS = 180
#: Records the moved producers write on the target.
MOVED_PRODUCER_RECORDS = 3_000


@dataclass
class Step:
    name: str
    ok: bool
    seconds: float
    result: str

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.name, "ok": self.ok, "seconds": self.seconds, "result": self.result}


class StepFailed(Exception):
    pass


@dataclass
class RehearsalResult:
    status: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    topics: list[dict[str, Any]] = field(default_factory=list)
    connectors: list[dict[str, Any]] = field(default_factory=list)
    offsets: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)
    reverse_validation: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "status": self.status, "steps": [s.to_dict() for s in self.steps], "topics": self.topics,
                "connectors": self.connectors, "offsets": self.offsets, "validation": self.validation,
                "reverse_validation": self.reverse_validation, "seconds": self.seconds}


#: bootstrap servers -> librdkafka security settings of the demo applications on that cluster (the harness
#: admin's SCRAM user on a secured source); filled when the environment is up, empty for plaintext clusters.
_APP_SECURITY: dict[str, dict[str, Any]] = {}


def _app(bootstrap: str, **conf: Any) -> dict[str, Any]:
    """Client settings of a demo application on the cluster ``bootstrap`` (quiet, secured when it is)."""
    return quiet({**_APP_SECURITY.get(bootstrap, {}), "bootstrap.servers": bootstrap, **conf})


def _retrying(what: str, call: Callable[[], Any], attempts: int = 15) -> Any:
    """``call()``, again after a second while a fresh cluster answers with a retriable error (a coordinator
    still loading, a leader still being elected); any other error, or the last one, fails the step naming ``what``."""
    for attempt in range(attempts):
        try:
            return call()
        except KafkaException as exc:
            err = exc.args[0]
            if attempt == attempts - 1 or not (err.retriable() or "coordinator" in err.str().lower()):
                raise StepFailed(f"{what}: {err.str()}") from exc
            time.sleep(1)
    raise AssertionError("unreachable")


def _create_demo_topics(admin: AdminClient, replication_factor: int = 1) -> None:
    def create() -> None:
        futs = admin.create_topics([NewTopic(t, p, replication_factor, config=c) for t, (p, _, c) in DEMO_TOPICS.items()])
        for f in futs.values():
            try:
                f.result(timeout=30)
            except KafkaException as exc:  # created by an earlier attempt whose answer was an error
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

    _retrying("create the demo topics", create)


class _PaymentsWriter:
    """Writes shop.payments in transactions of one producer (a fixed transactional.id), one of them aborted.

    Each batch is flushed before its transaction ends, so its partitions are in the transaction and its records
    are in the log before EndTxn: librdkafka can send an abort ahead of the AddPartitionsToTxn it waits on, and
    the broker then answers INVALID_TXN_STATE (confluentinc/librdkafka#4849). The aborted batch must occupy
    source offsets, since that is what the rehearsal proves MM2 does not copy. An abortable error aborts and
    writes the batch again; a fatal one (the producer is unusable) starts a new producer on the same
    transactional.id, whose init fences the old one and aborts what it left open, and writes the batch again.
    """

    ATTEMPTS = 5

    def __init__(self, make_producer: Callable[[], Producer]) -> None:
        self._make = make_producer
        self._failed: list[str] = []
        self._tp = self._start()

    def _start(self) -> Producer:
        tp = self._make()
        _retrying("init transactions", lambda: tp.init_transactions(30))
        return tp

    def _delivered(self, err, _msg) -> None:
        if err is not None:
            self._failed.append(err.str())

    def batch(self, batch: int, records: int, abort: bool) -> None:
        what = f"{'abort' if abort else 'commit'} transaction {batch}"
        for _attempt in range(self.ATTEMPTS):
            self._failed.clear()
            try:
                self._tp.begin_transaction()
                for i in range(records):
                    _produce(self._tp, "shop.payments", f"pay-{batch}-{i}".encode(), f"{batch}:{i}".encode(), None,
                             self._delivered)
                left = self._tp.flush(30)
                if left or self._failed:  # the transaction cannot commit; aborting it is the recovery
                    self._end(what, abort=True)
                    continue
                self._end(what, abort=abort)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if err.fatal() or err.code() == KafkaError.INVALID_TXN_STATE:
                    self._tp = self._start()
                elif err.txn_requires_abort():
                    try:
                        self._end(what, abort=True)
                    except KafkaException:  # the abort itself failed: only a new producer recovers
                        self._tp = self._start()
                else:
                    raise StepFailed(f"{what}: {err.str()}") from exc
        reason = self._failed[0] if self._failed else "the broker refused it each time"
        raise StepFailed(f"transaction {batch} to shop.payments failed {self.ATTEMPTS} times ({reason})")

    def _end(self, what: str, abort: bool) -> None:
        """Commit or abort, asking again while the answer is retriable; other errors reach ``batch``."""
        for attempt in range(15):
            try:
                self._tp.abort_transaction(30) if abort else self._tp.commit_transaction(30)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if attempt == 14 or not err.retriable() or err.fatal() or err.txn_requires_abort():
                    raise
                time.sleep(1)


def _produce_demo(bootstrap: str, say: Callable[[str], None], replication_factor: int = 1) -> None:
    _create_demo_topics(AdminClient(_app(bootstrap)), replication_factor)
    failed: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(err.str())

    p = Producer(_app(bootstrap, **{"linger.ms": 20, "compression.type": "lz4"}))
    for topic, (_parts, n, cfg) in DEMO_TOPICS.items():
        if topic == "shop.payments":
            continue
        say(f"producing {n:,} records to {topic}")
        compact = cfg.get("cleanup.policy") == "compact"
        for i in range(n):
            key: bytes | None
            value: bytes | None
            if compact:
                key = f"customer-{i % 2000}".encode()
                value = None if i % 11 == 0 else f'{{"customer":{i % 2000},"version":{i}}}'.encode()
            else:
                key = None if i % 13 == 0 else f"{topic}-key-{i % 5000}".encode()
                value = f'{{"id":{i},"amount":{i * 7 % 1000}}}'.encode() + b"x" * (i % 64)
            headers = [("source", b"rehearsal"), ("seq", str(i).encode())] if i % 4 == 0 else None
            _produce(p, topic, key, value, headers, delivered)
        left = p.flush(FLUSH_SECONDS)
        if failed or left:
            raise StepFailed(f"{topic}: {len(failed) + left} record(s) not delivered"
                             + (f" ({failed[0]})" if failed else f" within {FLUSH_SECONDS} s"))
    say("producing transactional records to shop.payments (one transaction aborted)")
    txn_id = f"rehearsal-{time.time_ns()}"
    writer = _PaymentsWriter(lambda: Producer(_app(bootstrap, **{"transactional.id": txn_id})))
    total = DEMO_TOPICS["shop.payments"][1]
    for batch in range(10):
        writer.batch(batch, total // 10, abort=batch == 4)


def _produce(p: Producer, topic: str, key, value, headers, on_delivery=None) -> None:
    produce_waiting(p, topic, poll_s=0.2, key=key, value=value, headers=headers, on_delivery=on_delivery)


def _commit_groups(bootstrap: str) -> None:
    for group, (topic, fraction) in DEMO_GROUPS.items():
        c = Consumer(_app(bootstrap, **{"group.id": group, "enable.auto.commit": False}))
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        offsets = []
        for p in parts:
            _lo, hi = _retrying(f"{topic} end offsets", partial(c.get_watermark_offsets, TopicPartition(topic, p), timeout=10))
            offsets.append(TopicPartition(topic, p, int(hi * fraction)))
        _commit(c, offsets)
        c.close()


def _commit(consumer: Consumer, offsets: list[TopicPartition]) -> None:
    """Commit, retrying while a fresh cluster's group coordinator is still being elected/loaded."""

    for attempt in range(15):
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
            return
        except KafkaException as exc:
            if attempt == 14 or not (exc.args[0].retriable() or "coordinator" in exc.args[0].str().lower()):
                raise
            time.sleep(1)


def _wait(predicate: Callable[[], Any], timeout: float, interval: float = 1.0) -> Any:
    deadline = time.time() + timeout
    while True:
        got = predicate()
        if got or time.time() > deadline:
            return got
        time.sleep(interval)


def _read_from(bootstrap: str, group: str, topic: str, timeout: float = 30.0) -> list[bytes]:
    """Values a consumer of ``group`` reads from its committed offsets to the current end (no commit)."""
    c = Consumer(_app(bootstrap, **{"group.id": group, "enable.auto.commit": False,
                                    "auto.offset.reset": "earliest", "isolation.level": "read_committed"}))
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    committed = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in parts], timeout=10)}
    todo = {p for p in parts if ends[p] > max(committed[p], 0)}
    c.assign([TopicPartition(topic, p, max(committed[p], 0)) for p in parts])
    out, deadline = [], time.time() + timeout
    while todo and time.time() < deadline:
        for m in c.consume(1000, timeout=0.5):
            if m.error() is None:
                out.append(m.value())
        for p in list(todo):
            if c.position([TopicPartition(topic, p)])[0].offset >= ends[p]:
                todo.discard(p)
    c.close()
    return out


def _values_after(bootstrap: str, topic: str, offsets: dict[int, int]) -> list[bytes]:
    """Values of ``topic`` from ``offsets`` (partition -> first offset) to the current end."""
    g = f"rehearsal-reader-{time.time_ns()}"
    c = Consumer(_app(bootstrap, **{"group.id": g, "enable.auto.commit": False}))
    _commit(c, [TopicPartition(topic, p, o) for p, o in offsets.items()])
    c.close()
    return _read_from(bootstrap, g, topic)


@contextlib.contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    """``extra`` in os.environ for a while (the previous values back afterwards)."""
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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


def rehearse(say: Callable[[str], None] = lambda m: None, with_monitoring: bool = True,
             validate: bool = True, base_dir=DEFAULT_DIR, timeout: float = 300.0, worker: str = "local",
             shape: EnvironmentShape | None = None) -> RehearsalResult:
    """``shape``: the clusters (:func:`msk_migrate.local.shape.make_shape`); None = the fast default pair,
    one 3.9 KRaft broker -> one 4.1 broker. On a secured source (SCRAM/TLS, ACLs) MirrorMaker 2 and the operator
    steps act as the MM2 user, which holds only its read-only ACLs until the rollback step grants the reverse
    flow's (what an operator does before `rollback apply`); the demo applications are the harness admin."""
    t0 = time.time()
    base_dir = Path(base_dir)
    if worker == "image":  # the Connect worker runs from the built image (local/image_worker.py)
        os.environ["MSK_MIGRATE_WORKER"] = "image"
    env = LocalEnvironment(base_dir, with_monitoring=with_monitoring, progress=say, shape=shape)
    res = RehearsalResult(status={})
    logs = base_dir.parent / "rehearsal-logs" / "stderr.log"

    def step(name: str, fn: Callable[[], str]) -> None:
        t = time.time()
        say(name)
        try:
            result, ok = fn(), True
        except StepFailed as exc:
            result, ok = str(exc), False
        except Exception as exc:
            result, ok = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", False
        res.steps.append(Step(name, ok, round(time.time() - t, 1), result))
        if not ok:
            raise StepFailed(f"{name}: {result}")

    rf = env.shape().target.replication_factor  # 3 on a 3-broker target (min.insync.replicas 2, like MSK)
    m = REHEARSAL_MIGRATION.model_copy(update={"replication_factor": rf, "internal_replication_factor": rf})
    topics = list(DEMO_TOPICS)
    ctx: dict[str, Any] = {}

    def up() -> str:
        say("wiping the previous rehearsal (a rehearsal starts from empty clusters)")
        env.down(wipe=True)
        res.status = env.up()
        env.export_secrets()  # the operator steps act as the MM2 user on a secured source
        ctx["src"], ctx["tgt"] = env.source(), env.target()
        for role in ("source", "target"):
            conf = env.client_config(role)
            _APP_SECURITY[conf.pop("bootstrap.servers")] = conf
        ctx["client"] = ConnectClient(res.status["connect"]["url"])
        sh = env.shape()
        return (f"source {sh.describe('source')} at {ctx['src'].bootstrap_servers}, target {sh.describe('target')} "
                f"at {ctx['tgt'].bootstrap_servers}, worker {ctx['client'].url}")

    def produce() -> str:
        _produce_demo(ctx["src"].bootstrap_servers, say, env.shape().source.replication_factor)
        _commit_groups(ctx["src"].bootstrap_servers)
        ctx["S"] = AdminSession.for_endpoint("source", ctx["src"])
        ctx["T"] = AdminSession.for_endpoint("target", ctx["tgt"])
        return f"{sum(n for _, n, _ in DEMO_TOPICS.values()):,} records in {len(DEMO_TOPICS)} topics, groups {', '.join(DEMO_GROUPS)}"

    def preflight() -> str:
        from .preflight import run_preflight

        rep = run_preflight(ctx["src"], ctx["tgt"], m, env.worker_spec())
        bad = [c for c in rep.checks if c.status == "fail"]
        if bad:
            raise StepFailed(f"{bad[0].name}: {bad[0].detail}")
        return f"{len(rep.checks)} checks, {sum(c.status == 'warn' for c in rep.checks)} warning(s)"

    def apply_step() -> str:
        configs = render_connectors(ctx["src"], ctx["tgt"], m)
        apply(ctx["client"], configs, wait=True, timeout=120, progress=say)
        res.connectors = status_rows(ctx["client"], list(configs))
        return ", ".join(f"{r['name']} {r['tasks_running']}/{r['tasks']}" for r in res.connectors)

    def lag_step() -> str:
        from .lag import measure_lag

        def in_sync():
            rows = measure_lag(ctx["S"], ctx["T"], ctx["client"], m, "source")
            behind = sum(r.behind for r in rows)
            say(f"lag: {behind:,} record(s) behind")
            return rows if rows and all(r.status == "in-sync" for r in rows) else None

        rows = _wait(in_sync, timeout, 2)
        if not rows:
            raise StepFailed("not in sync within the timeout")
        _record_topics(res, ctx["S"], ctx["T"], topics)
        return f"{len(rows)} partitions in sync, 0 records behind"

    def offsets_step() -> str:
        previous: list[Any] = [None]

        def settled():
            rows = verify_offsets(ctx["S"], ctx["T"], m)
            ok = sum(r.status == "ok" for r in rows)
            say(f"waiting for translated offsets to settle: {ok}/{len(rows)} partitions translated")
            current = [r.to_dict() for r in rows]
            done = rows and ok == len(rows) and current == previous[0]
            previous[0] = current
            return current if done else None

        rows = _wait(settled, 120, m.sync_group_offsets_interval_seconds + 2)
        res.offsets = rows or previous[0] or []
        if not rows:
            raise StepFailed("offsets not translated within 120 s")
        return f"{len(rows)} partitions, never ahead, re-delivery at most {max(r['redelivery'] for r in rows)}"

    def validate_step(reverse: bool = False) -> str:
        from ..validation.job import run_validation
        from ..validation.request import ValidationRequest

        src, tgt = (ctx["tgt"], ctx["src"]) if reverse else (ctx["src"], ctx["tgt"])
        report_dir = base_dir.parent / ("rehearsal-reverse-validation" if reverse else "rehearsal-validation")
        req = ValidationRequest(source=src, target=tgt, topics=[ROLLBACK_TOPIC] if reverse else topics, mode="auto",
                                until_timestamp_ms=int(time.time() * 1000) + 1000, report_dir=str(report_dir))
        # In reverse the source cluster is validation's "target": its secrets under that role's variable names.
        swapped = {k.replace("MM2_SOURCE_", "MM2_TARGET_"): v for k, v in env.secret_env("source").items()} if reverse else {}
        with _stderr_to(logs), _environ(swapped):
            report = run_validation(req, progress=say)
        out = {"verdict": report.verdict, "exit_code": report.exit_code,
               "locations": list(getattr(report, "locations", []) or []), "records_compared": _records_compared(report)}
        if reverse:
            res.reverse_validation = out
        else:
            res.validation = out
            ctx["report"] = str(report_dir)
        text = f"{out['verdict']}, {out['records_compared']} records; report {report_dir / 'report.html'}"
        if report.verdict != "match":
            raise StepFailed(text)
        return text

    def cutover_step() -> str:
        from .cutover import cutover_check

        def ready():
            conds = cutover_check(ctx["S"], ctx["T"], ctx["client"], m, "source", [MOVED_GROUP, ROLLBACK_GROUP], 0, None,
                                  100_000, ctx.get("report"), 3600)
            conds = [c for c in conds if c.name != "validation report" or validate]
            if all(c.ok for c in conds):
                return conds
            ctx["conds"] = conds
            return None

        conds = _wait(ready, 60, 3)
        if not conds:
            bad = [c for c in ctx["conds"] if not c.ok]
            raise StepFailed(f"{bad[0].name}: {bad[0].evidence}")
        return f"ready: {len(conds)} conditions met for {MOVED_GROUP}, {ROLLBACK_GROUP}"

    def move_group() -> str:
        """Consumers stop on the source; `offsets sync` places both groups exactly (a certificate each); a
        consumer on the target reads from the committed offsets and must see exactly the source records
        after the commit point: none missing (no gap), none again (0 re-delivered)."""
        from collections import Counter

        from ..offset_translation.sync import sync_group

        S, T = ctx["S"], ctx["T"]
        certs = base_dir.parent / "rehearsal-certificates"
        placed, notes = 0, []
        for g in (MOVED_GROUP, ROLLBACK_GROUP):
            r = sync_group(m, S, T, "source", "target", g, "target", exact_only=True, certificate=str(certs))
            placed += len(r.proofs)
            notes.append(f"{g} {r.certificate['totals']['exact']}/{len(r.proofs)} exact")
        topic = DEMO_GROUPS[MOVED_GROUP][0]
        src_commit = {p: o for (t, p), o in S.committed(MOVED_GROUP).items() if t == topic}
        expected = Counter(_values_after(ctx["src"].bootstrap_servers, topic, src_commit))
        seen = Counter(_read_from(ctx["tgt"].bootstrap_servers, MOVED_GROUP, topic))
        missing, again = expected - seen, seen - expected
        if missing:
            raise StepFailed(f"{sum(missing.values())} record(s) after the source commit point missing on the target")
        if again:
            raise StepFailed(f"{sum(again.values())} record(s) re-delivered on the target (expected 0)")
        return (f"{placed} partitions placed exactly ({', '.join(notes)}; certificates in {certs}); {MOVED_GROUP} on the "
                f"target read {sum(seen.values()):,} records = the {sum(expected.values()):,} after its source commit "
                f"point: 0 re-delivered, no gap")

    def move_producers() -> str:
        T = ctx["T"]
        tps = partitions(T, [ROLLBACK_TOPIC])
        before = end_offsets(T, tps)
        p = Producer(_app(ctx["tgt"].bootstrap_servers, **{"linger.ms": 5}))
        for i in range(MOVED_PRODUCER_RECORDS):
            _produce(p, ROLLBACK_TOPIC, f"moved-{i % 500}".encode(), f'{{"moved":{i}}}'.encode(), None)
        p.flush(30)
        ctx["moved_values"] = {f'{{"moved":{i}}}'.encode() for i in range(MOVED_PRODUCER_RECORDS)}
        # the rolled-back group consumes part of the new records on the target, then stops
        c = Consumer(_app(ctx["tgt"].bootstrap_servers, **{"group.id": ROLLBACK_GROUP, "enable.auto.commit": False}))
        half = {tp: before[tp] + (end - before[tp]) // 2 for tp, end in end_offsets(T, tps).items()}
        _commit(c, [TopicPartition(t, q, o) for (t, q), o in half.items()])
        c.close()
        ctx["rollback_commit"] = {q: o for (_, q), o in half.items()}
        return f"{MOVED_PRODUCER_RECORDS:,} records produced on the target {ROLLBACK_TOPIC}; {ROLLBACK_GROUP} read half and stopped"

    def reverse() -> str:
        from ..kafka.mm2_acls import reverse_source_acls
        from ..local.scram import MM2_USER
        from .rollback import apply_rollback, plan

        # On a secured source the operator first grants the reverse flow's ACLs, for the rolled-back topic and group.
        env.grant_acls("source", f"User:{MM2_USER}", reverse_source_acls(
            ctx["tgt"].alias, [ROLLBACK_TOPIC], [ROLLBACK_GROUP], env.worker_spec().offset_storage_topic))
        pl = plan(ctx["src"], ctx["tgt"], m, [ROLLBACK_TOPIC], ctx["S"], ctx["T"])
        apply_rollback(ctx["client"], pl, m, ctx["S"], ctx["T"], "source", "target", 120, say)
        S = ctx["S"]
        want = DEMO_TOPICS[ROLLBACK_TOPIC][1] + MOVED_PRODUCER_RECORDS
        tps = partitions(S, [ROLLBACK_TOPIC])
        got = _wait(lambda: (n := sum(end_offsets(S, tps).values())) >= want and n, 120, 1)
        time.sleep(2)  # nothing more may arrive: the reverse flow copies only what the producers wrote
        got = sum(end_offsets(S, tps).values())
        if got != want:
            raise StepFailed(f"source {ROLLBACK_TOPIC} holds {got:,} records, expected {want:,}")
        return f"{', '.join(pl.reverse)} RUNNING; source {ROLLBACK_TOPIC} holds {got:,} records (no duplicate of the past)"

    def roll_group_back() -> str:
        """`offsets sync --to source` once the reverse flow copied the group's commit point; a consumer on the
        source reads from the committed offsets and must see exactly the target records after it."""
        from collections import Counter

        from ..errors import UsageError
        from ..offset_translation.sync import sync_group

        S, T = ctx["S"], ctx["T"]
        certs = base_dir.parent / "rehearsal-certificates"

        def placed():
            try:
                return sync_group(m, S, T, "source", "target", ROLLBACK_GROUP, "source", exact_only=True,
                                  certificate=str(certs / "rollback"))
            except UsageError as exc:
                ctx["rollback_wait"] = str(exc)
                if "replication has not reached" in str(exc):
                    return None
                raise

        r = _wait(placed, 90, 2)
        if not r:
            raise StepFailed(ctx.get("rollback_wait", "the reverse flow did not reach the group's commit point"))
        commit = ctx["rollback_commit"]
        after = Counter(_values_after(ctx["tgt"].bootstrap_servers, ROLLBACK_TOPIC, commit))
        seen = Counter(_read_from(ctx["src"].bootstrap_servers, ROLLBACK_GROUP, ROLLBACK_TOPIC))
        missing, again = after - seen, seen - after
        if missing:
            raise StepFailed(f"{sum(missing.values())} record(s) the producers wrote on the target after the group's "
                             "commit point are missing on the source")
        if again:
            raise StepFailed(f"{sum(again.values())} record(s) re-delivered on the source (expected 0)")
        return (f"{len(r.proofs)} partitions placed exactly on the source (certificate in {certs / 'rollback'}); "
                f"{ROLLBACK_GROUP} on the source read {sum(seen.values()):,} records = the {sum(after.values()):,} "
                "written on the target after its commit: 0 re-delivered, no gap")

    def cleanup_step() -> str:
        from .cleanup import delete, leftovers

        client = ctx["client"]
        for name in list(client.connectors()):
            client.delete(name)
        items = leftovers(ctx["T"], m, env.worker_spec(), "source", "target", include_worker=False)
        delete(ctx["T"], items)
        left = _wait(lambda: not leftovers(ctx["T"], m, env.worker_spec(), "source", "target", include_worker=False)
                     or None, 20) is None and leftovers(ctx["T"], m, env.worker_spec(), "source", "target", False)
        if left:
            raise StepFailed(f"still on the target: {', '.join(i.name for i in left)}")
        return f"connectors deleted; {len(items)} MM2 topic(s)/group(s) deleted from the target"

    steps: list[tuple[str, Callable[[], str]]] = [
        ("environment up", up), ("produce demo data", produce), ("preflight", preflight),
        ("apply connectors", apply_step), ("lag until in sync", lag_step), ("offsets translated", offsets_step),
    ]
    if validate:
        steps.append(("validate", validate_step))
    steps += [("cutover check", cutover_step), ("move consumer groups", move_group), ("move producers", move_producers),
              ("reverse replication", reverse), ("roll a group back", roll_group_back)]
    if validate:
        steps.append(("validate in reverse", lambda: validate_step(reverse=True)))
    steps.append(("cleanup", cleanup_step))
    try:
        for name, fn in steps:
            step(name, fn)
    except StepFailed:
        pass
    res.seconds = {s.name: s.seconds for s in res.steps}
    res.seconds["total"] = round(time.time() - t0, 1)
    return res


def _record_topics(res: RehearsalResult, S: AdminSession, T: AdminSession, topics: list[str]) -> None:
    """Per topic: records on both sides and synced topic configs (configs MM2 copies must match)."""
    from ..kafka.names import CONFIG_PROPERTIES_EXCLUDE_DEFAULT

    sel = topic_selection(REHEARSAL_MIGRATION)
    s_cfg, t_cfg = S.topic_configs(topics), T.topic_configs([sel.target_name(t) for t in topics])
    s_end = end_offsets(S, partitions(S, topics))
    t_end = end_offsets(T, partitions(T, [sel.target_name(t) for t in topics]))
    payments = DEMO_TOPICS["shop.payments"][1]
    for t in topics:
        src_records = sum(v for (tt, _), v in s_end.items() if tt == t)
        if t == "shop.payments":  # markers and the aborted batch occupy source offsets but are not copied
            src_records = payments - payments // 10
        tt = sel.target_name(t)
        diffs = [{"name": k, "source": v, "target": t_cfg[tt].configs.get(k) if tt in t_cfg else None}
                 for k, v in sorted(s_cfg[t].overrides.items())
                 if k not in CONFIG_PROPERTIES_EXCLUDE_DEFAULT and (tt not in t_cfg or t_cfg[tt].configs.get(k) != v)]
        res.topics.append({"topic": t, "target_topic": tt, "source_records": src_records,
                           "target_records": sum(v for (x, _), v in t_end.items() if x == tt),
                           "synced_configs": sorted(s_cfg[t].overrides), "config_differences": diffs})


def _records_compared(report: Any) -> int | None:
    data = report.to_dict() if hasattr(report, "to_dict") else {}
    summary = data.get("summary", {})
    return summary.get("source_records") or summary.get("source_count")
