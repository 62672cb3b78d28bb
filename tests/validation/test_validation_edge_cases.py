"""Edge cases (real Kafka, real Spark): null keys and tombstones, headers with repeats and null values,
empty partitions, partition counts that differ, a topic missing on the target, LogAppendTime,
transactions (read_committed), compacted topics, config parity, time windows and offset snapshots."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from tests.kafka_helpers import BASE_TS, Pair, Rec, create_pairs, produce, records
from validation_helpers import make_request


@pytest.fixture(scope="module")
def edge(clusters):
    run = uuid.uuid4().hex[:6]
    S, T = clusters["source"], clusters["target"]

    def pair(name, **kw):
        return Pair(S, T, f"edge-{name}-{run}", **kw)

    nulls = [
        Rec(0, None, b"null-key", (), BASE_TS),
        Rec(0, b"gone", None, (), BASE_TS + 1),  # tombstone
        Rec(0, b"", b"", (), BASE_TS + 2),  # empty key and value (not null)
        Rec(0, None, None, (), BASE_TS + 3),
        Rec(0, b"k", b"v", (("h", None),), BASE_TS + 4),  # null header value
    ]
    hdrs = [
        Rec(0, b"a", b"1", (("x", b"1"), ("x", b"2"), ("y", None)), BASE_TS),
        Rec(0, b"b", b"2", (("x", b"1"), ("x", b"1")), BASE_TS + 1),  # the same header twice
        Rec(0, b"c", b"3", (), BASE_TS + 2),
    ]
    p = {
        "nulls": pair("nulls", partitions=1),
        "nulls_diff": pair("nulls-diff", partitions=1),
        "headers": pair("headers", partitions=1),
        "headers_diff": pair("headers-diff", partitions=1),
        "empty_parts": pair("empty-parts", partitions=4),
        "part_count": pair("part-count", partitions=2, target_partitions=3),
        "no_target": pair("no-target", partitions=2, on_target=False),
        "lat": pair("lat", partitions=1, config={"message.timestamp.type": "LogAppendTime"}),
        "txn": pair("txn", partitions=1),
        "config": pair("config", partitions=1, config={"retention.ms": "86400000"}, target_config={}),
    }
    create_pairs(list(p.values()))
    p["nulls"].write(nulls)
    p["nulls_diff"].write(nulls, [r.with_(value=b"") if r.key == b"gone" else r for r in nulls])
    p["headers"].write(hdrs)
    p["headers_diff"].write(hdrs, [r.with_(headers=r.headers[:1]) if r.key == b"b" else r for r in hdrs])
    p["empty_parts"].write([r.with_(partition=0) for r in records(6, partitions=1)])
    p["part_count"].write(records(10, partitions=2))
    produce(S, p["no_target"].topic, records(8, partitions=2))
    p["lat"].write(records(6, partitions=1))  # appended at different times on each cluster
    committed_a = records(5, partitions=1, prefix="a")
    aborted = records(4, partitions=1, prefix="x")
    committed_c = records(3, partitions=1, prefix="c", ts0=BASE_TS + 100)
    produce(S, p["txn"].topic, committed_a, transactional=True)
    produce(S, p["txn"].topic, aborted, transactional=True, abort=True)
    produce(S, p["txn"].topic, committed_c, transactional=True)
    produce(T, p["txn"].topic, committed_a + committed_c)  # what MM2 (read_committed) copies
    p["config"].write(records(3, partitions=1))
    return {k: v.topic for k, v in p.items()}


@pytest.fixture(scope="module")
def edge_report(clusters, spark, edge):
    from msk_migrate.validation import run_validation

    until = int(time.time() * 1000) + 600_000  # LogAppendTime records are stamped "now"
    req = make_request(clusters, topics=sorted(edge.values()), mode="auto", until_timestamp_ms=until)
    return run_validation(req, spark=spark)


def test_null_keys_and_tombstones_match_when_identical(edge_report, edge):
    t = edge_report.topic(edge["nulls"])
    assert t.status == "match"
    (p,) = t.partitions
    assert p.source.count == 5 and p.source.null_keys == 2 and p.source.tombstones == 2


def test_tombstone_replaced_by_empty_value_is_a_changed_value(edge_report, edge):
    t = edge_report.topic(edge["nulls_diff"])
    (p,) = t.partitions
    assert p.status == "mismatch" and p.method == "full"
    assert p.changes == {"value": 1}
    assert p.samples["changed"][0]["key"] == "gone"


def test_repeated_headers_and_null_header_values_match_when_identical(edge_report, edge):
    assert edge_report.topic(edge["headers"]).status == "match"


def test_dropped_repeated_header_is_detected(edge_report, edge):
    (p,) = edge_report.topic(edge["headers_diff"]).partitions
    assert p.status == "mismatch" and p.changes == {"headers": 1}
    assert p.samples["changed"][0]["key"] == "b"


def test_empty_partitions_match(edge_report, edge):
    t = edge_report.topic(edge["empty_parts"])
    assert t.status == "match"
    assert [p.source.count for p in t.partitions] == [6, 0, 0, 0]
    assert all(p.target.count == p.source.count for p in t.partitions)


def test_partition_count_difference_is_reported_not_crashed_on(edge_report, edge):
    t = edge_report.topic(edge["part_count"])
    assert t.status == "mismatch"
    assert t.source_partitions == 2 and t.target_partitions == 3
    assert any("partition count differs: source 2, target 3" in x for x in t.problems)
    statuses = {p.partition: p.status for p in t.partitions}
    assert statuses == {0: "match", 1: "match", 2: "extra_on_target"}
    assert t.to_dict()["metadata"]["partition_count_match"] is False


def test_topic_missing_on_target_is_reported(edge_report, edge):
    t = edge_report.topic(edge["no_target"])
    assert t.status == "missing_on_target"
    assert t.counts()["missing"] == 8
    assert all(p.status == "missing_on_target" for p in t.partitions)
    assert any("does not exist on the target" in x for x in t.problems)


def test_log_append_time_topic_excludes_timestamps_with_a_warning(edge_report, edge):
    t = edge_report.topic(edge["lat"])
    assert t.status == "match"
    assert t.timestamps_in_fingerprint is False
    assert t.timestamp_type == {"source": "LogAppendTime", "target": "LogAppendTime"}
    assert any(edge["lat"] in w and "LogAppendTime" in w for w in edge_report.warnings)


def test_aborted_transactions_are_not_missing(edge_report, edge):
    t = edge_report.topic(edge["txn"])
    assert t.status == "match", t.to_dict()
    assert t.counts()["source_count"] == 8  # 5 + 3 committed; the 4 aborted are not read


def test_synced_topic_config_difference_is_a_metadata_mismatch(edge_report, edge):
    t = edge_report.topic(edge["config"])
    assert t.status == "mismatch"
    assert all(p.status == "match" for p in t.partitions)  # the records are the same
    assert t.config_differences == [{"name": "retention.ms", "source": "86400000", "target": "604800000"}]


def test_edge_report_verdict_is_mismatch_with_exit_code_1(edge_report):
    assert edge_report.verdict == "mismatch" and edge_report.exit_code == 1


# ---- compacted topics ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compacted(clusters):
    run = uuid.uuid4().hex[:6]
    S, T = clusters["source"], clusters["target"]
    cfg = {"cleanup.policy": "compact"}
    same = Pair(S, T, f"compact-same-{run}", partitions=1, config=cfg)
    changed = Pair(S, T, f"compact-changed-{run}", partitions=1, config=cfg)
    create_pairs([same, changed])
    history = [
        Rec(0, b"k1", b"v1", (), BASE_TS), Rec(0, b"k2", b"v1", (), BASE_TS + 1),
        Rec(0, b"k1", b"v2", (), BASE_TS + 2), Rec(0, b"k3", b"v1", (), BASE_TS + 3),
        Rec(0, b"k3", None, (), BASE_TS + 4),  # k3 deleted
    ]
    compacted_copy = [history[1], history[2]]  # the target already compacted (tombstone removed too)
    same.write(history, compacted_copy)
    changed.write(history, [history[1], history[2].with_(value=b"v3")])
    return {"same": same.topic, "changed": changed.topic}


def test_compacted_topic_compared_by_latest_value_per_key(clusters, spark, compacted):
    from msk_migrate.validation import run_validation

    req = make_request(clusters, topics=sorted(compacted.values()), compacted="latest-per-key", mode="auto")
    rep = run_validation(req, spark=spark)
    same = rep.topic(compacted["same"])
    assert same.status == "match" and same.compare == "latest-per-key"
    assert same.partitions[0].source.count == 2  # live keys k1, k2
    (p,) = rep.topic(compacted["changed"]).partitions
    assert p.status == "mismatch" and p.changes == {"value": 1}
    assert p.samples["changed"][0]["key"] == "k1"


def test_compacted_topic_compared_record_by_record_hints_at_latest_per_key(clusters, spark, compacted):
    from msk_migrate.validation import run_validation

    rep = run_validation(make_request(clusters, topics=[compacted["same"]], mode="checksum"), spark=spark)
    t = rep.topic(compacted["same"])
    assert t.status == "mismatch"
    assert any("--compacted latest-per-key" in x for x in t.problems)


# ---- windows ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def windowed(clusters):
    """Source has 20 records; the target has the first 15 (MM2 still copying) plus nothing else."""
    run = uuid.uuid4().hex[:6]
    lag = Pair(clusters["source"], clusters["target"], f"window-lag-{run}", partitions=1)
    lag2 = Pair(clusters["source"], clusters["target"], f"window-lag2-{run}", partitions=1)
    create_pairs([lag, lag2])
    recs = records(20, partitions=1)
    lag.write(recs, recs[:15])
    lag2.write(recs, recs[:15])
    return {"lag": lag.topic, "lag2": lag2.topic}


def test_time_window_compares_only_records_inside_it(clusters, spark, windowed):
    from msk_migrate.validation import run_validation

    topic = windowed["lag"]
    inside = make_request(
        clusters, topics=[topic], mode="auto", from_timestamp_ms=BASE_TS + 2, until_timestamp_ms=BASE_TS + 15
    )
    rep = run_validation(inside, spark=spark)
    (p,) = rep.topic(topic).partitions
    assert rep.verdict == "match" and p.source.count == 13
    assert (p.source.min_timestamp, p.source.max_timestamp) == (BASE_TS + 2, BASE_TS + 14)
    assert rep.window["from_timestamp_ms"] == BASE_TS + 2


def test_offset_snapshot_defines_the_source_records(clusters, spark, windowed, tmp_path):
    from msk_migrate.validation import run_validation
    from msk_migrate.validation.request import load_snapshot

    snap = tmp_path / "snapshot.json"
    snap.write_text(json.dumps({windowed["lag"]: {"0": 15}, windowed["lag2"]: {"0": {"start": 5, "end": 20}}}))
    rep = run_validation(make_request(clusters, offsets_snapshot=load_snapshot(snap), mode="auto"), spark=spark)
    assert rep.window["kind"] == "offsets"
    (copied,) = rep.topic(windowed["lag"]).partitions
    assert copied.status == "match" and copied.source.count == 15 and copied.target.count == 15
    (behind,) = rep.topic(windowed["lag2"]).partitions
    assert behind.status == "mismatch"
    assert (behind.source.start_offset, behind.source.end_offset) == (5, 20)
    assert behind.missing == 5 and behind.target.count == 10
    assert [s["source_offset"] for s in behind.samples["missing"]] == [15, 16, 17, 18, 19]


# ---- the native checksum pass (engine native): the Spark pass's digests, record for record ------


def _digests_by_both_engines(clusters, spark, topics, **kw):
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation.checksum import checksum
    from msk_migrate.validation.native import native_checksum
    from msk_migrate.validation.plan import make_plan

    req = make_request(clusters, topics=topics, **kw)
    plan = make_plan(req, SecretResolver())
    plans = {"source": plan.source, "target": plan.target}
    out = []
    for detail in (False, True):
        by_spark = checksum(spark, plans, detail=detail)
        for workers in (1, 2):  # in this process, and spread over two spawned worker processes
            said: list[str] = []
            by_native = native_checksum(plans, plan.client_confs, req.isolation_level, detail=detail, workers=workers,
                                        say=said.append)
            if workers == 2:  # the workers' shared count reaches every offset of the ranges, aborted ones included
                total = sum(end - start for p in plans.values() for start, end in p.ranges.values() if end > start)
                assert said[-1] == f"checksum: {total:,} of {total:,} offsets read (2 worker processes)", said
            out.append((plan, by_spark, by_native))
    return out


def _assert_same_digests(plan, by_spark, by_native) -> int:
    records = 0
    for side in ("source", "target"):
        assert set(by_spark[side]) == set(by_native[side])
        for tp, s in by_spark[side].items():
            n = by_native[side][tp]
            assert (n.count, n.min_ts, n.max_ts, n.null_keys, n.tombstones, n.sums) == (
                s.count, s.min_ts, s.max_ts, s.null_keys, s.tombstones, s.sums), (side, tp)
            if plan.order_checked(tp):
                assert n.order == s.order, (side, tp)
            records += s.count
    return records


def test_native_checksum_pass_computes_the_spark_digests_on_every_edge_case(clusters, spark, edge):
    """Null keys and values, tombstones, null and repeated headers, empty partitions, partition counts
    that differ, LogAppendTime, aborted transactions: per-field sums included (detail)."""
    until = int(time.time() * 1000) + 600_000
    runs = _digests_by_both_engines(clusters, spark, sorted(edge.values()), until_timestamp_ms=until)
    assert all(_assert_same_digests(*run) > 40 for run in runs)


def test_native_checksum_pass_computes_the_spark_digests_of_windows_and_latest_per_key(clusters, spark, windowed, compacted):
    runs = _digests_by_both_engines(
        clusters, spark, sorted([*windowed.values(), *compacted.values()]), compacted="latest-per-key",
        from_timestamp_ms=BASE_TS + 2, until_timestamp_ms=BASE_TS + 15,
    )
    for plan, by_spark, by_native in runs:
        assert plan.latest_topics == set(compacted.values())
        assert by_native["source"][(windowed["lag"], 0)].count == 13
        assert by_native["source"][(compacted["same"], 0)].count == 1  # k1 (v2); k3 deleted, k2 before the window
        _assert_same_digests(plan, by_spark, by_native)


@pytest.mark.parametrize("engine", ["spark", "native"])
def test_offset_snapshot_and_windows_give_the_same_verdicts_with_either_engine(clusters, spark, windowed, tmp_path, engine):
    from msk_migrate.validation import run_validation
    from msk_migrate.validation.request import load_snapshot

    snap = tmp_path / "snapshot.json"
    snap.write_text(json.dumps({windowed["lag"]: {"0": 15}, windowed["lag2"]: {"0": {"start": 5, "end": 20}}}))
    rep = run_validation(make_request(clusters, offsets_snapshot=load_snapshot(snap), mode="checksum", engine=engine),
                         spark=spark)
    assert rep.run["checksum_engine"] == engine
    (copied,) = rep.topic(windowed["lag"]).partitions
    assert copied.status == "match" and copied.source.count == copied.target.count == 15
    (behind,) = rep.topic(windowed["lag2"]).partitions
    assert behind.status == "mismatch" and (behind.source.count, behind.target.count) == (15, 10)


def test_a_native_checksum_that_finds_no_difference_never_starts_spark(clusters, windowed):
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation.job import _Spark, execute
    from msk_migrate.validation.plan import make_plan

    class NoSpark(_Spark):
        def __call__(self):
            raise AssertionError("Spark was started")

    req = make_request(clusters, topics=[windowed["lag"]], mode="auto", until_timestamp_ms=BASE_TS + 15)
    plan = make_plan(req, SecretResolver())
    outcome = execute(plan, NoSpark(None, print), print, engine="native")
    assert outcome.diffs == {} and outcome.source[(windowed["lag"], 0)].count == 15
    req = make_request(clusters, topics=[windowed["lag"]], mode="auto")  # the target is 5 behind: a diff
    with pytest.raises(AssertionError, match="Spark was started"):
        execute(make_plan(req, SecretResolver()), NoSpark(None, print), print, engine="native")
