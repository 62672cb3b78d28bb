"""The fault suite: faults injected mid-copy into a real MM2 (2 Connect workers in one group), then the
validation job in ``full`` mode counts missing and duplicate records.

Two rigs: the single-broker pair (KRaft source 3.9 -> target 4.1: worker and single-broker faults,
:data:`FAULTS`) and the production shape (:func:`production_shape`: Kafka 2.8 on ZooKeeper with
SCRAM/TLS and ACLs, 3 brokers per side, RF 3, ``min.insync.replicas=2``: rolling restarts, leader changes,
a broker down, network cuts, :data:`PRODUCTION_FAULTS`).

Used by ``tests/faults/test_faults.py`` (CI size, inside ``make test``) and ``tests/faults/run_faults.py``
(``make faults``: full size, writes docs/RELIABILITY.md). Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from msk_migrate import versions
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.apply import apply
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.kafka.produce import produce_waiting
from msk_migrate.local import connect_worker
from msk_migrate.local.harness import LocalEnvironment, wait_for
from msk_migrate.local.procs import stop
from msk_migrate.local.shape import EnvironmentShape, make_shape

from .netcut import NetCut

#: Kafka Connect's default session.timeout.ms is 10 s; SIGSTOP lasts longer so the group evicts the worker.
SIGSTOP_SECONDS = 20
WORKER_SETTINGS = {
    "group_id": "mm2-faults",
    "auto_restart_initial_backoff_seconds": 2,
    "auto_restart_max_backoff_seconds": 10,
}


@dataclass
class FaultResult:
    fault: str
    mode: str  #: at-least-once | exactly-once
    topic: str
    produced: int
    missing: int | None = None
    duplicates: int | None = None
    stalled_s: float = 0.0  #: longest time without target progress after the fault while records waited
    caught_up_s: float = 0.0  #: fault injected -> every record on the target
    verdict: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class FaultRig:
    """One environment for a whole suite run: brokers stay up, worker groups are swapped per mode."""

    def __init__(self, base_dir: Path, records: int, partitions: int = 4, tasks: int = 2,
                 progress: Callable[[str], None] = print, shape: EnvironmentShape | None = None,
                 netcut: bool = False, cut_seconds: float = 60.0, long_fault_seconds: float = 300.0):
        """``shape``: the clusters (None: one 3.9 KRaft broker -> one 4.1 broker). ``netcut``: start the
        workers in a cgroup of their own so :data:`PRODUCTION_FAULTS`' network cuts can isolate them
        (root only: fails at once with one line otherwise). ``cut_seconds``: how long a cut or a broker
        outage lasts. ``long_fault_seconds``: producing time of a rolling restart (it must not end first)."""
        self.base_dir = Path(base_dir)
        self.records = records
        self.partitions = partitions
        self.tasks = tasks
        self.say = progress
        self.mode = "at-least-once"
        self.shape = shape
        self.cut_seconds = cut_seconds
        self.long_fault_seconds = long_fault_seconds
        self.netcut = NetCut() if netcut else None
        self._launch = connect_worker.launch
        if self.netcut is not None:  # every worker this process starts joins the cgroup before it execs
            nc = self.netcut
            connect_worker.launch = lambda name, cmd, *a, **kw: self._launch(name, nc.wrap(cmd), *a, **kw)  # type: ignore[assignment]
        self.env = LocalEnvironment(self.base_dir, workers=2, worker_settings=self._worker_settings(), shape=shape)
        self.marker_dir = self.base_dir / "markers"
        #: records are produced over this long, so every fault lands while MM2 is copying
        self.produce_seconds = max(10.0, records / 2000)

    def _worker_settings(self, group: str | None = None) -> dict:
        rf = self.shape.target.replication_factor if self.shape else 1
        return {**WORKER_SETTINGS, "replication_factor": rf, **({"group_id": group} if group else {})}

    @property
    def source_rf(self) -> int:
        return self.shape.source.replication_factor if self.shape else 1

    @property
    def target_rf(self) -> int:
        return self.shape.target.replication_factor if self.shape else 1

    # ---- lifecycle ------------------------------------------------------------------------
    def up(self, exactly_once: bool = False) -> None:
        self.mode = "exactly-once" if exactly_once else "at-least-once"
        state = self.env.state()
        if state.procs and state.exactly_once != exactly_once:
            self.say(f"restarting the worker group for {self.mode}")
            self._delete_connectors()
            self.env.stop_workers()
        group = WORKER_SETTINGS["group_id"] + ("-eos" if exactly_once else "")
        self.env = LocalEnvironment(self.base_dir, workers=2, exactly_once=exactly_once,
                                    worker_settings=self._worker_settings(group), shape=self.shape)
        self.env.up()
        if self.netcut is not None:
            want = {self.env.proc(self.env.worker_name(i)).pid for i in range(2)}  # type: ignore[union-attr]
            if not want <= set(self.netcut.members()):
                raise RuntimeError(f"workers {sorted(want)} are not in cgroup {self.netcut.rel}: a network cut "
                                   "would not isolate them (were they started before this rig?)")
        self.marker_dir.mkdir(parents=True, exist_ok=True)

    def down(self) -> None:
        try:
            self.env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_FAULT_ENV") != "1")
        finally:
            connect_worker.launch = self._launch  # type: ignore[assignment]
            if self.netcut is not None:
                self.netcut.close()

    def conf(self, role: str) -> dict:
        """librdkafka settings (bootstrap included) of the test's own clients on ``role`` (admin user)."""
        return self.env.client_config(role)

    @property
    def src(self) -> str:
        return self.env.source().bootstrap_servers

    @property
    def tgt(self) -> str:
        return self.env.target().bootstrap_servers

    def _client(self) -> ConnectClient:
        return ConnectClient(self.env.worker_urls()[0])

    def _delete_connectors(self) -> None:
        try:
            client = self._client()
            for name in client.connectors():
                client.delete(name)
        except Exception:
            pass

    # ---- data -----------------------------------------------------------------------------
    def create_topic(self, topic: str) -> None:
        admin = AdminClient(self.env.admin_config("source"))  # keep a reference: futures die with their client
        admin.create_topics([NewTopic(topic, self.partitions, self.source_rf)])[topic].result(60)

    def produce(self, topic: str, seconds: float, progress: list[int], delivered: list[int] | None = None) -> None:
        """Produce ``self.records`` records spread evenly over ``seconds`` (so MM2 is copying while the
        fault hits); ``progress[0]`` counts records handed to the producer, ``delivered[0]`` those the
        source acknowledged. Idempotent, acks=all: no source duplicates, nothing lost on a broker restart."""
        done = delivered if delivered is not None else [0]

        def on_delivery(err, _msg) -> None:
            if err is None:
                done[0] += 1

        p = Producer({**self.conf("source"), "linger.ms": 20, "enable.idempotence": True, "acks": "all",
                      "on_delivery": on_delivery})
        t0 = time.time()
        for i in range(self.records):
            # Values that do not compress to nothing: a sequence number and random bytes.
            value = f"{i:09d}|".encode() + os.urandom(90)
            produce_waiting(p, topic, key=f"k{i}".encode(), value=value)
            progress[0] = i + 1
            ahead = t0 + seconds * (i + 1) / self.records - time.time()
            if ahead > 0.05:
                p.poll(0)
                time.sleep(ahead)
        if p.flush(300) != 0:
            raise RuntimeError(f"{topic}: producer did not deliver every record")

    def ends(self, bootstrap: str, topic: str) -> dict[int, int]:
        conf = self.conf("source") if bootstrap == self.src else self.conf("target")
        c = Consumer({**conf, "group.id": f"faults-{uuid.uuid4().hex[:6]}"})
        try:
            md = c.list_topics(topic, timeout=10).topics.get(topic)
            if md is None or md.error is not None:
                return {}
            return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions}
        finally:
            c.close()

    def _safe_total(self, topic: str) -> int:
        try:
            return sum(self.ends(self.tgt, topic).values())
        except Exception:
            return -1

    # ---- one scenario -----------------------------------------------------------------------
    def run(self, fault: str, inject: Callable[[FaultRig, str, str], list[str]], timeout: float = 600) -> FaultResult:
        """Produce, start MM2, inject ``fault`` once ~30 % of the records are on the target, wait for all."""
        tag = uuid.uuid4().hex[:6]
        topic = f"fault-{fault}-{'eos' if self.mode == 'exactly-once' else 'alo'}-{tag}"
        name = f"f{tag}"
        self.create_topic(topic)
        produced = self.records
        spec = MigrationSpec(name=name, topics=[topic], tasks_max=self.tasks, replication_factor=self.target_rf,
                             internal_replication_factor=self.target_rf, refresh_topics_interval_seconds=2,
                             emit_checkpoints=True, emit_heartbeats_interval_seconds=1,
                             exactly_once=self.mode == "exactly-once")
        configs = render_connectors(self.env.source(), self.env.target(), spec)
        src_name = spec.connector_names()["source"]
        self.current_marker = self.marker_dir / f"{tag}.fired"
        if fault == "task-fails-once":
            configs[src_name].update({
                "transforms": "failonce",
                "transforms.failonce.type": "io.mskmigrate.connect.faults.FailOnce",
                "transforms.failonce.marker.file": str(self.current_marker),
                "transforms.failonce.after.records": str(max(1, self.records // (3 * self.tasks))),
            })
        client = self._client()
        apply(client, {src_name: configs[src_name]}, wait=True, timeout=180)
        result = FaultResult(fault=fault, mode=self.mode, topic=topic, produced=produced)
        progress, delivered = [0], [0]
        errors: list[BaseException] = []
        # Long faults (a rolling restart, a 60 s cut) must not outlast the producing: records keep arriving.
        seconds = max(self.produce_seconds, PRODUCE_SECONDS.get(fault, lambda rig: 0.0)(self))

        def produce() -> None:
            try:
                self.produce(topic, seconds, progress, delivered)
            except BaseException as exc:
                errors.append(exc)

        self.say(f"[{self.mode}] {fault}: producing {produced:,} records to {topic} over {seconds:.0f} s")
        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        try:
            wait_for(lambda: progress[0] >= produced * 0.3 and self._safe_total(topic) > 0, 300,
                     what=f"{topic}: 30 % produced and copying", interval=0.2)
            samples: list[tuple[float, int]] = []
            stop_sampling = threading.Event()

            def sample() -> None:  # target progress during AND after the fault, every 0.25 s
                while not stop_sampling.is_set():
                    total = self._safe_total(topic)
                    if total >= 0:  # a reading that failed (a broker down) is no reading, not "no progress"
                        samples.append((time.time(), total))
                    stop_sampling.wait(0.25)

            sampler = threading.Thread(target=sample, daemon=True)
            t0 = time.time()
            sampler.start()
            self.say(f"[{self.mode}] {fault}: injecting at {self._safe_total(topic):,} records on the target")
            try:
                result.notes += inject(self, src_name, topic)
                producer.join(timeout)
                if producer.is_alive() or errors:
                    raise RuntimeError(f"{topic}: producing failed: {errors[:1] or 'still running'}")
                result.caught_up_s = self._watch(topic, t0, timeout)
            finally:
                stop_sampling.set()
                sampler.join(5)
            result.stalled_s = longest_stall(samples, t0)
        finally:
            self._delete_connectors_named([src_name])
        self.say(f"[{self.mode}] {fault}: caught up after {result.caught_up_s:.1f} s (longest stall {result.stalled_s:.1f} s)")
        return result

    def _delete_connectors_named(self, names: list[str]) -> None:
        for url in self.env.worker_urls():
            try:
                for n in names:
                    ConnectClient(url).delete(n)
                return
            except Exception:
                continue

    def _watch(self, topic: str, t0: float, timeout: float) -> float:
        """Seconds from ``t0`` until every source record has an offset on the target (bounded)."""
        source_end = self.ends(self.src, topic)
        deadline = t0 + timeout
        while time.time() < deadline:
            try:
                tgt = self.ends(self.tgt, topic)
            except Exception:
                tgt = {}
            if tgt and all(tgt.get(p, 0) >= e for p, e in source_end.items()):
                return round(time.time() - t0, 1)
            time.sleep(0.25)
        raise TimeoutError(f"{topic}: target did not catch up within {timeout:.0f}s of the fault")

    # ---- verdict ----------------------------------------------------------------------------
    def validate(self, results: list[FaultResult], spark=None) -> None:
        """One validation run (full mode) over every scenario topic; fills missing/duplicates."""
        from msk_migrate.validation import ValidationRequest, run_validation

        time.sleep(3)  # let in-flight transactions (EOS) commit before the snapshot
        req = ValidationRequest(source=self.env.source(), target=self.env.target(),
                                topics=[r.topic for r in results], mode="full", grace_seconds=0,
                                timestamp_slack_seconds=60, allow_duplicates=True, sample_size=3)
        report = run_validation(req, spark=spark)
        by_topic = {t.topic: t for t in report.topics}
        for r in results:
            t = by_topic[r.topic]
            counts = t.counts()
            r.missing = counts["missing"]
            r.duplicates = counts["duplicates"]
            r.verdict = t.status


def longest_stall(samples: list[tuple[float, int]], t0: float) -> float:
    """Longest interval after ``t0`` in which the target's end offsets did not grow (time to recover).
    The producer writes without pause until the fault is over and sampling stops once the target has
    caught up, so every flat interval is one in which records were waiting. Failed readings (a broker
    down) are left out of ``samples`` by the sampler: they are no evidence of either."""
    last_total, last_change, stall = None, t0, 0.0
    for t, total in samples:
        if last_total is None:
            last_total = total
            continue
        if total > last_total:
            stall = max(stall, t - last_change)
            last_total, last_change = total, t
    return round(stall, 1)


# ---- the faults -------------------------------------------------------------------------------
def _worker_running_task(rig: FaultRig, connector: str) -> int:
    st = rig._client().status(connector)
    worker_id = st["tasks"][0]["worker_id"]
    for i, url in enumerate(rig.env.worker_urls()):
        if url.endswith(worker_id.split(":")[-1]):
            return i
    return 0


def kill9_worker(rig: FaultRig, connector: str, topic: str) -> list[str]:
    """kill -9 the worker running task 0; ECS would start a replacement: so does this after 5 s."""
    idx = _worker_running_task(rig, connector)
    rec = rig.env.proc(rig.env.worker_name(idx))
    os.kill(rec.pid, signal.SIGKILL)
    time.sleep(5)
    rig.env.restart_worker(idx)
    return [f"killed {rig.env.worker_name(idx)} (pid {rec.pid}) with SIGKILL, replacement started after 5 s"]


def restart_target_broker(rig: FaultRig, connector: str, topic: str) -> list[str]:
    rec = rig.env.proc("target-broker")
    stop(rec)
    time.sleep(3)
    rig.env.up()
    return ["target broker stopped (SIGTERM) and started again on the same port"]


def restart_source_broker(rig: FaultRig, connector: str, topic: str) -> list[str]:
    rec = rig.env.proc("source-broker")
    stop(rec)
    time.sleep(3)
    rig.env.up()
    return ["source broker stopped (SIGTERM) and started again on the same port"]


def sigstop_worker(rig: FaultRig, connector: str, topic: str) -> list[str]:
    idx = _worker_running_task(rig, connector)
    rec = rig.env.proc(rig.env.worker_name(idx))
    os.kill(rec.pid, signal.SIGSTOP)
    try:
        time.sleep(SIGSTOP_SECONDS)
    finally:
        os.kill(rec.pid, signal.SIGCONT)
    return [f"SIGSTOP {rig.env.worker_name(idx)} for {SIGSTOP_SECONDS} s (> session.timeout.ms 10 s), then SIGCONT"]


def task_fails_once(rig: FaultRig, connector: str, topic: str) -> list[str]:
    wait_for(rig.current_marker.exists, 120, what="the injected task failure", interval=0.2)
    return ["a FailOnce transformation threw once; the auto-restart extension restarted the task"]


FAULTS: dict[str, Callable[[FaultRig, str, str], list[str]]] = {
    "kill-9-worker": kill9_worker,
    "restart-target-broker": restart_target_broker,
    "sigstop-worker": sigstop_worker,
    "restart-source-broker": restart_source_broker,
    "task-fails-once": task_fails_once,
}


# ---- faults that production brings (the 3-broker shape) ------------------------------------------
def production_shape() -> EnvironmentShape:
    """What SREs migrate from and to: Kafka 2.8 on ZooKeeper with SCRAM-SHA-512/TLS and ACLs, 3 brokers
    (RF 3, min.insync.replicas=2) -> 3 brokers of the target Kafka (MSK's shape)."""
    return make_shape(source_kafka=versions.kafka_zk_version(), source_brokers=3, target_brokers=3)


def _leaders(rig: FaultRig, role: str, topic: str) -> dict[int, int]:
    """partition -> leader broker id of ``topic`` on ``role``."""
    admin = AdminClient(rig.env.admin_config(role))
    md = admin.list_topics(topic, timeout=20).topics[topic]
    return {p: pm.leader for p, pm in md.partitions.items()}


def _wait_fully_replicated(rig: FaultRig, role: str, timeout: float = 300) -> float:
    """Wait until every partition of ``role`` has its whole replica set in sync (what MSK waits for before
    it patches the next broker); seconds it took."""
    admin = AdminClient(rig.env.admin_config(role))
    t0 = time.time()

    def in_sync() -> bool:
        try:
            md = admin.list_topics(timeout=10)
        except Exception:
            return False
        return all(len(pm.isrs) == len(pm.replicas) and pm.leader >= 0
                   for t in md.topics.values() for pm in t.partitions.values())

    wait_for(in_sync, timeout, what=f"every {role} partition back in sync", interval=1.0)
    return round(time.time() - t0, 1)


def _busiest_broker(rig: FaultRig, role: str, topic: str) -> int:
    """The broker leading most of ``topic``'s partitions on ``role`` (the one whose loss hurts most)."""
    leaders = list(_leaders(rig, role, topic).values())
    return max(set(leaders), key=leaders.count)


def _wait_topic_on_target(rig: FaultRig, topic: str) -> None:
    wait_for(lambda: bool(rig.ends(rig.tgt, topic)), 120, what=f"{topic} on the target", interval=1.0)


def rolling_restart_target(rig: FaultRig, connector: str, topic: str) -> list[str]:
    """What MSK patching does: every target broker in turn, a controlled shutdown (SIGTERM), start, and
    the next one only once every partition is fully in sync again."""
    notes = []
    for node in (n["id"] for n in rig.env.broker_ports("target")):
        t0 = time.time()
        rig.env.stop_broker("target", node)
        down = time.time() - t0
        rig.env.start_broker("target", node)
        back = time.time() - t0
        sync = _wait_fully_replicated(rig, "target")
        notes.append(f"broker {node}: stopped in {down:.0f} s, serving again after {back:.0f} s, in sync {sync:.0f} s later")
    return ["target brokers restarted one by one (SIGTERM = controlled shutdown, next after full ISR): "
            + "; ".join(notes)]


def target_broker_down(rig: FaultRig, connector: str, topic: str) -> list[str]:
    """One target broker (the one leading most of the topic's partitions) gone for ``cut_seconds``."""
    _wait_topic_on_target(rig, topic)
    node = _busiest_broker(rig, "target", topic)
    rig.env.stop_broker("target", node, kill=True)
    time.sleep(rig.cut_seconds)
    rig.env.start_broker("target", node)
    sync = _wait_fully_replicated(rig, "target")
    return [f"target broker {node} (leader of most of the topic's partitions) killed (SIGKILL), down "
            f"{rig.cut_seconds:.0f} s, started again; every partition in sync {sync:.0f} s after its start"]


def source_broker_restart(rig: FaultRig, connector: str, topic: str) -> list[str]:
    """Restart the source broker leading most of the topic (Kafka 2.8 on ZooKeeper: the controller in
    ZooKeeper moves its leaderships, then the preferred leaders return)."""
    node = _busiest_broker(rig, "source", topic)
    before = _leaders(rig, "source", topic)
    rig.env.stop_broker("source", node)
    time.sleep(3)
    rig.env.start_broker("source", node)
    sync = _wait_fully_replicated(rig, "source")
    return [f"source broker {node} (led partitions {sorted(p for p, b in before.items() if b == node)}) stopped "
            f"(SIGTERM) and started again on its ports; every partition in sync {sync:.0f} s after its start"]


def _java_admin_properties(rig: FaultRig, path: Path) -> Path:
    """Kafka's own tools' client settings for the source's admin (SCRAM over TLS when secured); 0600."""
    conf = rig.conf("source")
    lines = [f"bootstrap.servers={conf['bootstrap.servers']}"]
    if conf.get("sasl.username"):
        lines += ["security.protocol=SASL_SSL", f"sasl.mechanism={conf.get('sasl.mechanism', 'SCRAM-SHA-512')}",
                  "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                  f"username=\"{conf['sasl.username']}\" password=\"{conf['sasl.password']}\";",
                  "ssl.truststore.type=PEM", f"ssl.truststore.location={conf['ssl.ca.location']}"]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def source_leader_change(rig: FaultRig, connector: str, topic: str) -> list[str]:
    """Move every leader of the topic to another in-sync replica while all brokers stay up (what a
    partition reassignment or ``kafka-leader-election`` after a rebalance does): the replica lists are
    rotated with Kafka's own ReassignPartitionsCommand (same replicas, new preferred leader), then a
    preferred leader election (ElectLeaders) makes the new first replica the leader."""
    import json
    import subprocess

    from confluent_kafka import ElectionType

    from msk_migrate.local.classpath import classpath

    admin = AdminClient(rig.env.admin_config("source"))
    md = admin.list_topics(topic, timeout=20).topics[topic]
    before = {p: pm.leader for p, pm in md.partitions.items()}
    plan = {"version": 1, "partitions": [
        {"topic": topic, "partition": p, "replicas": pm.replicas[1:] + pm.replicas[:1]}
        for p, pm in md.partitions.items()]}
    work = rig.base_dir / "leader-change"
    work.mkdir(parents=True, exist_ok=True)
    (work / "plan.json").write_text(json.dumps(plan))
    props = _java_admin_properties(rig, work / "admin.properties")
    cp = classpath("kafka-zk" if rig.shape and rig.shape.source.mode == "zookeeper" else "kafka-source")
    try:
        done = subprocess.run(["java", "-Xmx256m", "-cp", cp, "kafka.admin.ReassignPartitionsCommand",
                               "--bootstrap-server", rig.conf("source")["bootstrap.servers"],
                               "--command-config", str(props), "--reassignment-json-file",
                               str(work / "plan.json"), "--execute"], capture_output=True, text=True, timeout=180)
    finally:
        props.unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"reassignment failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    want = {p["partition"]: p["replicas"][0] for p in plan["partitions"]}

    def reordered() -> bool:
        m = admin.list_topics(topic, timeout=10).topics[topic]
        return all(m.partitions[p].replicas[0] == want[p] for p in want)

    wait_for(reordered, 120, what="the rotated replica lists", interval=1.0)
    tps = [TopicPartition(topic, p) for p in want]
    for tp, err in admin.elect_leaders(ElectionType.PREFERRED, tps).result(timeout=60).items():
        if err is not None:
            raise RuntimeError(f"preferred election of {tp.topic}-{tp.partition} failed: {err}")
    wait_for(lambda: _leaders(rig, "source", topic) == want, 120, what="the new leaders", interval=1.0)
    moved = sum(1 for p in want if want[p] != before[p])
    return [f"all brokers up; {moved} of {len(want)} partition leaders moved (replica lists rotated by "
            f"ReassignPartitionsCommand, then a preferred leader election): {before} -> {want}"]


def _cluster_ports(rig: FaultRig, role: str) -> list[int]:
    ports = [p for n in rig.env.broker_ports(role) for p in n["ports"].values()]
    if not ports:
        raise RuntimeError(f"no {role} broker ports recorded")
    return ports


def _cut_from(role: str) -> Callable[[FaultRig, str, str], list[str]]:
    def cut(rig: FaultRig, connector: str, topic: str) -> list[str]:
        if rig.netcut is None:
            raise RuntimeError("this rig was built without netcut=True: its workers cannot be cut off")
        ports = _cluster_ports(rig, role)
        members = rig.netcut.members()
        with rig.netcut.cutting(ports):
            time.sleep(rig.cut_seconds)
        return [f"both workers (cgroup {rig.netcut.rel}: {len(members)} processes) cut off from every {role} "
                f"broker port ({len(ports)} ports, packets dropped both ways by iptables) for "
                f"{rig.cut_seconds:.0f} s, then healed; the test's clients and the other cluster kept their network"]

    cut.__name__ = f"netcut_{role}"
    cut.__doc__ = f"The workers' TCP to every {role} broker blackholed for ``cut_seconds``, then restored."
    return cut


PRODUCTION_FAULTS: dict[str, Callable[[FaultRig, str, str], list[str]]] = {
    "rolling-restart-target": rolling_restart_target,
    "source-leader-change": source_leader_change,
    "target-broker-down": target_broker_down,
    "restart-source-broker-zk": source_broker_restart,
    "netcut-worker-target": _cut_from("target"),
    "netcut-worker-source": _cut_from("source"),
}

#: How long a fault takes at least, so the records are produced over a longer time (never idle mid-fault).
PRODUCE_SECONDS: dict[str, Callable[[FaultRig], float]] = {
    "rolling-restart-target": lambda rig: rig.long_fault_seconds,
    "target-broker-down": lambda rig: rig.cut_seconds + 90,
    "netcut-worker-target": lambda rig: rig.cut_seconds + 60,
    "netcut-worker-source": lambda rig: rig.cut_seconds + 60,
    "restart-source-broker-zk": lambda rig: rig.long_fault_seconds / 3,
    "source-leader-change": lambda rig: rig.long_fault_seconds / 3,
}
