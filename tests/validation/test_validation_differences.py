"""Every injected difference is detected and explained in every mode (real Kafka, real Spark).

One topic per kind of difference, identical records on both clusters except the injected change;
one validation run per mode over all of them. Reordering: an adjacent swap, a swap of two records
with the same timestamp, a moved block, and a swap across a re-delivered duplicate; a re-delivered
batch (at-least-once) is duplicates, never a reordering.
"""

from __future__ import annotations

import pytest
from tests.kafka_helpers import BASE_TS, Pair, Rec, create_pairs, records
from validation_helpers import make_request

#: "<mode>" runs the Spark checksum pass; "<mode>-native" the confluent-kafka one (engine native; the
#: full diff of auto mode is Spark's either way): both must find and name every difference.
MODES = ["checksum", "full", "auto", "checksum-native", "auto-native"]
KINDS = ["same", "missing", "unexpected", "duplicate", "value", "header_order", "timestamp",
         "swap", "swap_same_ts", "block", "swap_across_dup", "redelivered_batch"]


def _p(recs, part):
    return [r for r in recs if r.partition == part]


@pytest.fixture(scope="module")
def diff_topics(clusters, request) -> dict[str, str]:
    import uuid

    run = uuid.uuid4().hex[:6]
    base = records(30, partitions=2)  # even records carry two headers
    p0, p1 = _p(base, 0), _p(base, 1)  # p0[i] = base[2i] at source offset i of partition 0
    same_ts = [r.with_(ts=base[4].ts) if i == 6 else r for i, r in enumerate(base)]  # base[4], base[6]: one ms
    sources = {"swap_same_ts": same_ts}
    targets = {
        "same": base,
        "missing": [r for i, r in enumerate(base) if i not in (3, 10)],  # partition 1 and 0
        "unexpected": [*base, Rec(1, b"stray", b"not-in-source", (), BASE_TS + 5)],
        "duplicate": [*base, base[7]],  # MM2 retry: the same record again, partition 1
        "value": [r.with_(value=b"changed") if i == 4 else r for i, r in enumerate(base)],
        "header_order": [r.with_(headers=tuple(reversed(r.headers))) if i == 6 else r for i, r in enumerate(base)],
        "timestamp": [r.with_(ts=r.ts + 1) if i == 8 else r for i, r in enumerate(base)],
        # partition 0, source offsets 2 and 3 swapped
        "swap": [*p0[:2], p0[3], p0[2], *p0[4:], *p1],
        "swap_same_ts": [*_p(same_ts, 0)[:2], _p(same_ts, 0)[3], _p(same_ts, 0)[2], *_p(same_ts, 0)[4:], *p1],
        # partition 0, source offsets 10..12 moved to the front
        "block": p0[10:13] + p0[:10] + p0[13:] + p1,
        # partition 1: offset 3 re-delivered after 4, and 4/5 swapped across that copy: 0 1 2 3 5 3 4 6 ...
        "swap_across_dup": p0 + p1[:4] + [p1[5], p1[3], p1[4]] + p1[6:],
        # partition 1: offsets 2..5 delivered twice (a producer retry of a batch): 0 1 2 3 4 5 2 3 4 5 6 ...
        "redelivered_batch": p0 + p1[:6] + p1[2:6] + p1[6:],
    }
    pairs = {
        kind: Pair(clusters["source"], clusters["target"], f"diff-{kind.replace('_', '-')}-{run}", partitions=2)
        for kind in targets
    }
    create_pairs(list(pairs.values()))
    for kind, tgt in targets.items():
        pairs[kind].write(sources.get(kind, base), tgt)
    return {kind: p.topic for kind, p in pairs.items()}


@pytest.fixture(scope="module")
def reports(clusters, spark, diff_topics):
    cache: dict[str, object] = {}

    def get(mode: str):
        if mode not in cache:
            from msk_migrate.validation import run_validation

            base, _, engine = mode.partition("-")
            req = make_request(clusters, topics=sorted(diff_topics.values()), mode=base, sample_size=5,
                               engine=engine or "spark")
            # full mode explains its differences with Spark jobs (as for large differences),
            # auto mode on the driver (small differences): both paths give the same answers.
            limit = {"full": 0}.get(base, 20_000)
            cache[mode] = run_validation(req, spark=spark, explain_limit=limit)
        return cache[mode]

    return get


def _topic(reports, diff_topics, mode, kind):
    rep = reports(mode)
    return rep, rep.topic(diff_topics[kind])


def _bad_partitions(t):
    return [p for p in t.partitions if p.status != "match"]


@pytest.mark.parametrize("mode", MODES)
def test_identical_topic_matches(reports, diff_topics, mode):
    rep, t = _topic(reports, diff_topics, mode, "same")
    assert t.status == "match"
    assert all(p.status == "match" for p in t.partitions)
    c = t.counts()
    assert c["source_count"] == c["target_count"] == 30
    assert rep.verdict == "mismatch"  # the other topics differ
    assert rep.exit_code == 1


@pytest.mark.parametrize("mode", MODES)
def test_missing_records_are_detected(reports, diff_topics, mode):
    _rep, t = _topic(reports, diff_topics, mode, "missing")
    assert t.status == "mismatch"
    bad = _bad_partitions(t)
    assert sorted(p.partition for p in bad) == [0, 1]
    if mode.startswith("checksum"):
        assert all("1 fewer record" in " ".join(p.differences) for p in bad)
        assert all(p.missing is None for p in bad)  # not computed without a diff
    else:
        assert t.counts()["missing"] == 2 and t.counts()["unexpected"] == 0 and t.counts()["duplicates"] == 0
        keys = sorted(s["key"] for p in bad for s in p.samples["missing"])
        assert keys == ["k10", "k3"]
        sample = next(s for p in bad for s in p.samples["missing"] if s["key"] == "k3")
        assert sample["source_offset"] == 1 and sample["target_offset"] is None
        assert sample["timestamp"] == BASE_TS + 3


@pytest.mark.parametrize("mode", MODES)
def test_unexpected_record_is_detected(reports, diff_topics, mode):
    _rep, t = _topic(reports, diff_topics, mode, "unexpected")
    (bad,) = _bad_partitions(t)
    assert bad.partition == 1
    if mode.startswith("checksum"):
        assert "1 more record" in bad.differences[0]
    else:
        assert (bad.missing, bad.unexpected, bad.duplicates) == (0, 1, 0)
        (s,) = bad.samples["unexpected"]
        assert s["key"] == "stray" and s["target_offset"] == 15 and s["source_offset"] is None


@pytest.mark.parametrize("mode", MODES)
def test_duplicate_record_is_detected(reports, diff_topics, mode):
    _rep, t = _topic(reports, diff_topics, mode, "duplicate")
    (bad,) = _bad_partitions(t)
    assert bad.partition == 1
    if mode.startswith("checksum"):
        assert "1 more record" in bad.differences[0]
    else:
        assert (bad.missing, bad.unexpected, bad.duplicates) == (0, 0, 1)
        (s,) = bad.samples["duplicates"]
        assert s["key"] == "k7"
        assert s["source_offset"] == 3 and s["target_offset"] == 3 and s["target_last_offset"] == 15


@pytest.mark.parametrize(
    "mode,kind,checksum_text,change",
    [
        (m, k, txt, ch)
        for m in MODES
        for k, txt, ch in [
            ("value", "values differ", "value"),
            ("header_order", "header order differs", "header_order"),
            ("timestamp", "timestamps differ", "timestamp"),
        ]
    ],
)
def test_changed_record_is_detected_and_explained(reports, diff_topics, mode, kind, checksum_text, change):
    _rep, t = _topic(reports, diff_topics, mode, kind)
    (bad,) = _bad_partitions(t)
    assert bad.partition == 0
    if mode.startswith("checksum"):
        assert bad.source.count == bad.target.count
        assert any(checksum_text in d for d in bad.differences), bad.differences
    else:
        assert (bad.missing, bad.unexpected, bad.duplicates, bad.changed) == (1, 1, 0, 1)
        assert bad.changes == {change: 1}
        (s,) = bad.samples["changed"]
        assert s["changed"] == [change]
        assert s["source_offset"] == s["target_offset"]
        assert not bad.samples["missing"] and not bad.samples["unexpected"]  # explained, not listed twice
        if kind == "timestamp":
            assert s["target_timestamp"] == s["timestamp"] + 1


def test_auto_mode_diffs_only_partitions_whose_checksums_differ(reports, diff_topics):
    rep = reports("auto")
    methods = {(t.topic, p.partition): p.method for t in rep.topics for p in t.partitions}
    assert methods[(diff_topics["same"], 0)] == "checksum"
    assert methods[(diff_topics["missing"], 0)] == "full"
    assert methods[(diff_topics["unexpected"], 0)] == "checksum"  # only partition 1 differs
    assert methods[(diff_topics["unexpected"], 1)] == "full"


def test_report_json_follows_the_documented_schema(reports):
    import jsonschema

    from msk_migrate.validation.report import schema

    for mode in MODES:
        jsonschema.validate(reports(mode).to_dict(), schema())
        assert reports(mode).run["checksum_engine"] == ("native" if mode.endswith("-native") else "spark")


@pytest.mark.parametrize("mode", ["checksum", "auto"])
def test_native_and_spark_checksum_passes_give_the_same_digests(reports, mode):
    """Not only the same verdicts: the same count, fingerprint and order digest for every partition."""
    spark_rep, native_rep = reports(mode), reports(f"{mode}-native")
    seen = 0
    for t in spark_rep.topics:
        other = native_rep.topic(t.topic)
        for p, q in zip(t.partitions, other.partitions, strict=True):
            for side in ("source", "target"):
                a, b = getattr(p, side), getattr(q, side)
                assert a == b, (t.topic, p.partition, side)  # count, fingerprints, timestamps, offsets, nulls
                seen += a.count if a else 0
            assert (p.status, p.differences) == (q.status, q.differences)
    assert seen > 600  # 12 topics x 30 records x 2 sides (and then some)


@pytest.mark.parametrize(
    "mode,kind,first",
    [
        (m, k, f)
        for m in MODES
        for k, f in [
            # (source offset, its target offset, source predecessor, its target offset) of the first break
            ("swap", (3, 2, 2, 3)),
            ("swap_same_ts", (3, 2, 2, 3)),
            ("block", (10, 0, 9, 12)),
        ]
    ],
)
def test_reordered_records_are_detected_and_located(reports, diff_topics, mode, kind, first):
    _rep, t = _topic(reports, diff_topics, mode, kind)
    assert t.status == "mismatch"
    (bad,) = _bad_partitions(t)
    assert bad.partition == 0 and bad.status == "mismatch"
    assert bad.source.count == bad.target.count and bad.source.fingerprint == bad.target.fingerprint
    assert bad.source.order_fingerprint != bad.target.order_fingerprint
    text = " ".join(bad.differences)
    assert "records reordered" in text, bad.differences
    if mode.startswith("checksum"):
        assert bad.reordered is None and bad.method == "checksum"
    else:
        assert (bad.missing, bad.unexpected, bad.duplicates, bad.changed, bad.reordered) == (0, 0, 0, 0, 1)
        (s,) = bad.samples["reordered"]
        assert (s["source_offset"], s["target_offset"], s["previous_source_offset"], s["previous_target_offset"]) == first
        assert f"source offset {first[0]}" in text


@pytest.mark.parametrize("mode", MODES)
def test_reorder_across_a_duplicate_is_both_a_duplicate_and_a_reordering(reports, diff_topics, mode):
    _rep, t = _topic(reports, diff_topics, mode, "swap_across_dup")
    (bad,) = _bad_partitions(t)
    assert bad.partition == 1 and bad.status == "mismatch"
    if mode.startswith("checksum"):
        assert "1 more record" in bad.differences[0]  # order is judged only where the counts agree
    else:
        assert (bad.missing, bad.unexpected, bad.duplicates, bad.reordered) == (0, 0, 1, 1)
        (s,) = bad.samples["reordered"]
        assert (s["source_offset"], s["target_offset"], s["previous_source_offset"], s["previous_target_offset"]) == (
            5, 4, 4, 6)
        assert "records reordered" in " ".join(bad.differences)


@pytest.mark.parametrize("mode", ["full", "auto"])
def test_a_redelivered_batch_is_duplicates_not_a_reordering(reports, diff_topics, mode):
    _rep, t = _topic(reports, diff_topics, mode, "redelivered_batch")
    (bad,) = _bad_partitions(t)
    assert (bad.missing, bad.unexpected, bad.duplicates, bad.reordered) == (0, 0, 4, 0)
    assert not bad.samples.get("reordered")
    assert "reordered" not in " ".join(bad.differences)


def test_allow_duplicates_accepts_a_redelivered_batch_but_never_a_reordering(clusters, spark, diff_topics):
    from msk_migrate.validation import run_validation

    req = make_request(clusters, topics=[diff_topics["redelivered_batch"], diff_topics["swap_across_dup"],
                                         diff_topics["swap"]], mode="auto", allow_duplicates=True)
    rep = run_validation(req, spark=spark)
    assert rep.topic(diff_topics["redelivered_batch"]).status == "match"
    assert rep.topic(diff_topics["swap_across_dup"]).status == "mismatch"
    assert rep.topic(diff_topics["swap"]).status == "mismatch"
    assert rep.summary()["reordered"] == 2
