"""The fault suite: faults injected mid-copy into a real MM2 (2 Connect workers in one group, KRaft
source 3.9 and target 4.1), then the validation job in ``full`` mode counts missing and duplicate records.

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

from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect.apply import apply
from msk_migrate.connect.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.local.harness import LocalEnvironment, wait_for
from msk_migrate.local.procs import stop

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
    stalled_s: float = 0.0  #: longest time without target progress after the fault (time to recover)
    caught_up_s: float = 0.0  #: fault injected -> every record on the target
    verdict: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class FaultRig:
    """One environment for a whole suite run: brokers stay up, worker groups are swapped per mode."""

    def __init__(self, base_dir: Path, records: int, partitions: int = 4, tasks: int = 2,
                 progress: Callable[[str], None] = print):
        self.base_dir = Path(base_dir)
        self.records = records
        self.partitions = partitions
        self.tasks = tasks
        self.say = progress
        self.mode = "at-least-once"
        self.env = LocalEnvironment(self.base_dir, workers=2, worker_settings=WORKER_SETTINGS)
        self.marker_dir = self.base_dir / "markers"
        #: records are produced over this long, so every fault lands while MM2 is copying
        self.produce_seconds = max(10.0, records / 2000)

    # ---- lifecycle ------------------------------------------------------------------------
    def up(self, exactly_once: bool = False) -> None:
        self.mode = "exactly-once" if exactly_once else "at-least-once"
        state = self.env._load()
        if state.get("procs") and bool(state.get("exactly_once")) != exactly_once:
            self.say(f"restarting the worker group for {self.mode}")
            self._delete_connectors()
            self.env.stop_workers()
        group = WORKER_SETTINGS["group_id"] + ("-eos" if exactly_once else "")
        self.env = LocalEnvironment(self.base_dir, workers=2, exactly_once=exactly_once,
                                    worker_settings={**WORKER_SETTINGS, "group_id": group})
        self.env.up()
        self.marker_dir.mkdir(parents=True, exist_ok=True)

    def down(self) -> None:
        self.env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_FAULT_ENV") != "1")

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
        admin = AdminClient({"bootstrap.servers": self.src})  # keep a reference: futures die with their client
        admin.create_topics([NewTopic(topic, self.partitions, 1)])[topic].result(60)

    def produce(self, topic: str, seconds: float, progress: list[int]) -> None:
        """Produce ``self.records`` records spread evenly over ``seconds`` (so MM2 is copying while the
        fault hits); ``progress[0]`` counts records handed to the producer. Idempotent: no source duplicates."""
        p = Producer({"bootstrap.servers": self.src, "linger.ms": 20, "enable.idempotence": True})
        t0 = time.time()
        for i in range(self.records):
            # Values that do not compress to nothing: a sequence number and random bytes.
            value = f"{i:09d}|".encode() + os.urandom(90)
            while True:
                try:
                    p.produce(topic, key=f"k{i}".encode(), value=value)
                    break
                except BufferError:
                    p.poll(0.1)
            progress[0] = i + 1
            ahead = t0 + seconds * (i + 1) / self.records - time.time()
            if ahead > 0.05:
                p.poll(0)
                time.sleep(ahead)
        if p.flush(300) != 0:
            raise RuntimeError(f"{topic}: producer did not deliver every record")

    def ends(self, bootstrap: str, topic: str) -> dict[int, int]:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"faults-{uuid.uuid4().hex[:6]}"})
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
        spec = MigrationSpec(name=name, topics=[topic], tasks_max=self.tasks, replication_factor=1,
                             internal_replication_factor=1, refresh_topics_interval_seconds=2,
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
        progress = [0]
        errors: list[BaseException] = []

        def produce() -> None:
            try:
                self.produce(topic, self.produce_seconds, progress)
            except BaseException as exc:
                errors.append(exc)

        self.say(f"[{self.mode}] {fault}: producing {produced:,} records to {topic} over {self.produce_seconds:.0f} s")
        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        try:
            wait_for(lambda: progress[0] >= produced * 0.3 and self._safe_total(topic) > 0, 300,
                     what=f"{topic}: 30 % produced and copying", interval=0.2)
            samples: list[tuple[float, int]] = []
            stop_sampling = threading.Event()

            def sample() -> None:  # target progress during AND after the fault, every 0.25 s
                while not stop_sampling.is_set():
                    samples.append((time.time(), self._safe_total(topic)))
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
    """Longest interval after ``t0`` in which the target's end offsets did not grow (time to recover)."""
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
