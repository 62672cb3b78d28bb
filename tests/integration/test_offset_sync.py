"""Exact offset translation on the real local clusters: every shape of issue 22, each checked by a
consumer on the other cluster that reads from the committed offsets and must see every source record
after the commit point, and nothing before it except what the certificate declares.

Shapes MM2 cannot be forced into (a restart's duplicates, LogAppendTime, retention-trimmed sources) are
written straight onto target topics the way MM2 writes them (same partition, key, value, headers and
timestamp, in order); the plain and transactional cases go through the real MM2 of the session.

With ``MSK_MIGRATE_RECORD_WINDOWS=DIR`` each case also writes what the reader read (the planner's input) to
``DIR/<case>.json``: that is how tests/unit/data/offset_windows/ was recorded for the planner's unit tests.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from msk_migrate.access.admin import AdminSession
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.offset_translation.identity import identity_redelivery, identity_redelivery_many
from msk_migrate.offset_translation.planner import PartitionPlan, Placement
from msk_migrate.offset_translation.request import SyncRequest
from msk_migrate.offset_translation.result import SyncResult
from msk_migrate.offset_translation.sync import sync_group
from tests.kafka_helpers import commit_group, committed, create_topic, end_offsets, wait_until

from .conftest import TEST_MIGRATION
from .test_cli import _migration_file, run

Record = tuple[bytes | None, bytes | None, list | None, int]  # key, value, headers, timestamp ms


# ---- helpers -------------------------------------------------------------------------------------
def _produce(bootstrap: str, topic: str, partition: int, records: list[Record], **conf) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    for key, value, headers, ts in records:
        p.produce(topic, key=key, value=value, headers=headers, partition=partition, timestamp=ts)
    assert p.flush(30) == 0


def _read(bootstrap: str, topic: str, partition: int, start: int) -> list[Record]:
    """Every record a read_committed consumer gets from ``start`` to the current end."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time_ns()}", "enable.auto.commit": False,
                  "isolation.level": "read_committed", "enable.partition.eof": True})
    _lo, hi = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    out: list[Record] = []
    if hi <= start:
        c.close()
        return out
    c.assign([TopicPartition(topic, partition, start)])
    deadline = time.time() + 30
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            if c.position([TopicPartition(topic, partition)])[0].offset >= hi:
                break
            continue
        if m.error():
            break
        out.append((m.key(), m.value(), m.headers(), m.timestamp()[1]))
        if m.offset() + 1 >= hi:
            break
    c.close()
    return out


def _mirror(src: str, tgt: str, topic: str, partition: int, shape=lambda recs: recs, start: int = 0) -> list[Record]:
    """Copy one partition to the same topic name on ``tgt`` as MM2 does (optionally reshaped)."""
    recs = shape(_read(src, topic, partition, start))
    _produce(tgt, topic, partition, recs)
    return recs


def _sessions(local_env) -> tuple[AdminSession, AdminSession]:
    return AdminSession.for_endpoint("source", local_env.source()), AdminSession.for_endpoint("target", local_env.target())


def _is_subsequence(small: list, big: list) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def _assert_no_gap(frm: str, to: str, group: str, proofs: tuple[PartitionPlan, ...] | list[PartitionPlan], expect_redelivery: int = 0) -> None:
    """A consumer of ``group`` on ``to`` sees every record after the commit point on ``frm`` in order, and
    beyond them only what the proof declares (re-delivered identities and duplicate copies)."""
    assert proofs
    compared = 0
    for pr in proofs:
        assert pr.method == "exact", pr.reason
        want = _read(frm, pr.topic, pr.partition, pr.effective_commit)
        got_at = committed(to, group, pr.to_topic, pr.partition + 1)[pr.partition]
        assert got_at == pr.target_offset
        seen = _read(to, pr.to_topic, pr.partition, got_at)
        values_want = [(k, v) for k, v, _, _ in want]
        values_seen = [(k, v) for k, v, _, _ in seen]
        assert _is_subsequence(values_want, values_seen), (pr.topic, pr.partition, pr.reason)
        assert len(values_seen) - len(values_want) == (pr.redelivery or 0) + len(pr.duplicates)
        compared += len(values_want)
    assert sum(p.redelivery or 0 for p in proofs) == expect_redelivery


def _spec(unique: str):
    return TEST_MIGRATION.model_copy(update={"topics": [f"it-{unique}-.*", f"ots-{unique}-.*"]})


def _records(n: int, ts0: int | None = None, tag: str = "r") -> list[Record]:
    ts0 = ts0 or int(time.time() * 1000) - 60_000
    return [(f"k{i % 7}".encode(), f"{tag}{i}".encode(), [("h", str(i % 3).encode())], ts0 + i) for i in range(n)]


@dataclass(frozen=True)
class _Clusters:
    """What sync_group takes (runbook.session.MigrationSession has the same shape)."""

    migration: MigrationSpec
    source: AdminSession
    target: AdminSession
    source_alias: str = "source"
    target_alias: str = "target"


def _sync(local_env, unique, group, *, case: str | None = None, **kw) -> SyncResult[Any]:
    res = sync_group(_Clusters(_spec(unique), *_sessions(local_env)), SyncRequest(group, **kw))
    if case:
        _record(case, res.partitions)
    return res


def _record(case: str, plans) -> None:
    """Write what was read for ``plans`` to $MSK_MIGRATE_RECORD_WINDOWS/<case>.json (nothing when unset)."""
    out = os.environ.get("MSK_MIGRATE_RECORD_WINDOWS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{case}.json").write_text(json.dumps([p.read.to_dict() for p in plans]) + "\n")


# ---- shapes written straight to the target -------------------------------------------------------------
def test_duplicates_from_a_restart_place_the_group_on_the_first_copy_with_no_gap(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-dup", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(200))
    # an at-least-once restart: the task wrote 0..119, restarted from its committed 80 and wrote 80..199 again
    _mirror(src, tgt, topic, 0, lambda r: r[:120] + r[80:])
    commit_group(src, group, topic, {0: 100})
    res = _sync(local_env, unique, group, case="replay-duplicates")
    (pr,) = res.partitions
    assert pr.target_offset == 100  # the first copy of record 100: every later record is after it
    assert [m.fp for m in pr.redelivered] and pr.redelivery == 20  # 80..99 replayed after 119
    assert len(pr.duplicates) == 20  # 100..119 come twice
    _assert_no_gap(src, tgt, group, res.partitions, expect_redelivery=20)


def test_a_replay_from_further_back_than_the_first_read_declares_every_redelivered_record(local_env, unique):
    """The source is first read 32 offsets before the commit point; a replay that restarted 50 records
    before it is told apart only by the older identities read for that partition alone."""
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-deep", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(200))
    _mirror(src, tgt, topic, 0, lambda r: r[:120] + r[50:])  # restarted from 50 after writing 0..119
    commit_group(src, group, topic, {0: 100})
    res = _sync(local_env, unique, group, case="replay-from-further-back")
    (pr,) = res.partitions
    assert pr.target_offset == 100 and pr.redelivery == 50 and len(pr.duplicates) == 20
    _assert_no_gap(src, tgt, group, res.partitions, expect_redelivery=50)


def test_groups_at_different_points_of_one_partition_are_counted_together_as_each_alone(local_env, unique):
    """``offsets verify`` counts a chunk of groups in rounds (one partition once per round): five groups
    at four commit points of one partition, behind, at and ahead of their placement, must get exactly
    what each gets counted alone."""
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"ots-{unique}-many"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(300))
    # a restart: target 0..119 = source 0..119, target 120..339 = source 80..299
    _mirror(src, tgt, topic, 0, lambda r: r[:120] + r[80:])
    tp = (topic, 0)
    groups = [  # (group, source commit, target commit, records it re-reads by identity)
        ("behind", 50, 40, 10),      # placement 50: re-reads 40..49
        ("placed", 150, 190, 0),     # placement of source 150 is its only copy, target 190
        ("early", 150, 150, 40),     # same commit point, target commit 40 records before it
        ("replay", 100, 100, 20),    # placement 100: 80..99 come again after 119
        ("ahead", 250, 300, -10),    # placement 290: committing 300 skips 10 records
    ]
    batch = [(g, {tp: c}, {tp: t}) for g, c, t, _ in groups]
    S, T = _sessions(local_env)
    together = identity_redelivery_many(S, T, batch, lambda t: t)
    alone = {g: identity_redelivery(S, T, g, {tp: c}, {tp: t}, lambda t: t) for g, c, t, _ in groups}
    assert together == alone == {g: {tp: n} for g, _, _, n in groups}


def test_same_timestamps_and_repeating_keys_are_matched_as_a_sequence(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-same", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    ts = int(time.time() * 1000) - 5000
    recs = [(f"k{i % 3}".encode(), f"{i % 4}".encode() if i % 2 else f"v{i}".encode(), None, ts) for i in range(300)]
    _produce(src, topic, 0, recs)
    _mirror(src, tgt, topic, 0, lambda r: [r[0]] * 3 + r)  # the target holds 3 more records first: offsets differ
    commit_group(src, group, topic, {0: 151})
    res = _sync(local_env, unique, group, case="same-timestamps-repeating-keys")
    assert res.partitions[0].target_offset == 154
    _assert_no_gap(src, tgt, group, res.partitions)


def test_retention_trimmed_source_and_a_commit_before_its_oldest_record(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, g1, g2 = f"ots-{unique}-ret", f"ots-{unique}-g1", f"ots-{unique}-g2"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(150))
    a = AdminClient({"bootstrap.servers": src})
    for fut in a.delete_records([TopicPartition(topic, 0, 60)]).values():  # retention: offsets 0..59 gone
        fut.result(timeout=30)
    _mirror(src, tgt, topic, 0, start=60)  # MM2 started after retention: target offset 0 = source offset 60
    commit_group(src, g1, topic, {0: 100})
    commit_group(src, g2, topic, {0: 10})  # before the oldest retained record
    r1 = _sync(local_env, unique, g1, case="retention-trimmed")
    assert r1.partitions[0].target_offset == 40
    _assert_no_gap(src, tgt, g1, r1.partitions)
    r2 = _sync(local_env, unique, g2, case="commit-before-oldest")
    assert r2.partitions[0].effective_commit == 60 and r2.partitions[0].target_offset == 0
    _assert_no_gap(src, tgt, g2, r2.partitions)


def test_log_append_time_target_is_matched_by_content_and_order(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-lat", f"ots-{unique}-g"
    create_topic(src, topic, partitions=1)
    create_topic(tgt, topic, partitions=1, config={"message.timestamp.type": "LogAppendTime"})
    _produce(src, topic, 0, _records(120, ts0=int(time.time() * 1000) - 3_600_000))
    _mirror(src, tgt, topic, 0, lambda r: r[:5] + r)  # 5 extra leading copies: offsets differ by 5
    commit_group(src, group, topic, {0: 70})
    res = _sync(local_env, unique, group, case="log-append-time")
    (pr,) = res.partitions
    assert pr.target_offset == 75 and pr.method == "exact"
    _assert_no_gap(src, tgt, group, res.partitions)


def test_empty_partition_and_a_group_committed_at_the_end(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-end", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=2)
    _produce(src, topic, 0, _records(80))
    _mirror(src, tgt, topic, 0, lambda r: r[:3] + r)
    commit_group(src, group, topic, {0: 80, 1: 0})
    res = _sync(local_env, unique, group, case="empty-partition-and-commit-at-end")
    by_p = {p.partition: p for p in res.partitions}
    assert by_p[0].target_offset == 83 and by_p[1].target_offset == 0
    assert by_p[0].placement is Placement.AT_END and by_p[1].placement is Placement.EMPTY
    assert committed(tgt, group, topic, 2) == {0: 83, 1: 0}
    # records produced after the move arrive after the placement: the moved group reads exactly them
    _produce(src, topic, 0, _records(5, tag="new"))
    _mirror(src, tgt, topic, 0, start=80)
    _produce(src, topic, 1, _records(4, tag="new"))
    _mirror(src, tgt, topic, 1)
    _assert_no_gap(src, tgt, group, res.partitions)


def test_compacted_source_without_the_record_before_the_commit_point(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-cmp", f"ots-{unique}-g"
    create_topic(src, topic, partitions=1, config={"cleanup.policy": "compact", "segment.ms": "100",
                                                   "min.cleanable.dirty.ratio": "0.001", "delete.retention.ms": "0"})
    create_topic(tgt, topic, partitions=1)
    ts0 = int(time.time() * 1000) - 60_000
    # keys repeat: k5 at offset 49 is written again at 150, so compaction removes offset 49
    recs = [(f"u{i}".encode(), f"v{i}".encode(), None, ts0 + i) for i in range(150)]
    recs[49] = (b"k5", b"old-k5", None, ts0 + 49)
    _produce(src, topic, 0, recs)
    # the target copy was made before compaction (it still holds offset 49's record)
    _mirror(src, tgt, topic, 0)
    _produce(src, topic, 0, [(b"k5", b"new-k5", None, ts0 + 150)])
    # a record a minute younger rolls the segment (segment.ms counts record timestamps): the cleaner may
    # now compact the closed segment holding both k5 records
    _produce(src, topic, 0, [(b"roll", b"roll", None, ts0 + 60_000)])
    wait_until(lambda: len(_read(src, topic, 0, 0)) == 151, 90, interval=1, what="source compaction")
    _mirror(src, tgt, topic, 0, start=150)
    commit_group(src, group, topic, {0: 50})
    res = _sync(local_env, unique, group, case="compacted-gap")
    (pr,) = res.partitions
    assert pr.target_offset == 50 and not pr.redelivered
    _assert_no_gap(src, tgt, group, res.partitions)


# ---- bad input: one line, exit 2, nothing committed ----------------------------------------------------
def test_bad_input_names_the_group_or_partition_and_commits_nothing(tmp_path, local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-bad", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(100))
    _mirror(src, tgt, topic, 0, lambda r: r[:50])  # replication behind the commit point
    commit_group(src, group, topic, {0: 80})
    mf = _migration_file(tmp_path, local_env, topics=[f"ots-{unique}-.*"])

    def one_line(r, *words):
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
        for w in words:
            assert w in lines[0], lines[0]
        assert committed(tgt, group, topic, 1) == {0: -1001}

    one_line(run("offsets", "sync", "--config", str(mf), "--group", group), "replication has not reached", f"{topic}[0]")
    one_line(run("offsets", "sync", "--config", str(mf), "--group", f"ots-{unique}-nobody"), "unknown consumer group")
    # content that differs on the target after the commit point cannot be proven: --exact-only refuses
    other, g2 = f"ots-{unique}-differ", f"ots-{unique}-g2"
    for b in (src, tgt):
        create_topic(b, other, partitions=1)
    _produce(src, other, 0, _records(100))
    _mirror(src, tgt, other, 0, lambda r: r[:80] + [(k, b"changed" + v, h, t) for k, v, h, t in r[80:]])
    commit_group(src, g2, other, {0: 80})
    r = run("offsets", "sync", "--config", str(mf), "--group", g2, "--exact-only")
    assert r.returncode == 2 and "--exact-only" in r.stderr and f"{other}[0]" in r.stderr, r.stderr
    assert committed(tgt, g2, other, 1) == {0: -1001}
    r = run("offsets", "sync", "--config", str(mf), "--group", g2, "--output", "json")
    assert r.returncode == 1, r.stderr  # not proven, no checkpoint: left as it is, and said why
    (row,) = json.loads(r.stdout)["rows"]
    assert row["method"] == "none" and "differ" in row["reason"] and committed(tgt, g2, other, 1) == {0: -1001}
    c = Consumer({"bootstrap.servers": src, "group.id": group, "enable.auto.commit": False})
    c.subscribe([topic])
    try:
        wait_until(lambda: c.poll(0.5) is not None or c.assignment(), 30, what="member joined")
        one_line(run("offsets", "sync", "--config", str(mf), "--group", group), "active member", "source")
    finally:
        c.close()


# ---- rollback: a group moving back to the source ----------------------------------------------------------
def test_rollback_places_a_group_back_on_the_source_after_reverse_replication(local_env, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"ots-{unique}-back", f"ots-{unique}-g"
    for b in (src, tgt):
        create_topic(b, topic, partitions=1)
    _produce(src, topic, 0, _records(100, tag="past"))
    _mirror(src, tgt, topic, 0, lambda r: r[10:])  # forward copy began at source offset 10
    _produce(tgt, topic, 0, _records(60, tag="moved"))  # producers moved to the target
    _produce(src, topic, 0, _read(tgt, topic, 0, 90))  # the reverse flow copies what they wrote
    commit_group(tgt, group, topic, {0: 120})  # read 30 of the 60 new records on the target, then stopped
    S, T = _sessions(local_env)
    res = sync_group(_Clusters(_spec(unique), S, T), SyncRequest(group, "source"))
    (pr,) = res.partitions
    assert res.direction == "target->source" and pr.target_offset == 130
    _assert_no_gap(tgt, src, group, res.partitions)


# ---- through real MM2, with the certificate and the cutover gate ----------------------------------------
@pytest.mark.usefixtures("mm2")
def test_plain_and_transactional_topics_through_mm2_move_with_zero_redelivery_and_a_certificate(
        tmp_path, local_env, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    # the session's MM2 copies the it-* topics; the group is outside its groups (it-*), so MM2's own group offset
    # sync (every second) cannot write the target's offsets between `offsets sync` and the reads that check them
    plain, txn, group = f"it-{unique}-plain", f"it-{unique}-txn", f"ots-{unique}-mover"
    create_topic(src, plain, partitions=3)
    create_topic(src, txn, partitions=2)
    for p in range(3):
        _produce(src, plain, p, _records(400, tag=f"p{p}-"))
    tp = Producer({"bootstrap.servers": src, "transactional.id": f"it-{unique}-tx", "linger.ms": 5})
    tp.init_transactions(30)
    i = 0
    for batch in range(24):
        tp.begin_transaction()
        for _ in range(15):
            tp.produce(txn, key=f"k{i % 5}".encode(), value=f"t{i}".encode(), partition=i % 2)
            i += 1
        if batch % 4 == 3:
            tp.abort_transaction(30)  # aborted records and markers: offset holes on the source
        else:
            tp.commit_transaction(30)
    src_ends = end_offsets(src, txn)
    wait_until(lambda: all(t in AdminClient({"bootstrap.servers": tgt}).list_topics(timeout=10).topics for t in (plain, txn))
               and sum(end_offsets(tgt, plain).values()) >= 1200 and sum(end_offsets(tgt, txn).values()) >= 270,
               120, what="MM2 replicated both topics")
    # partition 0 of the transactional topic: offsets 0..7 the first transaction's records, 8 its marker;
    # a read_committed consumer that read them commits 8: the commit point sits on the marker
    commit_group(src, group, plain, {0: 123, 1: 0, 2: 400})
    commit_group(src, group, txn, {0: 8, 1: src_ends[1] // 2})
    mf = _migration_file(tmp_path, local_env, groups=[f"ots-{unique}-.*"])
    cert_dir = tmp_path / "certs"
    r = run("offsets", "sync", "--config", str(mf), "--group", group, "--exact-only", "--certificate", str(cert_dir),
            "--output", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["talked_to"]["target"] == tgt and doc["verdict"] == "exact" and doc["totals"]["redelivered"] == 0
    assert {x["method"] for x in doc["rows"]} == {"exact"} and len(doc["rows"]) == 5
    cert = json.loads((cert_dir / f"offset-certificate-{group}.json").read_text())
    assert (cert_dir / f"offset-certificate-{group}.html").read_text().count("<tr class='exact'>") == 5
    assert cert["totals"]["records_matched"] > 0
    S, T = _sessions(local_env)
    from msk_migrate.offset_translation.plan import translate_group

    proofs = translate_group(S, T, group, lambda t: t, lambda t: t in (plain, txn), {})
    _record("mm2-plain-and-transactional", proofs)
    by_tp = {(p.topic, p.partition): p.placement for p in proofs}
    assert by_tp[(plain, 2)] is Placement.AT_END and by_tp[(plain, 0)] is by_tp[(txn, 0)] is Placement.EXACT, by_tp
    _assert_no_gap(src, tgt, group, proofs)
    # offsets verify counts re-delivery by identity: 0 everywhere
    r = run("offsets", "verify", "--config", str(mf), "--group", group, "--output", "json")
    rows = json.loads(r.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert rows and all(x["redelivery"] == 0 for x in rows), rows
    # the cutover gate accepts the certificate (and refuses it for another group)
    r = run("cutover", "check", "--config", str(mf), "--connect-url", connect.url, "--group", group, "--certificate",
            str(cert_dir), "--output", "json")
    conds = {c["name"]: c for c in json.loads(r.stdout)["conditions"]}
    assert conds["offset certificate"]["ok"], conds["offset certificate"]
    commit_group(tgt, group, plain, {0: 0})
    r = run("cutover", "check", "--config", str(mf), "--connect-url", connect.url, "--group", group, "--certificate",
            str(cert_dir), "--output", "json")
    conds = {c["name"]: c for c in json.loads(r.stdout)["conditions"]}
    assert not conds["offset certificate"]["ok"] and "re-run offsets sync" in conds["offset certificate"]["evidence"]


# ---- a wave's groups, recorded: to the target and back (a consumers-only wave rolls back) -----------------
def test_a_waves_groups_move_together_are_recorded_and_a_consumers_only_wave_rolls_back_to_the_source(
        tmp_path, local_env, unique):
    from msk_migrate.ledger import open_ledger

    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    first, second = f"ots-{unique}-wa", f"ots-{unique}-wb"
    for t in (first, second):
        for b in (src, tgt):
            create_topic(b, t, partitions=1)
        _produce(src, t, 0, _records(100, tag=t))
        _mirror(src, tgt, t, 0)
    g1, g2, g3 = f"ots-{unique}-wg1", f"ots-{unique}-wg2", f"ots-{unique}-wg3"
    commit_group(src, g1, first, {0: 40})
    commit_group(src, g2, first, {0: 60})
    commit_group(src, g3, second, {0: 50})
    name = f"ots{unique}"
    mf = _migration_file(tmp_path, local_env, name=name, topics=[f"ots-{unique}-w.*"], groups=[f"ots-{unique}-wg.*"],
                         waves={"first": [first], "second": [second]})
    ledger = open_ledger(str(tmp_path / "migration-ledger"), name)

    r = run("offsets", "sync", "--config", str(mf))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: --group:"), r.stderr

    r = run("offsets", "sync", "--config", str(mf), "--wave", "first", "--exact-only", "--certificate", str(tmp_path / "c"),
            "--output", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert [g["group"] for g in doc["groups"]] == [g1, g2] and doc["verdict"] == "exact"
    assert committed(tgt, g1, first, 1) == {0: 40} and committed(tgt, g2, first, 1) == {0: 60}
    assert committed(tgt, g3, second, 1) == {0: -1001}  # another wave's group: not moved
    view = ledger.read()
    for g in (g1, g2):
        rec = view.get("group", g)
        assert (rec.state, rec.wave) == ("consumers-moved", "first") and rec.evidence.endswith(f"offset-certificate-{g}.json")
    assert view.get("group", g3) is None

    # the consumers read on the target, then the wave is rolled back (its producers never moved)
    commit_group(tgt, g1, first, {0: 70})
    r = run("offsets", "sync", "--config", str(mf), "--wave", "first", "--to", "source", "--output", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [g["group"] for g in json.loads(r.stdout)["groups"]] == [g1, g2]
    assert committed(src, g1, first, 1) == {0: 70} and committed(src, g2, first, 1) == {0: 60}
    view = ledger.read()
    assert [view.state_of("group", g) for g in (g1, g2)] == ["rolled-back", "rolled-back"]
    r = run("offsets", "sync", "--config", str(mf), "--wave", "first", "--to", "source", "--output", "json")
    assert r.returncode == 1 and json.loads(r.stdout)["verdict"] == "nothing-in-wave", r.stdout  # nothing is on the target
