"""Monitoring on real parts: Kafka 3.9 source -> MM2 on Connect 3.9 AND Connect 4.1 -> Kafka 4.1 target,
the real JMX agent with prometheus/jmx-exporter/kafka-connect-mm2.yaml, a real Prometheus (Debian
package) started by msk_migrate.local.prometheus with the real rule files.

- The exporter rules give the same metric names and label names on a Kafka 3.9.2 and a 4.1.2 worker.
- Every PromQL query of every dashboard panel returns data during replication (except event-only ones).
- A task that really fails (a record larger than the producer's max.request.size) raises
  KafkaConnectTaskFailed: the rule's real expression returns the task via the query API, and the alert
  goes pending -> firing; after the fix it clears. Prometheus evaluates a generated copy of the rule
  files whose `for:` is 4s (rules_for_override); expressions and labels are the real ones.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import uuid

import pytest
import requests
from confluent_kafka import Consumer, Producer

from msk_migrate import versions
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.apply import apply
from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError
from msk_migrate.connectors.render import render_connectors
from msk_migrate.local import prometheus as prom
from msk_migrate.local.connect_worker import local_worker_spec, start_connect_worker, wait_connect_ready
from msk_migrate.local.harness import wait_for
from msk_migrate.local.procs import stop
from tests.kafka_helpers import create_topic

from .promql import alert_rules, dashboard_queries
from .test_jmx_exporter_rules import CONTRACT

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
WORKERS = {"kafka-3.9": versions.kafka_version(), "kafka-4.1": versions.kafka_target_version()}


def _spec(name: str) -> MigrationSpec:
    return MigrationSpec(
        name=name, topics=[f"{name}-.*"], groups=[f"{name}-.*"], tasks_max=2, replication_factor=1,
        internal_replication_factor=1, emit_checkpoints_interval_seconds=1, sync_group_offsets_interval_seconds=1,
        emit_heartbeats_interval_seconds=1, refresh_topics_interval_seconds=2, refresh_groups_interval_seconds=2,
        offset_lag_max=10,
    )


class Traffic(threading.Thread):
    """Producers write to every topic and one consumer group per topic reads and commits, until stopped."""

    def __init__(self, bootstrap: str, topic_groups: dict[str, str]):
        super().__init__(daemon=True)
        self.bootstrap, self.topic_groups = bootstrap, topic_groups
        self.halt = threading.Event()
        self.errors: list[BaseException] = []

    def run(self):
        try:
            p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})
            consumers = [
                Consumer({"bootstrap.servers": self.bootstrap, "group.id": g, "auto.offset.reset": "earliest",
                          "enable.auto.commit": True, "auto.commit.interval.ms": 500})
                for g in self.topic_groups.values()
            ]
            for c, t in zip(consumers, self.topic_groups, strict=False):
                c.subscribe([t])
            i = 0
            while not self.halt.is_set():
                for t in self.topic_groups:
                    for _ in range(10):
                        p.produce(t, key=str(i % 11).encode(), value=b"v" * 200)
                        i += 1
                p.poll(0)
                for c in consumers:
                    c.consume(100, timeout=0.05)
                time.sleep(0.1)
            p.flush(10)
            for c in consumers:
                c.close()
        except BaseException as exc:
            self.errors.append(exc)


def parse_exposition(text: str) -> dict[str, set[frozenset[str]]]:
    """metric name -> set of label-name sets, from a Prometheus text exposition."""
    fam: dict[str, set[frozenset[str]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s", line)
        if not m:
            continue
        labels = frozenset(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"', m.group(3) or ""))
        fam.setdefault(m.group(1), set()).add(labels)
    return fam



@pytest.fixture(scope="module")
def live(local_env):
    """Both workers replicating, traffic flowing, Prometheus scraping both with the real rules."""
    status = local_env.status()
    src = local_env.source().bootstrap_servers
    base = local_env.base_dir / f"monitoring-{RUN}"
    w39 = ConnectClient(status["connect"]["url"])
    metrics39 = status["connect"]["metrics_url"]

    # A second Connect cluster (own group) on the Kafka 4.x runtime, through the image entrypoint.
    spec41 = local_worker_spec(group_id=f"mon41-connect-{RUN}")
    started: dict = {}

    def start41():
        try:
            rec = start_connect_worker(local_env.target(), base / "connect-4.1", spec41, source=local_env.source(),
                                       kafka_version=WORKERS["kafka-4.1"], name="connect-4.1")
            started["rec"] = rec
            wait_connect_ready(rec, f"http://127.0.0.1:{spec41.rest_port}", timeout=180)
        except BaseException as exc:
            started["error"] = exc

    t41 = threading.Thread(target=start41)
    t41.start()

    names = {"kafka-3.9": f"mon39{RUN}", "kafka-4.1": f"mon41{RUN}"}
    topics = {w: f"{n}-orders" for w, n in names.items()}
    for t in topics.values():
        create_topic(src, t, partitions=3)
    traffic = Traffic(src, {t: f"{names[w]}-billing" for w, t in topics.items()})
    traffic.start()
    configs = {w: render_connectors(local_env.source(), local_env.target(), _spec(n)) for w, n in names.items()}
    apply(w39, configs["kafka-3.9"], wait=True, timeout=120)

    t41.join()
    if "error" in started:
        traffic.halt.set()
        if "rec" in started:
            stop(started["rec"])
        raise started["error"]
    w41 = ConnectClient(f"http://127.0.0.1:{spec41.rest_port}")
    metrics41 = f"http://127.0.0.1:{spec41.metrics_port}/metrics"
    apply(w41, configs["kafka-4.1"], wait=True, timeout=120)

    hostport = lambda url: url.split("//", 1)[1].split("/", 1)[0]  # noqa: E731
    server = prom.start_prometheus(
        {hostport(metrics39): {"worker": "kafka-3.9"}, hostport(metrics41): {"worker": "kafka-4.1"}},
        base / "prometheus", rules_for_override="4s",
    )
    ctx = {
        "prom": server, "clients": {"kafka-3.9": w39, "kafka-4.1": w41},
        "metrics": {"kafka-3.9": metrics39, "kafka-4.1": metrics41}, "topics": topics, "names": names,
        "configs": configs, "source": src,
    }
    try:
        yield ctx
    finally:
        traffic.halt.set()
        traffic.join(15)
        prom.stop_prometheus(server)
        for name in configs["kafka-3.9"]:
            with contextlib.suppress(Exception):
                w39.delete(name)
        stop(started["rec"])
    assert not traffic.errors, traffic.errors


def test_exporter_rules_give_the_same_names_and_labels_on_kafka_3_9_and_4_1(live):
    def families():
        out = {}
        for worker, url in live["metrics"].items():
            fam = parse_exposition(requests.get(url, timeout=10).text)
            out[worker] = {k: v for k, v in fam.items() if k.startswith("kafka_connect_")}
        ready = all(set(CONTRACT) <= set(f) for f in out.values()) and out["kafka-3.9"].keys() == out["kafka-4.1"].keys()
        return out if ready else None

    try:
        fams = wait_for(families, 90, "every contract metric on both workers", interval=2)
    except AssertionError:
        last = {w: parse_exposition(requests.get(u, timeout=10).text) for w, u in live["metrics"].items()}
        missing = {w: sorted(set(CONTRACT) - set(f)) for w, f in last.items()}
        only = {w: sorted(k for k in last[w] if k.startswith("kafka_connect_") and k not in last[o])
                for w, o in (("kafka-3.9", "kafka-4.1"), ("kafka-4.1", "kafka-3.9"))}
        raise AssertionError(f"missing contract metrics: {missing}; families on one worker only: {only}") from None
    assert fams["kafka-3.9"] == fams["kafka-4.1"]
    for name, labels in CONTRACT.items():
        assert fams["kafka-3.9"][name] == {frozenset(labels)}, name

    # The same Prometheus series from both workers, each replicating its own topic (4.x: source= MBeans).
    for worker, topic in live["topics"].items():
        q = f'kafka_connect_mirror_source_records_total{{worker="{worker}", topic="{topic}"}}'
        got = wait_for(lambda q=q: (r := prom.query(live["prom"].url, q)) and len(r) == 3 and r, 30, q)
        assert {r["metric"]["partition"] for r in got} == {"0", "1", "2"}, (worker, got)
        assert set(got[0]["metric"]) == {"__name__", "job", "instance", "worker", "target", "topic", "partition"}
    versions_seen = {r["metric"]["worker"]: r["metric"]["version"]
                     for r in prom.query(live["prom"].url, 'kafka_connect_worker_version{job="kafka-connect"}')}
    assert versions_seen == WORKERS


def test_every_dashboard_panel_returns_data_during_replication(live):
    url = live["prom"].url
    # MSK panels need MSK brokers (checked by test_grafana and the rules' unit tests instead); the proof panels
    # are fed by the follower, which test_follow_monitoring scrapes with a real Prometheus.
    queries = [q for q in dashboard_queries() if not q.event_only and not q.needs_msk and not q.needs_follower]

    def empty():
        return [q.where for q in queries if not prom.query(url, q.concrete())]

    deadline = time.time() + 90
    missing = empty()
    while missing and time.time() < deadline:
        time.sleep(3)
        missing = empty()
    assert not missing, "panels without data during a real replication:\n  " + "\n  ".join(missing)


def test_a_really_failed_task_fires_kafka_connect_task_failed_and_it_clears_after_the_fix(live):
    url = live["prom"].url
    client = live["clients"]["kafka-3.9"]
    name = f"{live['names']['kafka-3.9']}-poison"
    topic = f"monpoison{RUN}"
    rule = next(r for r in alert_rules() if r["alert"] == "KafkaConnectTaskFailed")

    # A record larger than the producer may send: the task's send callback fails -> task FAILED.
    create_topic(live["source"], topic, partitions=1)
    p = Producer({"bootstrap.servers": live["source"]})
    p.produce(topic, value=b"x" * 20000)
    p.flush(10)
    base = dict(live["configs"]["kafka-3.9"][f"{live['names']['kafka-3.9']}-source"])
    base.pop("name", None)
    base.update({"topics": topic, "tasks.max": "1"})
    broken = {**base, "producer.override.max.request.size": "1024"}
    client.put_config(name, broken)
    try:
        def task_failed():
            try:
                return any(t["state"] == "FAILED" for t in client.status(name).get("tasks", []))
            except ConnectRestError as exc:  # 404 until the worker has written the first status
                if exc.status != 404:
                    raise
                return False

        wait_for(task_failed, 60, f"{name} task FAILED")

        # The rule's own expression, as written in prometheus/rules/mm2-alerts.yml, finds the task.
        hit = wait_for(lambda: [r for r in prom.query(url, rule["expr"]) if r["metric"]["connector"] == name],
                       30, "the real KafkaConnectTaskFailed expression to return the task")
        assert hit[0]["metric"]["task"] == "0" and hit[0]["metric"]["worker"] == "kafka-3.9"

        seen: set[str] = set()

        def firing():
            for a in prom.query(url, f'ALERTS{{alertname="KafkaConnectTaskFailed", connector="{name}"}}'):
                seen.add(a["metric"]["alertstate"])
                if a["metric"]["alertstate"] == "firing":
                    return a["metric"]
            return None

        labels = wait_for(firing, 40, "KafkaConnectTaskFailed firing", interval=0.5)
        assert "pending" in seen and labels["severity"] == "critical"
        api = requests.get(f"{url}/api/v1/alerts", timeout=10).json()["data"]["alerts"]
        (alert,) = [a for a in api if a["labels"]["alertname"] == "KafkaConnectTaskFailed" and a["labels"]["connector"] == name]
        assert alert["annotations"]["runbook_url"] == "docs/runbooks/alerts.md#kafkaconnecttaskfailed"

        # The fix: allow the record's size; the task restarts, replicates it, and the alert clears.
        client.put_config(name, base)
        wait_for(lambda: [t["state"] for t in client.status(name).get("tasks", [])] == ["RUNNING"], 60,
                 f"{name} task RUNNING after the fix")
        wait_for(lambda: not prom.query(url, f'ALERTS{{alertname="KafkaConnectTaskFailed", connector="{name}"}}'),
                 40, "KafkaConnectTaskFailed to clear")
        assert not [r for r in prom.query(url, rule["expr"]) if r["metric"]["connector"] == name]
    finally:
        client.delete(name)
