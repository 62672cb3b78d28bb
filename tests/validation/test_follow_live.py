"""``msk-migrate validate --follow`` on the local clusters with a real MM2 flow: it keeps up with
replication, a real kill of the follower process resumes from the persisted mark with no record compared
twice or skipped (counted), a record changed on the target stops the mark at its offset, and marks that
are not this follower's are refused (exit 2, the file untouched)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from confluent_kafka import TopicPartition
from confluent_kafka.admin import NewPartitions
from tests.integration.mm2_flows import apply_source, flow, source_config
from tests.kafka_helpers import admin, create_topic, end_offsets, produce, records, wait_until

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.commands.validate import run_cli
from msk_migrate.connect_api.rest import ConnectClient

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _args(src: str, tgt: str, topic: str, mark: Path, *extra: str) -> list[str]:
    return ["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
            "--mark", str(mark), *extra]


def _once(capfd, src, tgt, topic, mark, *extra) -> tuple[int, dict]:
    capfd.readouterr()
    code = run_cli([*_args(src, tgt, topic, mark, "--once", *extra), "--output", "json"])
    out, err = capfd.readouterr()
    return code, (json.loads(out) if out.strip() else {"stderr": err})


def _mark(path: Path) -> dict:
    return json.loads(path.read_text())


def _compared(path: Path, topic: str) -> dict[int, int]:
    return {int(p): m["compared"] for p, m in _mark(path)["topics"][topic]["partitions"].items()}


def _batch(prefix: str, n: int, start: int = 0):
    return ((f"{prefix}{i}".encode(), f"v{i}".encode(), [("h", str(i).encode())], i % 2) for i in range(start, start + n))


def _metric(url: str, name: str, topic: str) -> dict[int, float]:
    out = {}
    for line in requests.get(url, timeout=5).text.splitlines():
        if line.startswith(name + "{") and f'topic="{topic}"' in line:
            part = int(line.split('partition="')[1].split('"')[0])
            out[part] = float(line.rsplit(" ", 1)[1])
    return out


@pytest.fixture(scope="module")
def connect(local_env) -> ConnectClient:
    return ConnectClient(local_env.status()["connect"]["url"])


@pytest.fixture
def mm2_flow(local_env, connect, unique):
    """A topic of 2 partitions replicated by its own MirrorSourceConnector; yields (src, tgt, topic)."""
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"fol-{unique}"
    create_topic(src, topic, partitions=2)
    produce(src, topic, _batch("a", 2000))
    spec = flow(f"fol{unique}", [topic], tasks_max=1)
    name = spec.connector_names()["source"]
    apply_source(connect, source_config(local_env, spec))
    wait_until(lambda: sum(end_offsets(tgt, topic).values() or [0]) >= 2000, 120, what="MM2 copied the first records")
    yield src, tgt, topic
    with contextlib.suppress(Exception):
        connect.delete(name)


def test_follower_keeps_up_and_a_killed_follower_resumes_from_the_mark_with_nothing_compared_twice_or_skipped(
        mm2_flow, tmp_path, capfd):
    src, tgt, topic = mm2_flow
    mark = tmp_path / "mark.json"
    port = _free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    # --metrics-bind as the stack's service passes it (0.0.0.0 there, inside its task; the loopback address here)
    cmd = [sys.executable, "-m", "msk_migrate.commands", "validate",
           *_args(src, tgt, topic, mark, "--interval", "0.5", "--metrics-port", str(port), "--metrics-bind", "127.0.0.1")]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        # replication goes on while the follower follows: it keeps up (proof lag 0 once MM2 caught up)
        for k in range(5):
            produce(src, topic, _batch("b", 500, k * 500))
            time.sleep(0.3)
        wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= 4500, 120, what="MM2 copied every record")
        wait_until(lambda: mark.exists() and sum(_compared(mark, topic).values()) >= 4500, 120,
                   what="the follower proving every replicated record")
        wait_until(lambda: set(_metric(url, "msk_migrate_proof_lag_records", topic).values()) == {0.0}, 60,
                   what="proof lag 0 on the metrics endpoint")
        assert sum(_metric(url, "msk_migrate_proof_records_proven_total", topic).values()) == 4500
        assert set(_metric(url, "msk_migrate_proof_mismatch", topic).values()) == {0.0}

        # more records while it runs, then a real kill (SIGKILL: no chance to persist on the way out)
        produce(src, topic, _batch("c", 3000))
        wait_until(lambda: sum(_compared(mark, topic).values()) > 4500, 120, what="the follower proving part of the new records")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    at_kill = _mark(mark)
    before = _compared(mark, topic)
    wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= 7500, 120, what="MM2 copied the last records")

    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0, json.dumps(doc)
    assert doc["verdict"] == "proven"
    rows = {r["partition"]: r for r in doc["rows"]}
    ends = end_offsets(src, topic)
    for p in (0, 1):
        part = at_kill["topics"][topic]["partitions"][str(p)]
        # resumed at the persisted mark: this run proved exactly the records past it, none twice, none skipped
        assert rows[p]["proven_this_run"] == rows[p]["compared"] - before[p]
        assert rows[p]["compared"] == ends[p] == rows[p]["source_verified_up_to"]
        assert rows[p]["resumed_from"] == [part["source_next"], part["target_next"]]
    assert sum(r["compared"] for r in rows.values()) == 7500


def test_a_record_changed_on_the_target_is_caught_and_the_mark_stops_at_its_offset(mm2_flow, tmp_path, capfd):
    src, tgt, topic = mm2_flow
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0 and sum(r["compared"] for r in doc["rows"]) == 2000, doc
    t_end = end_offsets(tgt, topic)[0]
    s_end = end_offsets(src, topic)[0]
    # a different record straight into the target at the next offset, then the source's record (MM2 copies it after)
    produce(tgt, topic, [(b"intruder", b"changed on the target", None, 0)])
    produce(src, topic, [(b"a-next", b"v-next", None, 0)])
    wait_until(lambda: end_offsets(tgt, topic)[0] >= t_end + 2, 120, what="MM2 copied the source's record")
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 1 and doc["verdict"] == "mismatch", doc
    assert json_shape_problems(doc) == []
    row = next(r for r in doc["rows"] if r["partition"] == 0)
    assert row["state"] == "mismatch"
    assert (row["source_verified_up_to"], row["target_verified_up_to"]) == (s_end, t_end)
    assert row["mismatch"]["source_offset"] == s_end and row["mismatch"]["target_offset"] == t_end
    assert row["mismatch"]["category"] == "unexpected" and row["mismatch"]["key"] == hashlib.sha256(b"intruder").hexdigest()
    assert next(r for r in doc["rows"] if r["partition"] == 1)["state"] == "following"


def _direct_pair(src: str, tgt: str, topic: str, n: int = 100) -> None:
    """The same records on both clusters (what replication would have written), no MM2 needed."""
    for b in (src, tgt):
        create_topic(b, topic, partitions=2)
        produce(b, topic, records(n))


@pytest.mark.parametrize("edit, words", [
    (lambda m: m.update(source_cluster_id="another-cluster"), "another source cluster"),
    (lambda m: m.update(target_cluster_id="another-cluster"), "another target cluster"),
    (lambda m: m.update(migration="other-migration"), "belongs to migration"),
    (lambda m: [p.update(source_next=10_000) for t in m["topics"].values() for p in t["partitions"].values()],
     "ahead of the source's end offset"),
])
def test_a_mark_of_other_clusters_or_ahead_of_the_log_is_refused_in_one_line_and_left_untouched(
        local_env, unique, tmp_path, capfd, edit, words):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"folbad-{unique}"
    _direct_pair(src, tgt, topic)
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0, json.dumps(doc)
    doc = _mark(mark)
    edit(doc)
    mark.write_text(json.dumps(doc))
    before = mark.read_text()
    capfd.readouterr()
    code = run_cli([*_args(src, tgt, topic, mark, "--once")])
    _, err = capfd.readouterr()
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert mark.read_text() == before


def test_a_partition_count_change_is_refused_and_the_mark_left_untouched(local_env, unique, tmp_path, capfd):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"folparts-{unique}"
    _direct_pair(src, tgt, topic)
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0, json.dumps(doc)
    before = mark.read_text()
    client = admin(src)
    client.create_partitions([NewPartitions(topic, 3)])[topic].result(30)
    wait_until(lambda: len(client.list_topics(topic, timeout=5).topics[topic].partitions) == 3, 30, what="3 partitions")
    capfd.readouterr()
    code = run_cli([*_args(src, tgt, topic, mark, "--once")])
    _, err = capfd.readouterr()
    assert code == 2 and "partition count changed on the source" in err, err
    assert mark.read_text() == before


def test_retention_past_the_mark_is_reported_truncated_never_a_match(local_env, unique, tmp_path, capfd):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"foltrunc-{unique}"
    _direct_pair(src, tgt, topic)
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0, json.dumps(doc)
    for b in (src, tgt):
        produce(b, topic, records(20, partitions=1, prefix="n"))
    end = end_offsets(src, topic)[0]
    client = admin(src)
    next(iter(client.delete_records([TopicPartition(topic, 0, end - 5)]).values())).result(30)
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 1 and doc["verdict"] == "truncated", doc
    row = next(r for r in doc["rows"] if r["partition"] == 0)
    assert row["state"] == "truncated" and row["source_log_start"] == end - 5
    assert next(r for r in doc["rows"] if r["partition"] == 1)["state"] == "following"


def test_a_redelivery_straddling_a_restart_is_a_duplicate_not_a_difference(local_env, unique, tmp_path, capfd):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"foldup-{unique}"
    _direct_pair(src, tgt, topic)
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0, json.dumps(doc)
    lenient = tmp_path / "lenient.json"
    lenient.write_text(mark.read_text())  # the same mark, resumed with --allow-duplicates below
    # MM2 re-delivers the last records of partition 0 after the follower stopped, then copies a new one
    last_two = [r for r in records(100) if r.partition == 0][-2:]
    produce(tgt, topic, last_two)
    new = records(1, partitions=1, prefix="new")
    for b in (src, tgt):
        produce(b, topic, new)
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 1, json.dumps(doc)
    row = next(r for r in doc["rows"] if r["partition"] == 0)
    assert row["mismatch"]["category"] == "duplicates" and row["mismatch"]["target_offset"] == 50
    # the window of proven records was read back at the restart: the copies are recognised, passed over, counted
    code, doc = _once(capfd, src, tgt, topic, lenient, "--allow-duplicates")
    assert code == 0, json.dumps(doc)
    row = next(r for r in doc["rows"] if r["partition"] == 0)
    assert (row["resumed_from"], row["proven_this_run"], row["compared"], row["duplicates"], row["target_verified_up_to"]) \
        == ([50, 50], 1, 51, 2, 53)


def test_a_redelivery_longer_than_the_recent_ring_is_read_back_on_the_source_and_counted_as_duplicates(
        local_env, unique, tmp_path, capfd):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"folreplay-{unique}"
    first = records(1000, partitions=1)
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
        produce(b, topic, first)
    strict = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, strict)
    assert code == 0, json.dumps(doc)
    lenient = tmp_path / "lenient.json"
    lenient.write_text(strict.read_text())
    # MM2 restarted and re-sent everything since its last offset commit: the last 700 records, then a new one
    produce(tgt, topic, first[300:])
    new = records(1, partitions=1, prefix="new")
    for b in (src, tgt):
        produce(b, topic, new)
    code, doc = _once(capfd, src, tgt, topic, strict)
    assert code == 1, json.dumps(doc)
    assert doc["rows"][0]["mismatch"]["category"] == "duplicates" and doc["rows"][0]["mismatch"]["target_offset"] == 1000
    code, doc = _once(capfd, src, tgt, topic, lenient, "--allow-duplicates")
    assert code == 0, json.dumps(doc)
    row = doc["rows"][0]
    assert (row["duplicates"], row["compared"], row["source_verified_up_to"], row["target_verified_up_to"]) == (700, 1001, 1001, 1701)
