"""Issue 43, parts 3-4 on real brokers: the watch names the producers of every partition still written (DescribeProducers
through the Java admin client: ids, epochs, last timestamp), checked against the producer ids in the broker's own log
segments; a 2.8 ZooKeeper source answers, a 2.4 one says it does not; and, on a SCRAM source under ``--local``, the gate
with writers running ends at the first write (well inside ``--timeout``), names the written partitions before a missing
right, and the exported operator principal (MSK_MIGRATE_SOURCE_SASL_*) is the one that acts (and is named)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate import versions
from msk_migrate.access.admin import AdminSession, quiet
from msk_migrate.cliutil import json_shape_problems
from msk_migrate.local.broker import BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.procs import stop
from msk_migrate.local.zookeeper import start_zookeeper, wait_zookeeper_ready
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.runbook.producers import fence
from msk_migrate.runbook.producers.describe import describe_producers
from msk_migrate.runbook.producers.fence_result import FenceResult
from msk_migrate.runbook.producers.operations import fence_outcome
from msk_migrate.runbook.producers.watch import watch

RUN = uuid.uuid4().hex[:6]


class Writer:
    """confluent-kafka writing one topic from a thread: idempotent, or transactional (5 records per transaction)."""

    def __init__(self, conf: dict, topic: str, transactional: bool):
        extra: dict = {"enable.idempotence": True, "acks": "all", "linger.ms": 5, "message.timeout.ms": 8000}
        if transactional:
            extra.update({"transactional.id": f"pw-{topic}", "transaction.timeout.ms": 15000})
        self.p = Producer(quiet({**conf, **extra}))
        self.topic, self.tx = topic, transactional
        self.acked = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _cb(self, err, _msg) -> None:
        if err is None:
            self.acked += 1

    def _run(self) -> None:
        try:
            if self.tx:
                self.p.init_transactions(60)
            while not self._stop.is_set():
                if self.tx:
                    self.p.begin_transaction()
                for i in range(5):
                    self.p.produce(self.topic, value=f"v{i}".encode(), on_delivery=self._cb)
                if self.tx:
                    self.p.commit_transaction(20)
                self.p.poll(0.1)
                time.sleep(0.1)
            self.p.flush(10)
        except KafkaException as exc:
            self.errors.append(exc.args[0].name())

    def start(self) -> Writer:
        self._t.start()
        return self

    def wait(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while self.acked == 0 and time.monotonic() < deadline and not self.errors:
            time.sleep(0.2)
        assert self.acked > 0, (self.topic, self.tx, self.errors)

    def stop(self) -> None:
        self._stop.set()
        self._t.join(40)


def _topic(conf: dict, name: str, partitions: int = 1) -> None:
    admin = AdminClient(quiet(conf))
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(60)
    time.sleep(1)


def _logged_producers(data_dir: Path, topic: str, partition: int, cp: str) -> dict[int, bool]:
    """Producer id -> transactional, from the record batches of the partition's log segments on disk (the broker's own
    DumpLogSegments: an account independent of DescribeProducers)."""
    seg = sorted((data_dir / "log" / f"{topic}-{partition}").glob("*.log"))
    out = subprocess.run(["java", "-cp", cp, "kafka.tools.DumpLogSegments", "--files", ",".join(map(str, seg))],
                         capture_output=True, text=True, timeout=180).stdout
    found: dict[int, bool] = {}
    for m in re.finditer(r"producerId: (-?\d+) producerEpoch: -?\d+ .*?isTransactional: (true|false) isControl: false", out):
        if int(m.group(1)) >= 0:
            found[int(m.group(1))] = m.group(2) == "true"
    return found


def _start(name: str, version: str | None, zookeeper: bool) -> tuple[Path, list, str, str]:
    base = LOCAL_DIR / "test-env" / f"producers-{name}-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    recs = []
    if zookeeper:
        cp = classpath("kafka-zk", None if version == versions.kafka_zk_version() else version)
        zrec, zport = start_zookeeper(base / "zk", cp, f"producers-zk-{name}")
        recs.append(zrec)
        wait_zookeeper_ready(zrec, zport)
        spec = BrokerSpec("source", version or "", cp, base / "b", auto_create_topics=False, zookeeper=f"127.0.0.1:{zport}",
                          name=f"producers-{name}", heap="256m")
    else:
        cp = classpath("kafka-source")
        spec = BrokerSpec("source", "3.9", cp, base / "b", auto_create_topics=False, name=f"producers-{name}")
    rec, port = start_broker(spec)
    recs.append(rec)
    wait_broker_ready(rec, port)
    return base, recs, f"127.0.0.1:{port}", cp


@pytest.fixture(scope="module")
def kraft():
    base, recs, bs, cp = _start("kraft39", None, False)
    try:
        yield base, bs, cp
    finally:
        for r in reversed(recs):
            stop(r)
        shutil.rmtree(base, ignore_errors=True)


def test_the_watch_names_an_idempotent_and_a_transactional_producer_on_a_3_9_kraft_source(kraft):
    base, bs, cp = kraft
    topic = f"pw.{RUN}"
    conf = {"bootstrap.servers": bs}
    _topic(conf, topic)
    session = AdminSession("source", conf)
    idem, tx = Writer(conf, topic, False).start(), Writer(conf, topic, True).start()
    try:
        idem.wait()
        tx.wait()
        w = watch(session, [topic], quiet_seconds=3, timeout=8)
    finally:
        idem.stop()
        tx.stop()
    assert not w.quiet and [(m.topic, m.partition) for m in w.moved] == [(topic, 0)], w.summary()
    rows = w.producer_rows()
    named = {r["producer_id"] for r in rows}
    logged = _logged_producers(base / "b", topic, 0, cp)
    assert len(logged) == 2 and sorted(logged.values()) == [False, True], logged  # one idempotent, one transactional
    assert named == set(logged), (rows, logged)  # DescribeProducers names exactly the producers the log holds
    for r in rows:
        assert r["answer"] == "answered" and r["producer_epoch"] >= 0 and r["last_sequence"] >= 0, r
        assert abs(r["last_timestamp"] / 1000 - time.time()) < 600, r
    assert w.moved[0].producer_ids == sorted(named) and w.moved[0].to_dict()["producer_ids"] == sorted(named)
    # the fence's outcome carries the table: a view in text, rows of kind "producer" and "producers" in JSON
    st = fence.FenceState(cluster=bs, cluster_id=None, topics=[topic], authorizer=False)
    o = fence_outcome("cutover fence", FenceResult(st, w, None), {"source": bs})
    assert any(v.title.startswith("producers of the partitions still written") for v in o.views)
    doc = json.loads(json.dumps(o.document(), default=str))
    assert json_shape_problems(doc) == []
    assert {r["producer_id"] for r in doc["rows"] if r.get("kind") == "producer"} == named
    assert {r["producer_id"] for r in doc["producers"]} == named
    assert "producer ids" in w.summary(), w.summary()
    # the helper runs on the 4.x client line too (a Connect image built for Kafka 4.1): the same answer
    on_41 = describe_producers(conf, [(topic, 0)], 30, environ={"MSK_MIGRATE_KAFKA_CLASSPATH": classpath("kafka-target")})
    assert not on_41.unanswered and {r.producer_id for r in on_41.rows} == named, (on_41.rows, on_41.unanswered)


@pytest.mark.parametrize("version,answered", [(versions.kafka_zk_version(), True), (versions.kafka_zk_oldest_version(), False)])
def test_a_zookeeper_source_answers_from_2_8_and_an_older_one_says_it_does_not(version, answered):
    base, recs, bs, _cp = _start(f"zk-{version}", version, True)
    try:
        topic = f"pwz.{RUN}"
        conf = {"bootstrap.servers": bs}
        _topic(conf, topic)
        session = AdminSession("source", conf)
        writer = Writer(conf, topic, False).start()
        try:
            writer.wait()
            w = watch(session, [topic], quiet_seconds=2, timeout=5)
        finally:
            writer.stop()
        (row,) = w.producer_rows()
        if answered:
            assert row["answer"] == "answered" and row["producer_id"] is not None and row["producer_epoch"] == 0, row
        else:
            assert row["producer_id"] is None and row["answer"] == \
                "not answered: the source does not support DescribeProducers (Kafka < 2.8)", row
            assert "Kafka < 2.8" in w.moved[0].to_dict()["producers_answer"]
    finally:
        for r in reversed(recs):
            stop(r)
        shutil.rmtree(base, ignore_errors=True)


# ---- the gate and the operator principal on a SCRAM source under --local ----------------------------------------------
@pytest.fixture(scope="module")
def scram_env():
    from msk_migrate.local.harness import LocalEnvironment
    from msk_migrate.local.shape import make_shape

    base = LOCAL_DIR / "test-env" / f"producers-scram-{os.getpid()}-{RUN}"
    env = LocalEnvironment(base, shape=make_shape(None, 1, 1, "scram-tls"))
    try:
        env.up()
        _topic(env.client_config("source"), "shop.orders", 2)
        yield env, base
    finally:
        env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") != "1")


def _cli(base: Path, *args: str, extra_env: dict[str, str] | None = None, timeout: float = 300) -> tuple[int, str, str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSK_MIGRATE_SOURCE_")}
    env.update({"MSK_MIGRATE_LOCAL_ENV_DIR": str(base), **(extra_env or {})})
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "msk_migrate.commands", *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def _user(env, name: str, topics_describe: list[str]) -> dict[str, str]:
    from msk_migrate.kafka.mm2_acls import AclNeed
    from msk_migrate.local.scram import create_users

    password = secrets.token_urlsafe(18)
    create_users(AdminClient(quiet(env.admin_config("source"))), {name: password})
    env.grant_acls("source", f"User:{name}", [AclNeed("topic", t, "DESCRIBE", "the operator test lists it") for t in topics_describe])
    time.sleep(2)
    return {"MSK_MIGRATE_SOURCE_SASL_USERNAME": name, "MSK_MIGRATE_SOURCE_SASL_PASSWORD": password}


def test_the_gate_with_writers_running_ends_at_the_first_write_within_its_timeout(scram_env):
    env, base = scram_env
    admin = env.client_config("source")  # the harness admin: every right (the operator principal here)
    operator = {"MSK_MIGRATE_SOURCE_SASL_USERNAME": admin["sasl.username"], "MSK_MIGRATE_SOURCE_SASL_PASSWORD": admin["sasl.password"]}
    writer = Writer(admin, "shop.orders", False).start()
    try:
        writer.wait()
        code, out, err, took = _cli(base, "cutover", "check", "--producers", "--local", "--wave", "first", "--timeout", "20",
                                    "--quiet-seconds", "5", "--output", "json", extra_env=operator)
    finally:
        writer.stop()
    assert code == 1, (code, out[-2000:], err[-2000:])
    assert took < 25, took  # --timeout 20 bounds the watch; the rest is the interpreter's and the JVM helper's start
    doc = json.loads(out)
    assert json_shape_problems(doc) == [] and doc["verdict"] == "not-ready", doc
    c3 = next(c for c in doc["conditions"] if c["name"] == "writes stopped")
    assert "shop.orders[" in c3["evidence"] and "no fence on shop.orders" in c3["evidence"], c3
    assert "the watch stopped at the first write" in c3["evidence"], c3  # the answer was known: no wait for --timeout
    assert doc["producers"] and all(r["producer_id"] is not None for r in doc["producers"]), doc["producers"]


def test_the_exported_operator_principal_acts_under_local_and_every_rights_error_names_it(scram_env):
    env, base = scram_env
    ops = _user(env, "ops-limited", ["shop.orders"])
    code, out, err, _ = _cli(base, "cutover", "fence", "--local", "--wave", "first", "--output", "json", extra_env=ops)
    assert code == 2, (code, out[-2000:], err[-2000:])
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert "User:ops-limited lacks the ALTER and DESCRIBE" in line and "exported as MSK_MIGRATE_SOURCE_SASL_USERNAME" in line, line
    doc = json.loads(out)  # exit 2 with --output json: one document of the shape, naming the same
    assert json_shape_problems(doc) == [] and doc["exit_code"] == 2 and "User:ops-limited" in doc["error"], doc
    admin = AdminSession("source", env.admin_config("source"))
    assert fence.state(admin, ["shop.orders"]).fenced == []  # nothing changed
    # without the export the flow's own principal (MirrorMaker 2's) acts, and the error says how to act as another
    code, _out, err, _ = _cli(base, "cutover", "fence", "--local", "--wave", "first")
    assert code == 2 and "User:mm2 lacks the" in err and "no operator principal exported" in err, err


def test_the_gate_names_the_written_partitions_before_a_missing_right(scram_env):
    env, base = scram_env
    ops = _user(env, "ops-reader", ["shop.orders"])
    from msk_migrate.kafka.mm2_acls import AclNeed

    env.grant_acls("source", "User:ops-reader", [AclNeed("topic", "shop.orders", "READ", "the watch reads the written range"),
                                                 AclNeed("group", "*", "DESCRIBE", "the gate lists the groups")])
    writer = Writer(env.client_config("source"), "shop.orders", False).start()
    try:
        writer.wait()
        code, out, err, took = _cli(base, "cutover", "check", "--producers", "--local", "--wave", "first", "--timeout", "20",
                                    "--quiet-seconds", "5", "--output", "json", extra_env=ops)
    finally:
        writer.stop()
    assert code == 2, (code, out[-2000:], err[-2000:])
    doc = json.loads(out)
    c3 = next(c for c in doc["conditions"] if c["name"] == "writes stopped")
    assert "written since the fence: shop.orders[" in c3["evidence"] and "DESCRIBE" in c3["evidence"], c3
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert "User:ops-reader lacks the DESCRIBE" in line and "MSK_MIGRATE_SOURCE_SASL_USERNAME" in line, line
    assert took < 60, took
