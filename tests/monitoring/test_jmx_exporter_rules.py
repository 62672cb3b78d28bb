"""The JMX exporter rules against MBeans recorded from real Kafka Connect 3.9.2 and 4.1.2 workers.

Offline (no JVM): tests/monitoring/jmx_rules.py models the agent's matching. The live test
(test_live_monitoring.py) checks the same properties on the real agent of both workers.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from .jmx_rules import Rules, recorded
from .promql import JMX_RULES, alert_rules, dashboard_queries, metric_names

DATA = Path(__file__).parent / "data"
VERSIONS = ["3.9.2", "4.1.2"]

#: metric -> its exact label names (the contract the alerts and dashboards rely on).
CONTRACT = {
    "kafka_connect_mirror_source_records_total": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_bytes_total": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_record_rate": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_byte_rate": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_record_age_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_record_age_avg_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_record_age_max_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_record_age_min_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_replication_latency_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_replication_latency_avg_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_replication_latency_max_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_source_replication_latency_min_seconds": {"target", "topic", "partition"},
    "kafka_connect_mirror_checkpoint_latency_seconds": {"source", "target", "group", "topic", "partition"},
    "kafka_connect_mirror_checkpoint_latency_avg_seconds": {"source", "target", "group", "topic", "partition"},
    "kafka_connect_mirror_checkpoint_latency_max_seconds": {"source", "target", "group", "topic", "partition"},
    "kafka_connect_connector_status": {"connector", "status"},
    "kafka_connect_connector_class": {"connector", "class"},
    "kafka_connect_task_status": {"connector", "task", "status"},
    "kafka_connect_worker_connector_tasks": {"connector", "state"},
    "kafka_connect_worker_rebalancing": set(),
    "kafka_connect_worker_rebalances_completed_total": set(),
    "kafka_connect_worker_version": {"version"},
    "kafka_connect_mirror_source_consumer_records_lag": {"source", "target", "connector", "task", "topic", "partition"},
    "kafka_connect_mirror_source_consumer_records_lag_max": {"source", "target", "connector", "task", "topic", "partition"},
    "kafka_connect_mirror_source_consumer_records_consumed_rate": {"source", "target", "connector", "task"},
    "kafka_connect_task_producer_record_error_total": {"connector", "task"},
    "kafka_connect_task_producer_record_retry_total": {"connector", "task"},
    "kafka_connect_source_task_source_record_write_records_total": {"connector", "task"},
}

#: Exported by the agent itself (client_java JVM/process collectors), not by the rules.
AGENT_METRICS = {"jvm_memory_used_bytes", "jvm_memory_max_bytes", "jvm_gc_collection_seconds_sum",
                 "jvm_threads_current", "process_cpu_seconds_total"}
PROMETHEUS_METRICS = {"up", "ALERTS"}


def follower_metrics() -> set[str]:
    """What the proof follower's endpoint exposes (msk-migrate validate --follow --metrics-port), read from its
    own exposition of one partition rather than listed here."""
    from msk_migrate.validation.follow.metrics import PartitionSample, exposition

    text = exposition([PartitionSample("t", 0, 1, 1.0, 1, False, False)], last_pass_s=1.0)
    return {line.split("{", 1)[0].split(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")}


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules(JMX_RULES)


@pytest.fixture(scope="module")
def samples(rules) -> dict[str, list]:
    return {v: rules.apply_all(recorded(DATA / f"mbeans-kafka-{v}.txt")) for v in VERSIONS}


def _families(samples) -> dict[str, frozenset[str]]:
    fam: dict[str, set] = {}
    for s in samples:
        fam.setdefault(s.name, set()).add(s.label_names)
    assert all(len(v) == 1 for v in fam.values()), {k: v for k, v in fam.items() if len(v) > 1}
    return {k: next(iter(v)) for k, v in fam.items()}


def test_rules_file_keeps_lowercase_names_and_is_the_one_used_by_image_and_local_worker():
    from msk_migrate.paths import JMX_EXPORTER_RULES

    assert JMX_EXPORTER_RULES.resolve() == JMX_RULES.resolve()
    cfg = yaml.safe_load(JMX_RULES.read_text())
    assert cfg["lowercaseOutputName"] is True
    assert all(set(r) <= {"pattern", "name", "type", "help", "labels", "value", "valueFactor"} for r in cfg["rules"])


def test_both_recordings_really_differ_in_the_mirror_source_mbean_shape():
    three = (DATA / "mbeans-kafka-3.9.2.txt").read_text()
    four = (DATA / "mbeans-kafka-4.1.2.txt").read_text()
    assert "kafka.connect.mirror<type=MirrorSourceConnector, target=target, topic=orders, partition=0>" in three
    assert "kafka.connect.mirror<type=MirrorSourceConnector, source=" not in three
    assert "kafka.connect.mirror<type=MirrorSourceConnector, source=source, target=target, topic=orders, partition=0>" in four


@pytest.mark.parametrize("version", VERSIONS)
def test_every_contract_metric_is_produced_with_exactly_its_labels(samples, version):
    fam = _families(samples[version])
    missing = sorted(set(CONTRACT) - set(fam))
    assert not missing, f"Kafka {version}: not produced: {missing}"
    wrong = {m: sorted(fam[m]) for m, labels in CONTRACT.items() if fam[m] != labels}
    assert not wrong, f"Kafka {version}: wrong label names: {wrong}"


def test_kafka_3_and_4_produce_the_same_metric_names_and_label_names(samples):
    assert _families(samples["3.9.2"]) == _families(samples["4.1.2"])


@pytest.mark.parametrize("version", VERSIONS)
def test_no_two_attributes_collapse_into_the_same_series(samples, version):
    dup = [s for s, n in Counter(samples[version]).items() if n > 1]
    assert not dup, f"Kafka {version}: several MBean attributes map to one series: {dup[:5]}"


@pytest.mark.parametrize("version", VERSIONS)
def test_label_values_are_clean(samples, version):
    by_name = {}
    for s in samples[version]:
        by_name.setdefault(s.name, []).append(s)
    lag = by_name["kafka_connect_mirror_source_consumer_records_lag"]
    assert {(s.label("source"), s.label("target"), s.label("connector")) for s in lag} == {("source", "target", "mm2-source")}
    assert {s.label("task") for s in lag} == {"0", "1"}
    assert {s.label("status") for s in by_name["kafka_connect_task_status"]} == {"running"}
    assert {s.label("connector") for s in by_name["kafka_connect_connector_status"]} == {"mm2-source", "mm2-checkpoint", "mm2-heartbeat"}
    assert {(s.label("topic"), s.label("partition")) for s in by_name["kafka_connect_mirror_source_records_total"]} == {
        ("orders", "0"), ("orders", "1"), ("orders", "2"), ("payments", "0"), ("payments", "1")}
    assert {s.label("group") for s in by_name["kafka_connect_mirror_checkpoint_latency_seconds"]} == {"billing"}
    assert {s.label("version") for s in by_name["kafka_connect_worker_version"]} == {version}
    errors = by_name["kafka_connect_task_producer_record_error_total"]
    assert {(s.label("connector"), s.label("task")) for s in errors} == {
        ("mm2-source", "0"), ("mm2-source", "1"), ("mm2-checkpoint", "0"), ("mm2-heartbeat", "0")}
    assert not any('"' in v for s in samples[version] for _, v in s.labels), "quotes of quoted MBean values leaked"


def test_every_metric_in_alerts_and_dashboards_is_produced(samples):
    produced = set(_families(samples["3.9.2"])) | AGENT_METRICS | PROMETHEUS_METRICS | follower_metrics()
    used = {}
    # MSK's own open-monitoring exporters (rules/msk-brokers.yml, panels sourced from MSK) are not ours.
    msk_alerts = {r["alert"] for r in alert_rules(only="msk-brokers.yml")}
    for r in alert_rules():
        if r["alert"] in msk_alerts:
            continue
        for m in metric_names(r["expr"]):
            used.setdefault(m, f"alert {r['alert']}")
    for q in dashboard_queries():
        if q.needs_msk:
            continue
        for m in metric_names(q.expr):
            used.setdefault(m, q.where)
    unknown = {m: where for m, where in used.items() if m not in produced}
    assert not unknown, f"metrics nobody exports: {unknown}"
