"""The config fence (``max.message.bytes=0``, runbook/producers/config_fence.py) against real brokers and real
clients: the Java producer of kafka-clients 2.8, 3.9 and 4.1 (idempotent and transactional; acks 0/1 and batch
splitting with ``MSK_MIGRATE_FENCE_MATRIX=full``) and librdkafka (confluent-kafka). For each: zero records
appended after the fence returned, what the client reported, and the topic's settings identical after the unfence;
the same after a kill -9 between two topics (fence and unfence each re-run); a super user fenced on a SCRAM source
with an authorizer; and the bad input (one line naming --fence, nothing changed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate.access.admin import AdminSession, quiet
from msk_migrate.access.offsets import end_offsets, partitions
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.errors import UsageError
from msk_migrate.ledger import open_ledger
from msk_migrate.local.broker import BrokerSecurity, BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.runbook.producers import config_fence
from msk_migrate.runbook.producers.cutover import fence_and_record, unfence_and_record
from msk_migrate.runbook.producers.operations import fence_outcome
from msk_migrate.runbook.producers.wave import Wave

from .pki import ThrowawayCA

RUN = uuid.uuid4().hex[:6]
PROBE = Path(__file__).parent / "java" / "FenceProbe.java"
JAVA = {"2.8": "kafka-zk", "3.9": "kafka-source", "4.1": "kafka-target"}
FULL = os.environ.get("MSK_MIGRATE_FENCE_MATRIX") == "full"


def _broker(name: str, security: BrokerSecurity | None = None):
    base = LOCAL_DIR / "test-env" / f"config-fence-{name}-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    spec = BrokerSpec("source", "3.9", classpath("kafka-source"), base / "b", auto_create_topics=False, security=security,
                      name=f"config-fence-{name}")
    rec, port = start_broker(spec)
    return base, spec, rec, port


@pytest.fixture(scope="module")
def source():
    base, _spec, rec, port = _broker("plain")
    try:
        wait_broker_ready(rec, port)
        yield f"127.0.0.1:{port}"
    finally:
        stop(rec)
        shutil.rmtree(base, ignore_errors=True)


def _migration(sync: bool = False) -> MigrationSpec:
    return MigrationSpec(name="fx", topics=["fx\\..*"], groups=["fx-.*"], sync_topic_configs=sync)


def _session(conf: dict, sync: bool = False) -> Any:  # the parts of a MigrationSession the fence uses
    return SimpleNamespace(source=AdminSession("source", conf), migration=_migration(sync))


def _topic(bs: str, name: str, explicit: str | None, conf: dict | None = None) -> None:
    admin = AdminClient(quiet({**(conf or {}), "bootstrap.servers": bs}))
    cfg = {"max.message.bytes": explicit} if explicit else {}
    for f in admin.create_topics([NewTopic(name, 1, 1, config=cfg)]).values():
        f.result(60)
    time.sleep(1)


def _overrides(session: AdminSession, topics: list[str]) -> dict:
    return {t: dict(c.overrides) for t, c in session.topic_configs(topics).items()}


class LibrdkafkaWriter:
    """confluent-kafka writing from a thread: idempotent, or transactional (5 records per transaction)."""

    def __init__(self, conf: dict, topic: str, mode: str):
        extra = {"enable.idempotence": True, "acks": "all"} if mode != "acks1" else {"enable.idempotence": False, "acks": "1"}
        if mode == "transactional":
            extra.update({"transactional.id": f"fx-rd-{topic}", "transaction.timeout.ms": 10000})
        self.p = Producer(quiet({**conf, **extra, "linger.ms": 20, "message.timeout.ms": 6000}))
        self.topic, self.mode = topic, mode
        self.acked = 0
        self.errors: Counter[str] = Counter()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _cb(self, err, msg) -> None:
        if err is None:
            self.acked += 1
        else:
            self.errors[f"{err.name()} retriable={err.retriable()}"] += 1

    def _run(self) -> None:
        tx = self.mode == "transactional"
        if tx:
            self.p.init_transactions(30)
        i = 0
        while not self._stop.is_set():
            try:
                if tx:
                    self.p.begin_transaction()
                for _ in range(5):
                    self.p.produce(self.topic, key=f"k{i}".encode(), value=f"v{i}".encode(), on_delivery=self._cb)
                    i += 1
                if tx:
                    self.p.commit_transaction(10)
                    time.sleep(1.0)  # a gap longer than the fence takes to go on (check, set, check again)
                else:
                    self.p.poll(0.05)
            except KafkaException as exc:
                err = exc.args[0]
                self.errors[f"{err.name()} (txn: abortable={err.txn_requires_abort()})"] += 1
                if tx:
                    try:
                        self.p.abort_transaction(10)
                    except KafkaException as exc2:
                        self.errors[f"abort: {exc2.args[0].name()}"] += 1
                        return
                time.sleep(0.2)
        self.p.flush(10)

    def start(self):
        self._t.start()
        return self

    def stop(self) -> str:
        self._stop.set()
        self._t.join(40)
        return f"acked {self.acked}; " + ", ".join(f"{k} x{v}" for k, v in sorted(self.errors.items()))


class JavaWriter:
    def __init__(self, bs: str, topic: str, version: str, mode: str):
        self.proc = subprocess.Popen(["java", "-cp", classpath(JAVA[version]), str(PROBE), bs, topic, mode, "120"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def start(self):
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip() == "started", line
        return self

    def stop(self) -> str:
        out, _ = self.proc.communicate("stop\n", timeout=60)
        lines = [ln for ln in out.splitlines() if ln and ln != "done"]
        return "; ".join(lines)


def _wait_written(s: AdminSession, topic: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(end_offsets(s, partitions(s, [topic])).values()) > 0:
            return
        time.sleep(0.5)
    raise AssertionError(f"the producer wrote nothing to {topic} within {timeout} s")


def _fence_until_fenced(s, book, topics, mode="config", tries=15):
    """The fence, again while it finds a transaction open: the transactional writers commit every second, and the
    fence goes on only in a gap between two transactions (a loaded machine may miss several gaps)."""
    for _ in range(tries):
        o = fence_outcome("cutover fence", fence_and_record(s, book, Wave.of(None, topics), 2.0, 20.0, lambda m: None, mode), {})
        if o.verdict != "transaction-open":
            return o
        time.sleep(0.3)
    return o


CLIENTS = [("java", v, m) for v in ("2.8", "3.9", "4.1") for m in ("idempotent", "transactional")] + \
          [("librdkafka", "2.8", m) for m in ("idempotent", "transactional")] + \
          ([("java", "3.9", m) for m in ("acks0", "acks1", "acksall")] + [("librdkafka", "2.8", "acks1")] if FULL else [])


@pytest.mark.parametrize("client,version,mode", CLIENTS, ids=[f"{c}-{v}-{m}" for c, v, m in CLIENTS])
def test_no_record_appended_after_the_config_fence_and_the_unfence_restores_the_setting(source, tmp_path, client, version, mode):
    topic = f"fx.{client}.{version}.{mode}.{uuid.uuid4().hex[:6]}"
    _topic(source, topic, "2097152" if mode == "transactional" else None)  # an explicit value and the default
    s = _session({"bootstrap.servers": source})
    before = _overrides(s.source, [topic])
    book = open_ledger(str(tmp_path / "ledger"), "fx")
    writer = (JavaWriter(source, topic, version, mode) if client == "java" else
              LibrdkafkaWriter({"bootstrap.servers": source}, topic, mode)).start()
    try:
        _wait_written(s.source, topic)
        o = _fence_until_fenced(s, book, [topic])
        assert o.verdict in ("fenced", "writes-seen"), (o.verdict, o.notes)
        fenced_at = end_offsets(s.source, partitions(s.source, [topic]))
        time.sleep(4)  # the writer keeps trying
        assert end_offsets(s.source, partitions(s.source, [topic])) == fenced_at, "a record was appended after the fence"
    finally:
        report = writer.stop()
    print(f"\n{client} {version} {mode}: {report}")
    assert end_offsets(s.source, partitions(s.source, [topic])) == fenced_at
    # every record sent after the fence failed on the client (what each reports: docs/runbooks/migration.md step 11)
    assert ("error" in report or "MSG_SIZE_TOO_LARGE" in report or mode == "acks0"), report
    held = book.read().get("topic", topic).previous_config
    assert held == {"value": "2097152" if mode == "transactional" else "1048588", "explicit": mode == "transactional"}, held
    u = unfence_and_record(s, book, Wave.of(None, [topic]))
    assert u.verdict == "unfenced", u
    assert _overrides(s.source, [topic]) == before
    assert book.read().get("topic", topic).previous_config == {}


KILL_BETWEEN = """
import os, signal, sys
from types import SimpleNamespace
from typing import Any
from msk_migrate.access.admin import AdminSession
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.ledger import open_ledger
from msk_migrate.runbook.producers import config_fence
from msk_migrate.runbook.producers import cutover
from msk_migrate.runbook.producers.wave import Wave
bs, ledger_dir, what, *topics = sys.argv[1:]
real, calls = config_fence._alter, []
def alter(session, ops, validate_only, why):
    if not validate_only:
        calls.append(ops)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # between the first topic and the second
    return real(session, ops, validate_only, why)
config_fence._alter = alter
s = SimpleNamespace(source=AdminSession("source", {"bootstrap.servers": bs}),
                    migration=MigrationSpec(name="fx", topics=["fx\\\\..*"], groups=["fx-.*"], sync_topic_configs=False))
book = open_ledger(ledger_dir, "fx")
if what == "fence":
    cutover.fence_and_record(s, book, Wave.of(None, topics), 1.0, 5.0, lambda m: None, "config")
else:
    cutover.unfence_and_record(s, book, Wave.of(None, topics))
"""


def test_a_kill_9_between_two_topics_then_fence_and_unfence_again_leave_the_settings_as_before(source, tmp_path):
    a, b = f"fx.kill.a.{uuid.uuid4().hex[:6]}", f"fx.kill.b.{uuid.uuid4().hex[:6]}"
    _topic(source, a, "2097152")
    _topic(source, b, None)
    s = _session({"bootstrap.servers": source})
    before = _overrides(s.source, [a, b])
    ledger_dir = str(tmp_path / "ledger")

    def killed(what: str) -> None:
        p = subprocess.run([sys.executable, "-c", KILL_BETWEEN, source, ledger_dir, what, a, b], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == -9, (p.returncode, p.stderr[-2000:])

    killed("fence")
    assert config_fence.carriers(s.source, [a, b]) == [a]  # one topic fenced, the other as it was
    book = open_ledger(ledger_dir, "fx")
    assert book.read().state_of("topic", b) == "fencing"
    o = fence_outcome("cutover fence", fence_and_record(s, book, Wave.of(None, [a, b]), 1.0, 10.0, lambda m: None, "config"), {})
    assert o.verdict == "fenced", o.notes
    assert config_fence.carriers(s.source, [a, b]) == [a, b]
    assert book.read().get("topic", a).previous_config == {"value": "2097152", "explicit": True}
    assert book.read().get("topic", b).previous_config == {"value": "1048588", "explicit": False}
    killed("unfence")
    assert config_fence.carriers(s.source, [a, b]) == [b]
    assert unfence_and_record(s, book, Wave.of(None, [a, b])).verdict == "unfenced"
    assert _overrides(s.source, [a, b]) == before


def test_bad_input_names_the_option_and_changes_nothing(source, tmp_path):
    t = f"fx.bad.{uuid.uuid4().hex[:6]}"
    _topic(source, t, None)
    book = open_ledger(str(tmp_path / "ledger"), "fx")
    # MirrorMaker 2 would copy the fence to the target
    with pytest.raises(UsageError) as e:
        fence_and_record(_session({"bootstrap.servers": source}, sync=True), book, Wave.of(None, [t]), 1.0, 5.0, lambda m: None, "config")
    assert e.value.field == "--fence" and "config.properties.exclude" in str(e.value), str(e.value)
    s = _session({"bootstrap.servers": source})
    assert _overrides(s.source, [t]) == {t: {}}
    # an unfence with no recorded previous setting
    admin = AdminClient({"bootstrap.servers": source})
    config_fence._alter(s.source, {t: ("0", config_fence.AlterConfigOpType.SET)}, False, "test")
    with pytest.raises(UsageError) as e:
        unfence_and_record(s, book, Wave.of(None, [t]))
    assert e.value.field == "--fence" and "holds no previous setting" in str(e.value), str(e.value)
    # ... and a fence of it (it already has the fence's value, nothing recorded)
    with pytest.raises(UsageError) as e:
        fence_and_record(s, book, Wave.of(None, [t]), 1.0, 5.0, lambda m: None, "config")
    assert "holds no previous setting" in str(e.value)
    assert _overrides(s.source, [t]) == {t: {"max.message.bytes": "0"}}
    del admin


@pytest.fixture(scope="module")
def scram_source():
    base = LOCAL_DIR / "test-env" / f"config-fence-scram-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    ca = ThrowawayCA()
    (base / "ca.pem").write_text(ca.pem)
    users = {"admin": uuid.uuid4().hex, "app": uuid.uuid4().hex}
    sec = BrokerSecurity(ca_pem=base / "ca.pem", keystore_pem=ca.write_keystore_pem(ca.issue("localhost", server=True), base / "ks.pem"),
                         scram_users=users, super_users=("User:ANONYMOUS", "User:admin"))
    spec = BrokerSpec("source", "3.9", classpath("kafka-source"), base / "b", auto_create_topics=False, security=sec,
                      name="config-fence-scram")
    rec, port = start_broker(spec)
    try:
        wait_broker_ready(rec, port)

        def conf(user: str) -> dict:
            return {"bootstrap.servers": f"127.0.0.1:{spec.ports['SASL_SSL']}", "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": users[user],
                    "ssl.ca.location": str(base / "ca.pem")}
        yield SimpleNamespace(conf=conf, plain=f"127.0.0.1:{port}")
    finally:
        stop(rec)
        shutil.rmtree(base, ignore_errors=True)


def test_a_super_user_is_fenced_on_a_scram_source_by_the_config_fence_beside_the_acl(scram_source, tmp_path):
    t = f"fx.super.{uuid.uuid4().hex[:6]}"
    _topic(scram_source.plain, t, None)
    s = _session(scram_source.conf("admin"))  # User:admin is a super user: the ACL does not bind it
    assert config_fence.super_users_declared(s.source) is True
    book = open_ledger(str(tmp_path / "ledger"), "fx")
    writer = LibrdkafkaWriter(scram_source.conf("admin"), t, "idempotent").start()
    try:
        _wait_written(s.source, t)
        o = fence_outcome("cutover fence", fence_and_record(s, book, Wave.of(None, [t]), 2.0, 20.0, lambda m: None, "auto"), {})
        assert o.verdict == "fenced" and o.extra["fence"] == ["acl", "config"], (o.verdict, o.extra.get("fence"), o.notes)
        fenced_at = end_offsets(s.source, partitions(s.source, [t]))
        time.sleep(3)
        assert end_offsets(s.source, partitions(s.source, [t])) == fenced_at
    finally:
        report = writer.stop()
    print(f"\nsuper user (librdkafka, idempotent): {report}")
    assert "MSG_SIZE_TOO_LARGE" in report, report
    assert unfence_and_record(s, book, Wave.of(None, [t])).verdict == "unfenced"
    assert _overrides(s.source, [t]) == {t: {}}


def test_an_acl_fence_a_super_user_writes_through_is_reported_once_its_writes_outlast_the_quiet_period(scram_source, tmp_path):
    t = f"fx.superacl.{uuid.uuid4().hex[:6]}"
    _topic(scram_source.plain, t, None)
    s = _session(scram_source.conf("admin"))
    book = open_ledger(str(tmp_path / "ledger"), "fx")
    writer = LibrdkafkaWriter(scram_source.conf("admin"), t, "idempotent").start()
    try:
        _wait_written(s.source, t)
        t0 = time.monotonic()
        o = fence_outcome("cutover fence", fence_and_record(s, book, Wave.of(None, [t]), 2.0, 120.0, lambda m: None, "acl"), {})
        took = time.monotonic() - t0
    finally:
        writer.stop()
    # the DENY does not bind a super user: its writes go on past the quiet period, and the answer is known then
    assert o.verdict == "writes-seen" and o.exit_code == 1, (o.verdict, o.notes)
    assert took < 60, f"the fence watched {took:.0f} s: it should stop at the first write after its 2 s quiet period"
    assert unfence_and_record(s, book, Wave.of(None, [t])).verdict == "unfenced"
    # a principal the source refuses AlterConfigs: one line naming --fence and the grant, nothing changed
    with pytest.raises(UsageError) as e:
        fence_and_record(_session(scram_source.conf("app")), open_ledger(str(tmp_path / "l2"), "fx"), Wave.of(None, [t]), 1.0, 5.0,
                         lambda m: None, "config")
    assert e.value.field in ("--fence", "source ACLs"), (e.value.field, str(e.value))
    assert _overrides(s.source, [t]) == {t: {}}
