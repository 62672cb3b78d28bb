"""A source topic deleted and recreated under the same name, on the session's real clusters and worker.

MM2 resumes from the offsets it stored for the old topic: with 50 records per partition stored and 100 new
ones per partition, it copies the last 50 of each and skips the first 50, and `lag` would report every
partition in sync. (the test shows that skip). The ledger recorded the topic's id when `connectors apply` started its replication, so
`connectors apply` and `lag` now refuse the topic (exit 2, one line naming it and the fix), and
`connectors reset-topic` is the fix: every one of the 300 new records reaches the target.
"""

from __future__ import annotations

import contextlib
import json
import time

from confluent_kafka.admin import AdminClient

from msk_migrate.cliutil import json_shape_problems
from tests.kafka_helpers import commit_group, consume_all, create_topic, produce, wait_until

from .test_cli import _migration_file, run


def _recreate(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=60)
    wait_until(lambda: topic not in admin.list_topics(timeout=10).topics, 60, what=f"{topic} deleted")
    deadline = time.time() + 60
    while True:  # the broker may still be removing the old log: "marked for deletion"
        try:
            create_topic(bootstrap, topic, partitions=partitions)
            return
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(1)


def _new_keys(bootstrap: str, topic: str) -> set[str]:
    """The distinct keys of the recreated topic's records (``new<i>``) on ``bootstrap``, read for a few seconds."""
    return {m.key().decode() for m in consume_all(bootstrap, topic, 10**9, timeout=8) if (m.key() or b"").startswith(b"new")}


def _lag(mf, connect, topic: str):
    return run("lag", "--config", str(mf), "--connect-url", connect.url, "--topic", topic, "--output", "json")


def _refused_naming(r, topic: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"error: topic {topic}: recreated since its replication started: its topic id is "), lines[0]
    assert f"msk-migrate connectors reset-topic --topic {topic}" in lines[0]


def test_a_recreated_source_topic_is_refused_by_apply_lag_and_the_gate_until_its_offsets_are_reset(tmp_path, local_env, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, name = f"idt-{unique}", f"id{unique}"
    create_topic(src, topic, partitions=3)
    produce(src, topic, ((f"old{i}".encode(), b"old", None, i % 3) for i in range(150)))
    mf = _migration_file(tmp_path, local_env, name=name, topics=[topic], groups=[f"idg-{unique}"])
    ledger = tmp_path / "migration-ledger"
    try:
        r = run("connectors", "apply", "--config", str(mf), "--connect-url", connect.url, "--output", "json")
        assert r.returncode == 0, r.stdout + r.stderr
        view = json.loads((ledger / "current.json").read_text())
        rec = view["records"][f"topic/{topic}"]
        assert rec["state"] == "replicating" and rec["command"] == "connectors apply"
        assert rec["identity"]["kind"] == "topic-id" and rec["identity"]["partitions"] == 3  # Kafka 3.9: a topic id
        wait_until(lambda: _lag(mf, connect, topic).returncode == 0, 120, interval=2, what="the old topic in sync")

        # The connector is stopped while the topic is recreated and written (a change window), as when the
        # connectors are re-applied later: MM2 then resumes from its stored offsets, not from an empty topic.
        source = f"{name}-source"
        connect.stop(source)
        connect.wait_state(source, "STOPPED", 120)
        _recreate(src, topic, 3)
        produce(src, topic, ((f"new{i}".encode(), b"new", None, i % 3) for i in range(300)))

        _refused_naming(run("connectors", "apply", "--config", str(mf), "--connect-url", connect.url), topic)
        _refused_naming(_lag(mf, connect, topic), topic)
        # the consumer gate measures the group's topics through the same check: a group committed on the new topic
        group = f"idg-{unique}"
        commit_group(src, group, topic, {0: 10})
        _refused_naming(run("cutover", "check", "--config", str(mf), "--connect-url", connect.url, "--group", group), topic)
        # what the refusal guards against: resumed without the reset, MM2 starts each partition at offset 50 and
        # never copies the first 50 records of each (new0..new149)
        connect.resume(source)
        wait_until(lambda: _new_keys(tgt, topic) >= {f"new{i}" for i in range(150, 300)}, 90, what="MM2 copying from offset 50")
        assert not _new_keys(tgt, topic) & {f"new{i}" for i in range(150)}

        r = run("connectors", "reset-topic", "--config", str(mf), "--connect-url", connect.url, "--topic", topic,
                "--output", "json")
        assert r.returncode == 0, r.stdout + r.stderr
        assert not json_shape_problems(json.loads(r.stdout)), r.stdout
        assert json.loads(r.stdout)["rows"] == [{"topic": topic, "partitions_reset": 3, "connector": f"{name}-source"}]
        r = wait_until(lambda: (x := _lag(mf, connect, topic)).returncode == 0 and x, 120, interval=2, what="the new topic in sync")
        assert sum(row["source_lso"] for row in json.loads(r.stdout)["rows"]) == 300
        # every one of the 300 new records reaches the target (after the old topic's copies, and the ones MM2 made
        # from offset 50 before the reset: the target topic is not recreated by the reset)
        wait_until(lambda: len(_new_keys(tgt, topic)) == 300, 90, what="all 300 new records on the target")

        r = run("status", "--config", str(mf), "--output", "json")
        doc = json.loads(r.stdout)
        assert r.returncode == 0, r.stderr
        (row,) = [x for x in doc["rows"] if x["kind"] == "topic"]
        assert (row["name"], row["state"], row["command"]) == (topic, "replicating", "connectors reset-topic")
        view = json.loads((ledger / "current.json").read_text())
        assert view["records"][f"topic/{topic}"]["identity"]["topic_id"] != rec["identity"]["topic_id"]
    finally:
        for suffix in ("source", "checkpoint", "heartbeat"):
            with contextlib.suppress(Exception):
                connect.delete(f"{name}-{suffix}")
