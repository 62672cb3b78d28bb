"""Tuning overrides through a real Connect worker: a record above Kafka's default max.request.size
(1 MiB) fails the MM2 task without the override and replicates once it is set."""

from __future__ import annotations

import contextlib
import time

import pytest

from tests.kafka_helpers import admin, consume_all, create_topic, produce, wait_until

from .mm2_flows import apply_source, flow, source_config

pytestmark = pytest.mark.integration

BIG = 2 * 1024 * 1024  # 2 MiB: above the producer's default max.request.size (1048576)


def _task_failure(connect, name: str) -> str | None:
    try:
        st = connect.status(name)
    except Exception:
        return None
    for t in st.get("tasks", []):
        if t["state"] == "FAILED":
            return t.get("trace") or "FAILED"
    return None


def test_record_above_default_request_size_replicates_once_max_request_size_is_overridden(local_env, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"big-{unique}"
    create_topic(src, topic, partitions=1, config={"max.message.bytes": str(3 * 1024 * 1024)})
    produce(src, topic, [(b"small", b"s", None, 0), (b"big", b"b" * BIG, None, 0)], **{"message.max.bytes": 4 * 1024 * 1024})

    without = flow(f"big{unique}", [topic], tasks_max=1)
    name = without.connector_names()["source"]
    try:
        apply_source(connect, source_config(local_env, without), wait=False)
        trace = wait_until(lambda: _task_failure(connect, name), 120, what="MM2 task failing on the 2 MiB record")
        assert "RecordTooLargeException" in trace or "too large" in trace.lower(), trace[:500]

        tuned = flow(f"big{unique}", [topic], tasks_max=1, producer_overrides={"max.request.size": 4 * 1024 * 1024})
        cfg = source_config(local_env, tuned)
        assert cfg[name]["producer.override.max.request.size"] == str(4 * 1024 * 1024)
        connect.put_config(name, {k: v for k, v in cfg[name].items() if k != "name"})
        connect.restart(name, only_failed=True)
        msgs = []

        def arrived():
            nonlocal msgs
            if topic not in admin(tgt).list_topics(timeout=5).topics:
                return False
            msgs = consume_all(tgt, topic, 2, timeout=10)
            return len(msgs) >= 2

        wait_until(arrived, 180, what="both records on the target after the override")
        sizes = sorted(len(m.value()) for m in msgs)
        assert sizes[-1] == BIG and sizes[0] == 1
    finally:
        with contextlib.suppress(Exception):
            connect.delete(name)
        time.sleep(0)
