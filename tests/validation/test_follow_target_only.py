"""A record only on the target, on a real MM2 flow: the live proof (``validate --follow``) names it as the batch
proof (``validate``) does, wherever it stands, and ordinary replication lag is never taken for one.

A pass reads each side to the end offset it had when the pass began; a target record past the source's records
was left pending as a copy to come, for ever: at the tail with nothing after it on the source, or on a partition
the source no longer writes to, ``--once`` said ``proven`` (exit 0, lag 0, mismatch metric 0) and a gate reading
the mark passed, while the batch run said ``mismatch`` (``unexpected`` 1, exit 1). MM2 copies source to target, so
the target is only ever behind: such a record is never a pending copy. Each case below plants one record on the
target only and checks the running follower's metrics (within its interval), the mark a gate reads, a new user's
``--once`` and the batch run of the same flow; the control pauses MM2 (the target merely behind) and drives a
pass whose target was read past the source's end (copies of records written since): neither is a mismatch."""

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
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import requests
from tests.integration.mm2_flows import apply_source, flow, source_config
from tests.kafka_helpers import BASE_TS, Rec, create_topic, end_offsets, produce, wait_until

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.commands.validate import run_cli
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.runbook.proof_mark import check_proof_mark

REPO = Path(__file__).resolve().parents[2]
INTERVAL = 1.0
#: The bound on "within one interval" on a shared 2-core machine: the interval, a pass, a scrape, and slack.
DETECT_SECONDS = 30.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _flow_args(src: str, tgt: str, topic: str) -> list[str]:
    return ["--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic]


def _once(capfd, src: str, tgt: str, topic: str, mark: Path) -> tuple[int, dict]:
    capfd.readouterr()
    code = run_cli(["--follow", *_flow_args(src, tgt, topic), "--mark", str(mark), "--once", "--output", "json"])
    out, err = capfd.readouterr()
    return code, (json.loads(out) if out.strip() else {"stderr": err})


def _batch(capfd, src: str, tgt: str, topic: str, report_dir: Path) -> tuple[int, dict]:
    """``msk-migrate validate`` as a user runs it here (the native checksum, the diff on the session's Spark)."""
    capfd.readouterr()
    code = run_cli([*_flow_args(src, tgt, topic), "--validation-report", str(report_dir), "--output", "json"])
    out, err = capfd.readouterr()
    return code, (json.loads(out) if out.strip() else {"stderr": err})


def _metric(url: str, name: str, topic: str) -> dict[int, float]:
    out = {}
    for line in requests.get(url, timeout=5).text.splitlines():
        if line.startswith(name + "{") and f'topic="{topic}"' in line:
            out[int(line.split('partition="')[1].split('"')[0])] = float(line.rsplit(" ", 1)[1])
    return out


def _recs(partition: int, prefix: str, n: int, start: int = 0) -> list[Rec]:
    return [Rec(partition, f"{prefix}{i}".encode(), f"v-{prefix}{i}".encode(), (("h", str(i).encode()),), BASE_TS + i)
            for i in range(start, start + n)]


@contextlib.contextmanager
def _follower(src: str, tgt: str, topic: str, mark: Path) -> Iterator[str]:
    """``validate --follow`` as the service runs it (its own process, a metrics endpoint); yields the metrics URL
    and stops it with SIGTERM (it persists its mark on the way out). Its stderr goes to a file beside the mark (a
    pipe nobody reads would block it once full), whose tail a failure inside the block carries."""
    port = _free_port()
    cmd = [sys.executable, "-m", "msk_migrate.commands", "validate", "--follow", *_flow_args(src, tgt, topic),
           "--mark", str(mark), "--interval", str(INTERVAL), "--metrics-port", str(port)]
    log = mark.with_suffix(".stderr.log")
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        yield f"http://127.0.0.1:{port}/metrics"
    except Exception as exc:
        exc.add_note(f"follower (exit {proc.poll()}) stderr, last lines:\n"
                     + "\n".join(log.read_text(errors="replace").splitlines()[-30:]))
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def _serving(url: str) -> bool:
    try:
        return bool(requests.get(url, timeout=2).ok)
    except requests.RequestException:
        return False


def _caught_up(url: str, topic: str, partitions: int, records: int) -> None:
    try:
        wait_until(lambda: _serving(url) and len(_metric(url, "msk_migrate_proof_lag_records", topic)) == partitions
                   and set(_metric(url, "msk_migrate_proof_lag_records", topic).values()) == {0.0}
                   and sum(_metric(url, "msk_migrate_proof_records_proven_total", topic).values()) == records, 120,
                   what="the follower proving every replicated record (lag 0)")
    except TimeoutError as exc:
        if _serving(url):
            exc.add_note(f"lag {_metric(url, 'msk_migrate_proof_lag_records', topic)}, proven "
                         f"{_metric(url, 'msk_migrate_proof_records_proven_total', topic)}")
        raise
    assert set(_metric(url, "msk_migrate_proof_mismatch", topic).values()) == {0.0}


@pytest.fixture(scope="module")
def connect(local_env) -> ConnectClient:
    return ConnectClient(local_env.status()["connect"]["url"])


#: topic -> (partitions, records written per partition before the follower starts)
CASES = {"tail": (2, (30, 30)), "middle": (2, (30, 30)), "idle": (3, (30, 20, 0))}


@pytest.fixture(scope="module")
def planted_flows(local_env, connect):
    """One topic per case, replicated by one MirrorSourceConnector and copied in full; yields (src, tgt, topics)."""
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    tag = os.urandom(4).hex()
    topics = {case: f"tonly-{case}-{tag}" for case in CASES}
    for case, (parts, counts) in CASES.items():
        create_topic(src, topics[case], partitions=parts)
        for p, n in enumerate(counts):
            produce(src, topics[case], _recs(p, f"{case}{p}-", n))
    spec = flow(f"tonly{tag}", list(topics.values()), tasks_max=1)
    apply_source(connect, source_config(local_env, spec))
    def copied(topic: str, n: int) -> bool:
        return sum(end_offsets(tgt, topic).values() or [0]) >= n

    for case, (_parts, counts) in CASES.items():
        total = sum(counts)
        wait_until(lambda t=topics[case], n=total: copied(t, n), 120, what=f"MM2 copied {topics[case]}")
    yield src, tgt, topics
    with contextlib.suppress(Exception):
        connect.delete(spec.connector_names()["source"])


def _plant(tgt: str, topic: str, partition: int, name: str) -> int:
    """One record written on the target only; returns its offset."""
    at = end_offsets(tgt, topic)[partition]
    produce(tgt, topic, [Rec(partition, f"planted-{name}".encode(), b"only on the target", (), BASE_TS + 10_000)])
    return at


@pytest.mark.parametrize("case", list(CASES))
def test_a_record_only_on_the_target_is_a_mismatch_within_one_interval_and_the_batch_verdict(
        planted_flows, spark, tmp_path, capfd, case):
    """``spark``: the session's one SparkSession, which the batch run's diff takes (it starts none of its own)."""
    src, tgt, topics = planted_flows
    topic = topics[case]
    parts, counts = CASES[case]
    running_mark = tmp_path / "running.json"
    planted: dict[int, int] = {}  # partition -> the planted record's target offset
    with _follower(src, tgt, topic, running_mark) as url:
        _caught_up(url, topic, parts, sum(counts))
        t0 = time.monotonic()
        if case == "tail":  # the last record of partition 0, nothing after it on the source
            planted[0] = _plant(tgt, topic, 0, case)
        elif case == "middle":  # then more source records, which MM2 copies after it
            planted[0] = _plant(tgt, topic, 0, case)
            produce(src, topic, _recs(0, "after-", 5))
            wait_until(lambda: end_offsets(tgt, topic)[0] >= planted[0] + 6, 120, what="MM2 copied the records after it")
        else:  # partition 0 goes on; 1 (records proven before) and 2 (never written) get nothing new from the source
            produce(src, topic, _recs(0, "more-", 10))
            planted[1] = _plant(tgt, topic, 1, f"{case}-1")
            planted[2] = _plant(tgt, topic, 2, f"{case}-2")
        wait_until(lambda: {p for p, v in _metric(url, "msk_migrate_proof_mismatch", topic).items() if v} == set(planted),
                   DETECT_SECONDS, what=f"the running follower's mismatch metric on {sorted(planted)}")
        took = time.monotonic() - t0
        mismatch = _metric(url, "msk_migrate_proof_mismatch", topic)
        assert all(mismatch[p] == 1.0 for p in planted) and sum(mismatch.values()) == len(planted), mismatch
        if case != "middle":  # nothing of the source is left unproven: the lag says 0, the mismatch series says 1
            lag = _metric(url, "msk_migrate_proof_lag_records", topic)
            assert all(lag[p] == 0.0 for p in planted), lag
    with capfd.disabled():  # the measured time, for the run's log (-s)
        print(f"\n{case}: the running follower named the planted record(s) {took:.1f} s after they were written")

    s_end = end_offsets(src, topic)

    def check_rows(rows: list[dict], where: str) -> None:
        by_p = {r["partition"]: r for r in rows}
        assert {p for p, r in by_p.items() if r["state"] == "mismatch"} == set(planted), (where, rows)
        for p, at in planted.items():
            m = by_p[p]["mismatch"]
            assert (m["category"], m["target_offset"]) == ("unexpected", at), (where, m)
            assert m["key"] == hashlib.sha256(f"planted-{case if case != 'idle' else f'{case}-{p}'}".encode()).hexdigest()
            # the mark stops at the planted record: below it on the target every record was proven
            assert by_p[p]["target_verified_up_to"] == at, (where, by_p[p])
            if case != "middle":  # the source was proven to its end; the planted record stands past it
                assert m["source_offset"] == by_p[p]["source_verified_up_to"] == s_end[p], (where, by_p[p])

    # the mark the running follower persisted: a gate reading it refuses
    doc = json.loads(running_mark.read_text())
    check_rows([{"partition": int(p), "state": pm["state"], "mismatch": pm.get("mismatch"),
                 "source_verified_up_to": pm["source_next"], "target_verified_up_to": pm["target_next"]}
                for p, pm in doc["topics"][topic]["partitions"].items()], "running follower's mark")
    gate = check_proof_mark(str(running_mark), {(topic, p): s_end[p] for p in range(parts)}, "the end offsets", 600)
    assert not gate.ok and "mismatch: unexpected" in gate.evidence, gate

    # a new user's one pass from a new mark
    code, once = _once(capfd, src, tgt, topic, tmp_path / "once.json")
    assert (code, once.get("verdict")) == (1, "mismatch"), once
    assert json_shape_problems(once) == []
    check_rows(once["rows"], "--once")

    # the batch proof of the same flow: the same verdict, the same partitions, one unexpected record each
    code, batch = _batch(capfd, src, tgt, topic, tmp_path / "report")
    assert (code, batch.get("verdict")) == (1, "mismatch"), batch.get("stderr", batch.get("verdict"))
    (tr,) = [t for t in batch["topics"] if t["topic"] == topic]
    by_p = {p["partition"]: p for p in tr["partitions"]}
    assert {p for p, r in by_p.items() if r["status"] != "match"} == set(planted), {p: r["status"] for p, r in by_p.items()}
    for p, at in planted.items():
        r = by_p[p]
        assert (r["status"], r["missing"], r["unexpected"], r["duplicates"], r["changed"]) == ("mismatch", 0, 1, 0, 0), r
        assert [s["target_offset"] for s in r["samples"]["unexpected"]] == [at], r["samples"]


def test_a_record_on_a_target_partition_the_source_does_not_have_is_a_mismatch_within_one_interval_everywhere(
        clusters, spark, uniq, tmp_path, capfd):
    """The target topic has a partition more than the source's (created before MM2, or kept from an older topic):
    MM2 never writes there, so a record on it is only on the target. The follower followed the partitions both
    sides have and said ``proven`` (lag 0, mismatch metric 0, a gate passed) while the batch run failed the topic.
    Now the running follower, a new user's ``--once``, the chained Spark run and the gate all stop at it."""
    src, tgt = clusters["source"], clusters["target"]
    topic = f"tonly-extra-{uniq}"
    create_topic(src, topic, partitions=2)
    create_topic(tgt, topic, partitions=3)
    for b in (src, tgt):  # what MM2 copies: the records of the partitions both sides have, in order
        produce(b, topic, [*_recs(0, "a", 20), *_recs(1, "b", 10)])
    s_end = end_offsets(src, topic)
    running_mark = tmp_path / "running.json"
    with _follower(src, tgt, topic, running_mark) as url:
        wait_until(lambda: _serving(url) and sum(_metric(url, "msk_migrate_proof_records_proven_total", topic).values()) == 30
                   and set(_metric(url, "msk_migrate_proof_lag_records", topic).values()) == {0.0}, 120,
                   what="the follower proving every record the source has (lag 0)")
        at = _plant(tgt, topic, 2, "extra")
        wait_until(lambda: {p for p, v in _metric(url, "msk_migrate_proof_mismatch", topic).items() if v} == {2},
                   DETECT_SECONDS, what="the running follower's mismatch metric on the target-only partition")
        assert _metric(url, "msk_migrate_proof_lag_records", topic) == {0: 0.0, 1: 0.0, 2: 0.0}

    def check_rows(rows: list[dict], where: str) -> None:
        by_p = {r["partition"]: r for r in rows}
        assert {p: r["state"] for p, r in by_p.items()} == {0: "following", 1: "following", 2: "mismatch"}, (where, rows)
        m = by_p[2]["mismatch"]
        assert (m["category"], m["source_offset"], m["target_offset"]) == ("unexpected", 0, at), (where, m)
        assert by_p[2]["target_verified_up_to"] == at and by_p[2]["source_verified_up_to"] == 0, (where, by_p[2])

    doc = json.loads(running_mark.read_text())
    check_rows([{"partition": int(p), "state": pm["state"], "mismatch": pm.get("mismatch"),
                 "source_verified_up_to": pm["source_next"], "target_verified_up_to": pm["target_next"]}
                for p, pm in doc["topics"][topic]["partitions"].items()], "running follower's mark")
    assert doc["topics"][topic]["partitions"]["2"]["mismatch"]["key"] == hashlib.sha256(b"planted-extra").hexdigest()
    # the gate needs the source's partitions only; the target-only partition's mismatch fails it all the same
    gate = check_proof_mark(str(running_mark), {(topic, p): s_end[p] for p in (0, 1)}, "the end offsets", 600)
    assert not gate.ok and f"{topic}[2] (on the target only) mismatch: unexpected" in gate.evidence, gate

    code, once = _once(capfd, src, tgt, topic, tmp_path / "once.json")
    assert (code, once.get("verdict")) == (1, "mismatch"), once
    check_rows(once["rows"], "--once")

    capfd.readouterr()
    code = run_cli(["--follow", *_flow_args(src, tgt, topic), "--mark", str(tmp_path / "chain.json"), "--once",
                    "--engine", "spark", "--output", "json"])
    out, err = capfd.readouterr()
    chained = json.loads(out) if out.strip() else {"stderr": err}
    assert (code, chained.get("verdict")) == (1, "mismatch"), chained
    check_rows(chained["rows"], "--engine spark")

    code, batch = _batch(capfd, src, tgt, topic, tmp_path / "report")
    assert (code, batch.get("verdict")) == (1, "mismatch"), batch.get("stderr", batch.get("verdict"))
    (tr,) = [t for t in batch["topics"] if t["topic"] == topic]
    assert {p["partition"]: p["status"] for p in tr["partitions"]} == {0: "match", 1: "match", 2: "extra_on_target"}


def test_a_target_merely_behind_or_read_past_the_sources_end_is_lag_never_a_mismatch(local_env, connect, tmp_path, capfd):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"tonly-lag-{os.urandom(4).hex()}"
    create_topic(src, topic, partitions=2)
    produce(src, topic, [*_recs(0, "a", 50), *_recs(1, "b", 50)])
    spec = flow(f"tonlylag{topic[-8:]}", [topic], tasks_max=1)
    name = spec.connector_names()["source"]
    apply_source(connect, source_config(local_env, spec))
    try:
        wait_until(lambda: sum(end_offsets(tgt, topic).values() or [0]) >= 100, 120, what="MM2 copied the first records")
        mark = tmp_path / "running.json"
        with _follower(src, tgt, topic, mark) as url:
            _caught_up(url, topic, 2, 100)
            # replication while the follower follows: passes whose target reads run into copies of records written
            # after the pass listed the source's end
            for k in range(8):
                produce(src, topic, [*_recs(0, "c", 50, k * 50), *_recs(1, "d", 50, k * 50)])
                assert set(_metric(url, "msk_migrate_proof_mismatch", topic).values()) == {0.0}
                time.sleep(0.3)
            wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= 900, 120, what="MM2 copied every record")
            _caught_up(url, topic, 2, 900)

            # MM2 paused: the source runs ahead of the target; proof lag, no mismatch
            connect.pause(name)
            connect.wait_state(name, "PAUSED", timeout=60)
            time.sleep(2)  # a copy in flight when the pause took effect lands now
            behind = end_offsets(tgt, topic)
            produce(src, topic, [*_recs(0, "e", 40), *_recs(1, "f", 40)])
            wait_until(lambda: min(_metric(url, "msk_migrate_proof_lag_records", topic).values()) > 0, 60,
                       what="proof lag while MM2 is paused")
            time.sleep(3 * INTERVAL)  # passes over the lagging target
            assert end_offsets(tgt, topic) == behind, "MM2 copied while paused"
            assert set(_metric(url, "msk_migrate_proof_mismatch", topic).values()) == {0.0}
            code, once = _once(capfd, src, tgt, topic, tmp_path / "once.json")
            assert (code, once.get("verdict")) == (0, "proven"), once
            assert {r["state"] for r in once["rows"]} == {"following"} and all(r["lag_records"] > 0 for r in once["rows"]), once

            connect.resume(name)
            wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= 980, 120, what="MM2 copied after the resume")
            _caught_up(url, topic, 2, 980)
        code, once = _once(capfd, src, tgt, topic, tmp_path / "once.json")
        assert (code, once.get("verdict")) == (0, "proven") and sum(r["compared"] for r in once["rows"]) == 980, once
    finally:
        with contextlib.suppress(Exception):
            connect.delete(name)


def test_a_pass_whose_target_ran_past_the_sources_listed_end_reads_the_source_on_and_proves_the_copy(
        clusters, uniq, tmp_path):
    """Deterministic: the source's end listed before a record and its copy were written, the target's after. The
    pass reads the copy past what it planned for the source; it lists the source's end again, reads the record
    and proves the pair (a follower that took every target record past the pass's source end for one only on the
    target would stop the mark here, on ordinary replication)."""
    from msk_migrate.config.migration import ClusterEndpoint
    from msk_migrate.validation.follow.cluster_facts import prepare
    from msk_migrate.validation.follow.follower import Clusters, Follower, FollowOptions
    from msk_migrate.validation.follow.store import MarkStore
    from msk_migrate.validation.request import ValidationRequest

    src, tgt = clusters["source"], clusters["target"]
    topic = f"tonly-race-{uniq}"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
        produce(b, topic, _recs(0, "a", 10))
    req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                            target=ClusterEndpoint(alias="target", bootstrap_servers=tgt), topics=[topic])
    cl = Clusters.open(req, "validate")
    store = MarkStore(str(tmp_path / "mark.json"))
    before = cl.facts()
    mark, _ = prepare(store, before)
    f = Follower(cl, store, mark, FollowOptions(mark=str(store), migration="validate"))
    try:
        f.assign()
        f.run_pass(before, time.monotonic() + 60)
        assert (mark.partition(topic, 0).compared, mark.partition(topic, 0).state) == (10, "following")
        late = _recs(0, "late", 1)
        produce(src, topic, late)
        produce(tgt, topic, late)  # what MM2 writes once it read the source's record
        after = cl.latest(before)
        planned = replace(after, topics={topic: replace(after.topics[topic], source_end=before.topics[topic].source_end)})
        assert planned.topics[topic].source_end[0] == 10 and planned.topics[topic].target_end[0] == 11
        f.run_pass(planned, time.monotonic() + 60)
        pm = mark.partition(topic, 0)
        assert (pm.state, pm.compared, pm.source_next, pm.target_next) == ("following", 11, 11, 11), pm
        assert not f.cmp[(topic, 0)].tgt
    finally:
        f.close()


def test_the_chained_spark_run_names_a_record_only_on_the_target_and_waits_for_a_copy_to_come(
        clusters, spark, uniq, tmp_path, capfd):
    """The follower's logic as a chained Spark run (``--follow --once --engine spark``): a target record past the
    source's records, at the tail and on a partition the source never wrote to, stops its partition as
    ``unexpected``; a target record whose source record was written after the run planned its source range (a
    copy) waits for the next run and is then proven."""
    from msk_migrate.config.migration import ClusterEndpoint
    from msk_migrate.validation.follow.follower import Clusters
    from msk_migrate.validation.follow.spark_chain import chain_pass
    from msk_migrate.validation.follow.store import MarkStore
    from msk_migrate.validation.request import ValidationRequest

    src, tgt = clusters["source"], clusters["target"]
    topic = f"tonly-chain-{uniq}"
    for b in (src, tgt):
        create_topic(b, topic, partitions=3)
        produce(b, topic, [*_recs(0, "a", 20), *_recs(1, "b", 10)])
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0 and sum(r["compared"] for r in doc["rows"]) == 30, doc

    req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                            target=ClusterEndpoint(alias="target", bootstrap_servers=tgt), topics=[topic])
    cl = Clusters.open(req, "validate")
    before = cl.facts()
    late = _recs(1, "late", 1)
    produce(src, topic, late)
    produce(tgt, topic, late)  # MM2's copy, read by a run that planned the source's range before the record
    after = cl.latest(before)
    planned = replace(after, topics={topic: replace(after.topics[topic], source_end=before.topics[topic].source_end)})
    opts = ({"kafka.bootstrap.servers": src}, {"kafka.bootstrap.servers": tgt})
    written, _ = chain_pass(spark, MarkStore(str(mark)), planned, *opts, source_ends=cl.source_ends)
    p1 = written.partition(topic, 1)
    assert (p1.state, p1.source_next, p1.target_next) == ("following", 10, 10), p1

    at0, at2 = _plant(tgt, topic, 0, "chain-0"), _plant(tgt, topic, 2, "chain-2")
    capfd.readouterr()
    code = run_cli(["--follow", *_flow_args(src, tgt, topic), "--mark", str(mark), "--once", "--engine", "spark",
                    "--output", "json"])
    out, err = capfd.readouterr()
    doc = json.loads(out) if out.strip() else {"stderr": err}
    assert (code, doc.get("verdict")) == (1, "mismatch"), doc
    rows = {r["partition"]: r for r in doc["rows"]}
    assert (rows[1]["state"], rows[1]["compared"], rows[1]["source_verified_up_to"]) == ("following", 11, 11), rows[1]
    for p, at, s_end in ((0, at0, 20), (2, at2, 0)):
        m = rows[p]["mismatch"]
        assert rows[p]["state"] == "mismatch" and rows[p]["target_verified_up_to"] == at, rows[p]
        assert (m["category"], m["source_offset"], m["target_offset"]) == ("unexpected", s_end, at), m
