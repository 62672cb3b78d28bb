"""Auto-restart in a real worker: a task failing once from a transient error is restarted by the
worker's own extension (no CLI involved), and every record still arrives."""

from __future__ import annotations

import contextlib

import pytest

from tests.kafka_helpers import consume_all, create_topic, end_offsets, produce, wait_until

from .mm2_flows import apply_source, auto_restarts, flow, source_config

pytestmark = pytest.mark.integration


def test_task_failing_once_is_restarted_automatically_and_nothing_is_lost(local_env, connect, unique, tmp_path):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"ar-{unique}"
    create_topic(src, topic, partitions=2)
    n = produce(src, topic, ((f"k{i}".encode(), f"v{i}".encode(), None, i % 2) for i in range(3000)))
    marker = tmp_path / "fault-fired"
    spec = flow(f"ar{unique}", [topic], tasks_max=1)
    name = spec.connector_names()["source"]
    cfg = source_config(local_env, spec, **{
        "transforms": "failonce",
        "transforms.failonce.type": "io.mskmigrate.connect.faults.FailOnce",
        "transforms.failonce.marker.file": str(marker),
        "transforms.failonce.after.records": "500",
    })
    metrics_url = local_env.status()["connect"]["metrics_url"]
    try:
        apply_source(connect, cfg, wait=False)
        wait_until(marker.exists, 120, what="the injected fault firing")
        ends = end_offsets(src, topic)
        # Recovery needs the extension: Connect itself never restarts a FAILED task.
        wait_until(lambda: auto_restarts(metrics_url, name) >= 1, 120, what="an automatic restart counted")
        wait_until(lambda: end_offsets(tgt, topic) and sum(end_offsets(tgt, topic).values()) >= sum(ends.values()),
                   180, what="target caught up after the restart")
        st = connect.wait_state(name, "RUNNING", timeout=60, min_tasks=1)
        assert all(t["state"] == "RUNNING" for t in st["tasks"])
        got = {(m.key(), m.value()) for m in consume_all(tgt, topic, n, timeout=60)}
        want = {(f"k{i}".encode(), f"v{i}".encode()) for i in range(n)}
        assert want - got == set(), f"{len(want - got)} records missing after the restart"
    finally:
        with contextlib.suppress(Exception):
            connect.delete(name)
