#!/usr/bin/env python3
"""Grafana dashboards for msk-migrate, as code. Writes grafana/dashboards/*.json (checked in).

    python grafana/generate.py           # (re)write the JSON files
    python grafana/generate.py --check   # exit 1 when a checked-in file differs from this generator

No dependency beyond the standard library (and msk_migrate.kafka.names, itself standard library only,
for the MM2 class names): each panel is a small dict built by the helpers below, in
Grafana's dashboard JSON model (schemaVersion 39, Grafana 10–12). Every query uses only metric names
produced by prometheus/jmx-exporter/kafka-connect-mm2.yaml (or the agent's JVM metrics), the same on
Kafka 3.9 and 4.x workers. tests/monitoring checks that the JSON equals this output, and that every
query returns data during a real local replication, except the panels marked event_only=True (listed
in docs/monitoring.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "dashboards"
sys.path.insert(0, str(HERE.parent / "python"))  # msk_migrate without an installed package

from msk_migrate.kafka.names import CHECKPOINT_CONNECTOR_CLASS as CHECKPOINT_CLASS  # noqa: E402

#: uid of the provisioned Prometheus datasource (grafana/provisioning/datasources/prometheus.yaml).
DATASOURCE_UID = "prometheus"
DS = {"type": "prometheus", "uid": "${datasource}"}

# ---------------------------------------------------------------------------- building blocks


def target(expr: str, legend: str = "", ref: str = "A", instant: bool = False, fmt: str = "time_series") -> dict:
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref}
    if instant:
        t.update({"instant": True, "range": False, "format": fmt})
    else:
        t.update({"range": True, "instant": False})
    return t


def _targets(queries) -> list[dict]:
    out = []
    for i, q in enumerate(queries):
        expr, legend = q if isinstance(q, tuple) else (q, "")
        out.append(target(expr, legend, ref=chr(ord("A") + i)))
    return out


def timeseries(title, queries, unit, description, *, w=12, h=8, stack=False, min_zero=True, event_only=False):
    panel = {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": _targets(queries),
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "min": 0 if min_zero else None,
                "custom": {
                    "drawStyle": "line",
                    "lineWidth": 1,
                    "fillOpacity": 10,
                    "showPoints": "never",
                    "spanNulls": False,
                    "stacking": {"mode": "normal" if stack else "none", "group": "A"},
                },
            },
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"], "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "_size": (w, h),
        "_event_only": event_only,
    }
    if not min_zero:
        del panel["fieldConfig"]["defaults"]["min"]
    return panel


def stat(title, expr, unit, description, *, thresholds=None, w=4, h=4, legend="", event_only=False):
    steps = thresholds or [{"color": "green", "value": None}]
    return {
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": [target(expr, legend)],
        "fieldConfig": {
            "defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}, "color": {"mode": "thresholds"}},
            "overrides": [],
        },
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "background",
            "graphMode": "area",
            "textMode": "auto",
            "justifyMode": "auto",
            "orientation": "auto",
        },
        "_size": (w, h),
        "_event_only": event_only,
    }


def table(title, expr, description, *, columns, w=12, h=8, event_only=False, value_header="Value"):
    """Instant table of the series' labels; ``columns``: label names to show, in order."""
    order = {c: i for i, c in enumerate(columns)}
    order["Value"] = len(columns)
    exclude = {"Time": True, "__name__": True, "job": True, "environment": True, "dns_name": True}
    return {
        "type": "table",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": [target(expr, instant=True, fmt="table")],
        "fieldConfig": {"defaults": {"custom": {"align": "auto", "filterable": True}}, "overrides": []},
        "options": {"showHeader": True, "cellHeight": "sm", "footer": {"show": False}},
        "transformations": [
            {
                "id": "organize",
                "options": {"excludeByName": exclude, "indexByName": order, "renameByName": {"Value": value_header}},
            }
        ],
        "_size": (w, h),
        "_event_only": event_only,
    }


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "_size": (24, 1), "_event_only": False}


RED_AT_1 = [{"color": "green", "value": None}, {"color": "red", "value": 1}]
RED_BELOW_1 = [{"color": "red", "value": None}, {"color": "green", "value": 1}]


def layout(panels: list[dict]) -> list[dict]:
    """Flow panels left to right in 24 columns; rows start a new line. Assigns ids and gridPos."""
    x = y = line_h = 0
    out = []
    for i, p in enumerate(panels, start=1):
        w, h = p.pop("_size")
        event_only = p.pop("_event_only")
        if p["type"] == "row" or x + w > 24:
            x, y, line_h = 0, y + line_h, 0
        p = {"id": i, "gridPos": {"h": h, "w": w, "x": x, "y": y}, **p}
        if event_only:
            p["description"] += " Event-only: empty while nothing of the kind happens."
        out.append(p)
        if p["type"] == "row":
            y += 1
        else:
            x += w
            line_h = max(line_h, h)
    return out


def variable_datasource():
    return {
        "name": "datasource",
        "label": "Datasource",
        "type": "datasource",
        "query": "prometheus",
        "current": {"selected": False, "text": "Prometheus", "value": DATASOURCE_UID},
        "hide": 0,
        "refresh": 1,
        "regex": "",
        "options": [],
    }


def variable_query(name, label, query):
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DS,
        "definition": query,
        "query": {"query": query, "refId": f"{name}-variable"},
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
        "regex": "",
        "options": [],
    }


def dashboard(uid, title, description, panels, variables, links):
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["msk-migrate", "mirrormaker2", "kafka-connect"],
        "timezone": "browser",
        "editable": False,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "weekStart": "",
        "annotations": {
            "list": [
                {
                    "builtIn": 1,
                    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                    "enable": True,
                    "hide": True,
                    "iconColor": "rgba(0, 211, 255, 1)",
                    "name": "Annotations & Alerts",
                    "type": "dashboard",
                }
            ]
        },
        "links": links,
        "templating": {"list": variables},
        "panels": layout(panels),
    }


def link(title, uid):
    return {"title": title, "type": "link", "url": f"/d/{uid}", "icon": "dashboard", "targetBlank": False,
            "keepTime": True, "includeVars": False, "asDropdown": False, "tags": [], "tooltip": ""}


# ---------------------------------------------------------------------------- dashboards

T = 'topic=~"$topic"'
C = 'connector=~"$connector"'
INST = 'instance=~"$instance"'
CONNECT = 'job="kafka-connect"'
CKPT_CONNECTORS = f'max by (connector) (kafka_connect_connector_class{{class="{CHECKPOINT_CLASS}"}})'


def replication_dashboard() -> dict:
    panels = [
        row("Overview"),
        stat("Connect workers up", f"sum(up{{{CONNECT}}})", "none",
             "Connect workers (ECS tasks) that answer Prometheus scrapes.", thresholds=RED_BELOW_1),
        stat("Failed connectors", f'count(kafka_connect_connector_status{{status="failed", {C}}}) or vector(0)', "none",
             "Connectors in state FAILED (alert KafkaConnectConnectorFailed).", thresholds=RED_AT_1),
        stat("Failed tasks", f'sum(kafka_connect_worker_connector_tasks{{state="failed", {C}}}) or vector(0)', "none",
             "Tasks in state FAILED across all workers (alert KafkaConnectTaskFailed).", thresholds=RED_AT_1),
        stat("Replication lag", f"sum(kafka_connect_mirror_source_consumer_records_lag{{{T}, {C}}})", "short",
             "Records on the source not yet read by MM2 (sum over the selected topics).",
             thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 10000}]),
        stat("Replicated records/s", f"sum(rate(kafka_connect_mirror_source_records_total{{{T}}}[$__rate_interval]))", "cps",
             "Records written to the target per second (selected topics)."),
        stat("Firing alerts", 'count(ALERTS{alertstate="firing"}) or vector(0)', "none",
             "Prometheus alerts firing now; see the Firing alerts table and docs/runbooks/alerts.md.",
             thresholds=RED_AT_1),

        row("Replication latency and record age"),
        timeseries("Replication latency by topic (avg)",
                   [(f"max by (topic) (kafka_connect_mirror_source_replication_latency_avg_seconds{{{T}}} >= 0)", "{{topic}}")],
                   "s", "Time from a record's timestamp on the source to its ack by the target, averaged over Kafka's "
                        "metric window, worst partition per topic. Gaps: no record replicated in the window. "
                        "Alert MM2ReplicationLatencyHigh above 60s for 10m.", w=8),
        timeseries("Replication latency by topic (max)",
                   [(f"max by (topic) (kafka_connect_mirror_source_replication_latency_max_seconds{{{T}}} >= 0)", "{{topic}}")],
                   "s", "Slowest record per topic within Kafka's metric window.", w=8),
        timeseries("Record age by topic (avg)",
                   [(f"max by (topic) (kafka_connect_mirror_source_record_age_avg_seconds{{{T}}} >= 0)", "{{topic}}")],
                   "s", "Age of the records MM2 polls from the source (now - record timestamp): how far MM2 is behind "
                        "the producers. High during the initial copy. Alert MM2RecordAgeHigh above 5m for 15m.", w=8),

        row("Throughput"),
        timeseries("Records replicated per second by topic",
                   [(f"sum by (topic) (rate(kafka_connect_mirror_source_records_total{{{T}}}[$__rate_interval]))", "{{topic}}")],
                   "cps", "MirrorSourceConnector record-count, as a rate.", w=8, stack=True),
        timeseries("Bytes replicated per second by topic",
                   [(f"sum by (topic) (rate(kafka_connect_mirror_source_bytes_total{{{T}}}[$__rate_interval]))", "{{topic}}")],
                   "Bps", "MirrorSourceConnector byte-count, as a rate.", w=8, stack=True),
        timeseries("Source tasks: records polled vs written",
                   [(f"sum by (connector) (rate(kafka_connect_source_task_source_record_poll_records_total{{{C}}}[$__rate_interval]))", "{{connector}} polled"),
                    (f"sum by (connector) (rate(kafka_connect_source_task_source_record_write_records_total{{{C}}}[$__rate_interval]))", "{{connector}} written")],  # noqa: E501
                   "cps", "Connect's view of every MM2 connector: records polled from the source and written to the target.", w=8),

        row("Lag"),
        timeseries("MM2 consumer lag by topic",
                   [(f"sum by (topic) (kafka_connect_mirror_source_consumer_records_lag{{{T}, {C}}})", "{{topic}}")],
                   "short", "Records on the source that MM2's replication consumer has not fetched yet, per topic. Should "
                            "trend to ~0 before cutover. Alert MM2ConsumerLagHigh above 10000 and not decreasing.", w=12),
        timeseries("MM2 consumer lag, top 10 partitions",
                   [(f"topk(10, kafka_connect_mirror_source_consumer_records_lag{{{T}, {C}}})", "{{topic}}-{{partition}}")],
                   "short", "The ten partitions furthest behind.", w=12),
        # beside replication lag: how far the proof (`validate --follow`, docs/follow.md) trails the source.
        # FOLLOWER_SOURCE in a description marks a panel fed by the follower's endpoint (tests group them by it).
        timeseries("Proof lag by topic",
                   [(f"sum by (topic) (msk_migrate_proof_lag_records{{{T}}})", "{{topic}}")],
                   "short", "Source records past the verified-up-to mark of `msk-migrate validate --follow` (compared and "
                            "matched on the target in order): replication lag plus the follower's own. Zero when every "
                            "replicated record is proven. " + FOLLOWER_SOURCE, w=8),
        timeseries("Proof lag age by topic",
                   [(f"max by (topic) (msk_migrate_proof_lag_seconds{{{T}}})", "{{topic}}")],
                   "s", "Age of the oldest source record not yet proven, worst partition per topic. Alert ProofLagHigh "
                        "above 10 minutes for 5 minutes. " + FOLLOWER_SOURCE, w=8),
        timeseries("Proof mismatches and truncations",
                   [(f"sum(msk_migrate_proof_mismatch{{{T}}}) or vector(0)", "mismatch"),
                    (f"sum(msk_migrate_proof_truncated{{{T}}}) or vector(0)", "truncated")],
                   "none", "Partitions whose mark stopped at a differing record (alert ProofMismatch) or whose source "
                           "retention passed the mark (alert ProofTruncated). The mark file names the first difference. " + FOLLOWER_SOURCE,
                   w=8),

        row("Checkpoints (consumer group offsets)"),
        timeseries("Checkpoint latency by group (last checkpoint)",
                   [(f"max by (group, topic) (kafka_connect_mirror_checkpoint_latency_seconds{{{T}}})", "{{group}} / {{topic}}")],
                   "s", "Time MM2 took to translate and emit the latest checkpoint of each consumer group and topic "
                        "(MirrorCheckpointConnector checkpoint-latency-ms).", w=12),
        timeseries("Checkpoints emitted per second",
                   [(f"sum by (connector) (rate(kafka_connect_source_task_source_record_write_records_total{{{C}}}[$__rate_interval]) "
                     f"* on (connector) group_left() {CKPT_CONNECTORS})", "{{connector}}")],
                   "cps", "Checkpoint records written by MirrorCheckpointConnector tasks: zero while records flow means "
                          "group offsets on the target stop advancing (alert MM2CheckpointsStalled).", w=12),

        row("Connectors and tasks"),
        table("Connector state", f"max by (connector, status) (kafka_connect_connector_status{{{C}}})",
              "Current state of every connector (one row per connector; 'status' is the state).",
              columns=["connector", "status"], w=8),
        table("Task state", f"max by (connector, task, status, instance) (kafka_connect_task_status{{{C}}})",
              "Current state of every task and the worker running it.", columns=["connector", "task", "status", "instance"], w=8),
        timeseries("Tasks by state", [(f"sum by (state) (kafka_connect_worker_connector_tasks{{{C}}})", "{{state}}")],
                   "none", "Tasks of the selected connectors per state, over time.", w=8),
        table("Firing alerts", 'ALERTS{alertstate="firing"}', "Alerts firing now, with their labels.",
              columns=["alertname", "severity", "connector", "task", "topic", "instance"], w=24, h=6, event_only=True),
    ]
    variables = [
        variable_datasource(),
        variable_query("connector", "Connector", "label_values(kafka_connect_connector_status, connector)"),
        variable_query("topic", "Topic", "label_values(kafka_connect_mirror_source_records_total, topic)"),
    ]
    return dashboard(
        "msk-migrate-mm2-replication",
        "MSK migration: MirrorMaker 2 replication",
        "Replication progress of the migration to Amazon MSK: latency, record age, throughput, lag, "
        "checkpoints and connector/task states. Generated by grafana/generate.py; do not edit in the UI.",
        panels, variables, [link("Kafka Connect workers", "msk-migrate-connect-workers")],
    )


def workers_dashboard() -> dict:
    panels = [
        row("Workers and rebalances"),
        stat("Connect workers up", f"sum(up{{{CONNECT}}})", "none", "Workers answering scrapes.", thresholds=RED_BELOW_1),
        stat("Workers rebalancing", f"sum(kafka_connect_worker_rebalancing{{{INST}}})", "none",
             "Workers in a group rebalance now (alert KafkaConnectWorkerRebalancingTooLong after 10m).", thresholds=RED_AT_1),
        table("Worker versions", f"max by (instance, version) (kafka_connect_worker_version{{{INST}}})",
              "Kafka Connect version of each worker (3.9.x image by default, 4.x by build arg).",
              columns=["instance", "version"], w=16, h=4),
        timeseries("Connectors and tasks per worker",
                   [(f"kafka_connect_worker_connector_count{{{INST}}}", "{{instance}} connectors"),
                    (f"kafka_connect_worker_task_count{{{INST}}}", "{{instance}} tasks")],
                   "none", "Connectors and tasks assigned to each worker.", w=8),
        timeseries("Rebalancing", [(f"max by (instance) (kafka_connect_worker_rebalancing{{{INST}}})", "{{instance}}")],
                   "none", "1 while a worker is in a rebalance.", w=8),
        timeseries("Completed rebalances", [(f"sum by (instance) (increase(kafka_connect_worker_rebalances_completed_total{{{INST}}}[$__rate_interval]))", "{{instance}}")],  # noqa: E501
                   "none", "Rebalances completed per interval; frequent rebalances mean workers join/leave (ECS task churn).", w=8),
        timeseries("Time since last rebalance", [(f"kafka_connect_worker_time_since_last_rebalance_seconds{{{INST}}} >= 0", "{{instance}}")],
                   "s", "Seconds since each worker completed its last rebalance.", w=12),
        timeseries("Rebalance duration",
                   [(f"max by (instance) (kafka_connect_worker_rebalance_avg_time_seconds{{{INST}}} >= 0)", "{{instance}} avg"),
                    (f"max by (instance) (kafka_connect_worker_rebalance_max_time_seconds{{{INST}}} >= 0)", "{{instance}} max")],
                   "s", "How long rebalances took, within Kafka's metric window.", w=12, event_only=True),

        row("Task health"),
        timeseries("Producer record errors per second",
                   [(f"sum by (connector) (rate(kafka_connect_task_producer_record_error_total{{{C}}}[$__rate_interval]))", "{{connector}}")],
                   "cps", "Records the task producers failed to send to the target after retries (alert MM2ProducerErrors).", w=8),
        timeseries("Producer retries per second",
                   [(f"sum by (connector) (rate(kafka_connect_task_producer_record_retry_total{{{C}}}[$__rate_interval]))", "{{connector}}")],
                   "cps", "Send retries of the task producers (throttling, leader changes, timeouts on the target).", w=8),
        timeseries("Producer request latency",
                   [(f"max by (connector) (kafka_connect_task_producer_request_latency_avg_seconds{{{C}}} >= 0)", "{{connector}}")],
                   "s", "Average produce request latency to the target, worst task per connector.", w=8),
        timeseries("Task errors per second",
                   [(f"sum by (connector) (rate(kafka_connect_task_error_record_errors_total{{{C}}}[$__rate_interval]))", "{{connector}} errors"),
                    (f"sum by (connector) (rate(kafka_connect_task_error_retries_total{{{C}}}[$__rate_interval]))", "{{connector}} retries")],
                   "cps", "Record processing errors and retries counted by Connect's error handling.", w=8),
        timeseries("Task running ratio",
                   [(f"kafka_connect_task_running_ratio{{{C}}}", "{{connector}}/{{task}}")],
                   "percentunit", "Fraction of time each task spent running (vs paused/failed).", w=8),
        timeseries("Offset commit failures",
                   [(f"max by (connector) (kafka_connect_task_offset_commit_failure_percentage{{{C}}} >= 0)", "{{connector}}")],
                   "percentunit", "Share of source offset commits that failed.", w=8),
        timeseries("Replication consumer fetch throughput",
                   [(f"sum by (connector) (kafka_connect_mirror_source_consumer_records_consumed_rate{{{C}}} >= 0)", "{{connector}} records/s")],
                   "cps", "Records fetched from the source by MM2's replication consumers.", w=12),
        timeseries("Replication consumer max lag per task",
                   [(f"max by (connector, task) (kafka_connect_mirror_source_consumer_records_lag_max{{{C}}} >= 0)", "{{connector}}/{{task}}")],
                   "short", "Largest partition lag seen by each replication consumer in Kafka's metric window.", w=12),

        row("JVM"),
        timeseries("Heap used / max",
                   [(f'sum by (instance) (jvm_memory_used_bytes{{area="heap", {CONNECT}, {INST}}})', "{{instance}} used"),
                    (f'min by (instance) (min_over_time(jvm_memory_used_bytes{{area="heap", {CONNECT}, {INST}}}[5m]))',
                     "{{instance}} lowest in 5m"),
                    (f'sum by (instance) (jvm_memory_max_bytes{{area="heap", {CONNECT}, {INST}}})', "{{instance}} max")],
                   "bytes", "JVM heap of each worker. The lowest use in 5 minutes is what survives the collections: "
                   "KafkaConnectWorkerHeapHigh fires when it stays above 85 % of max for 5 minutes.", w=8),
        timeseries("GC time",
                   [(f"sum by (instance, gc) (rate(jvm_gc_collection_seconds_sum{{{CONNECT}, {INST}}}[$__rate_interval]))", "{{instance}} {{gc}}")],
                   "percentunit", "Fraction of wall time spent in garbage collection.", w=8),
        timeseries("CPU",
                   [(f"rate(process_cpu_seconds_total{{{CONNECT}, {INST}}}[$__rate_interval])", "{{instance}}")],
                   "short", "CPU cores used by each worker JVM.", w=8),
        timeseries("Threads", [(f"jvm_threads_current{{{CONNECT}, {INST}}}", "{{instance}}")],
                   "none", "Live JVM threads.", w=12),
        timeseries("Non-heap used", [(f'sum by (instance) (jvm_memory_used_bytes{{area="nonheap", {CONNECT}, {INST}}})', "{{instance}}")],
                   "bytes", "Metaspace, code cache and other non-heap memory.", w=12),
    ]
    variables = [
        variable_datasource(),
        variable_query("instance", "Worker", f"label_values(up{{{CONNECT}}}, instance)"),
        variable_query("connector", "Connector", "label_values(kafka_connect_connector_status, connector)"),
    ]
    return dashboard(
        "msk-migrate-connect-workers",
        "MSK migration: Kafka Connect workers",
        "Kafka Connect workers running MirrorMaker 2: workers, rebalances, task health, producers, JVM. "
        "Generated by grafana/generate.py; do not edit in the UI.",
        panels, variables, [link("MirrorMaker 2 replication", "msk-migrate-mm2-replication")],
    )


#: Marker in the description of panels fed by MSK open monitoring (absent from the local rehearsal:
#: tests/monitoring checks their PromQL and the alert rules' unit tests, not live data).
MSK_SOURCE = "Source: MSK open monitoring (jobs msk-jmx, msk-node)."
FOLLOWER_SOURCE = "Source: the proof follower (msk-migrate validate --follow, job msk-migrate-proof)."
B = 'broker=~"$broker"'
MSK_JMX = 'job="msk-jmx"'
MSK_NODE = 'job="msk-node"'
#: Real filesystems of a broker (the EBS data volume and the root volume), as in prometheus/rules/msk-brokers.yml.
FS = 'fstype!~"tmpfs|devtmpfs|overlay|squashfs|rootfs"'


def msk(panel: dict) -> dict:
    panel["description"] = f"{panel['description']} {MSK_SOURCE}"
    return panel


def msk_dashboard() -> dict:
    used = (f"100 * (1 - node_filesystem_avail_bytes{{{MSK_NODE}, {FS}, {B}}} "
            f"/ node_filesystem_size_bytes{{{MSK_NODE}, {FS}, {B}}})")
    panels = [
        row("Broker health"),
        msk(stat("Brokers scraped", f"sum(up{{{MSK_JMX}}})", "none",
                 "Brokers whose JMX exporter answers (alert MSKOpenMonitoringDown when none does).", thresholds=RED_BELOW_1)),
        msk(stat("Offline partitions", f'max(kafka_controller_KafkaController_Value{{{MSK_JMX}, name="OfflinePartitionsCount"}})',
                 "none", "Partitions without a leader, from the active controller (alert MSKOfflinePartitions).",
                 thresholds=RED_AT_1)),
        msk(stat("Under-replicated partitions", f'sum(kafka_server_ReplicaManager_Value{{{MSK_JMX}, name="UnderReplicatedPartitions"}})',
                 "none", "Partitions with out-of-sync followers, over all brokers (alert MSKUnderReplicatedPartitions).",
                 thresholds=RED_AT_1)),
        msk(stat("Highest disk usage", f"max({used})", "percent",
                 "Fullest broker filesystem (alerts MSKBrokerDiskUsageHigh at 75%, MSKBrokerDiskUsageCritical at 90%).",
                 thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 75}, {"color": "red", "value": 90}],
                 w=12)),
        row("Disks"),
        msk(timeseries("Disk usage", [(used, "{{broker}} {{mountpoint}}")], "percent",
                       "Used share of each broker filesystem.", w=12)),
        msk(timeseries("Disk free, hours left at the current rate",
                       [(f"node_filesystem_avail_bytes{{{MSK_NODE}, {FS}, {B}}} "
                         f"/ clamp_min(-deriv(node_filesystem_avail_bytes{{{MSK_NODE}, {FS}, {B}}}[30m]), 1) / 3600",
                         "{{broker}} {{mountpoint}}")],
                       "h", "Free space divided by the rate it shrinks at (30-minute trend); compare with MSK storage "
                       "autoscaling's 6-hour cooldown.", w=12)),
        row("Partitions and traffic"),
        msk(timeseries("Under-replicated partitions per broker",
                       [(f'sum by (broker) (kafka_server_ReplicaManager_Value{{{MSK_JMX}, name="UnderReplicatedPartitions", {B}}})', "{{broker}}")],
                       "none", "Partitions each broker leads whose followers are out of sync.", w=8)),
        msk(timeseries("Under min ISR partitions per broker",
                       [(f'sum by (broker) (kafka_server_ReplicaManager_Value{{{MSK_JMX}, name="UnderMinIsrPartitionCount", {B}}})', "{{broker}}")],
                       "none", "Partitions below min.insync.replicas: writes with acks=all fail there.", w=8)),
        msk(timeseries("Bytes in per broker",
                       [(f'sum by (broker) (rate(kafka_server_BrokerTopicMetrics_Count{{{MSK_JMX}, name="BytesInPerSec", topic="", {B}}}[$__rate_interval]))', "{{broker}}")],  # noqa: E501
                       "Bps", "Bytes written to each broker by clients (MM2 during the copy).", w=8)),
    ]
    variables = [
        variable_datasource(),
        variable_query("broker", "Broker", f"label_values(up{{{MSK_JMX}}}, broker)"),
    ]
    return dashboard(
        "msk-migrate-msk-brokers",
        "MSK migration: target MSK brokers",
        "Disks, under-replicated and offline partitions of the target MSK cluster during the migration, from MSK "
        "open monitoring. Generated by grafana/generate.py; do not edit in the UI.",
        panels, variables, [link("MirrorMaker 2 replication", "msk-migrate-mm2-replication")],
    )


DASHBOARDS = {
    "mm2-replication.json": replication_dashboard,
    "connect-workers.json": workers_dashboard,
    "msk-brokers.json": msk_dashboard,
}


def render() -> dict[str, str]:
    """file name -> JSON text, exactly as checked in."""
    return {name: json.dumps(build(), indent=2, ensure_ascii=False) + "\n" for name, build in DASHBOARDS.items()}


def event_only_panels() -> dict[str, list[str]]:
    """dashboard file -> titles of panels that are legitimately empty while nothing happens."""
    out: dict[str, list[str]] = {}
    for name, text in render().items():
        out[name] = [p["title"] for p in json.loads(text)["panels"] if "Event-only:" in p.get("description", "")]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the checked-in files instead of writing")
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    args = ap.parse_args(argv)
    rendered = render()
    if args.check:
        stale = [n for n, text in rendered.items() if not (args.out / n).exists() or (args.out / n).read_text() != text]
        for n in stale:
            print(f"{args.out / n} is out of date: run python grafana/generate.py", file=sys.stderr)
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for n, text in rendered.items():
        (args.out / n).write_text(text)
        print(f"wrote {args.out / n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
