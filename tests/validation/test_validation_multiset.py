"""``validate --compare multiset`` on the real local clusters (issue 33, active/active with identical names).

Each side's partitions are written the way two marked flows (``onprem -> msk`` and ``msk -> onprem``) leave them,
without MM2: each side's natives, and the other side's natives as copies (the trailing mark
``msk-migrate.copied-from.<origin>``), in a different interleaving on each side. What is checked: per partition
the same multiset of records, and each origin's records in the same order on both sides; the interleaving of the
origins is not (docs/active-active-proof.md).
"""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
from tests.kafka_helpers import BASE_TS, Rec, create_topic, produce
from validation_helpers import cli_args, make_request

from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.request import CopyMarks

SRC, TGT = "onprem", "msk"
MARKS = CopyMarks(source_alias=SRC, target_alias=TGT)
N = 10


def _native(origin: str, p: int, i: int) -> Rec:
    headers = (("trace", f"{origin}{i}".encode()),) if i % 3 == 0 else ()
    return Rec(p, f"{origin}-{p}-{i}".encode(), f"v{i}".encode(), headers, BASE_TS + 7 * i + (1 if origin == TGT else 0))


def _copy(r: Rec, origin: str) -> Rec:
    return r.with_(headers=(*r.headers, (mark_header(origin), origin.encode())))


def _side(side: str, peer: str, p: int, order: str, copies=None) -> list[Rec]:
    """``order``: "n" = the next native, "c" = the next copy of the peer's natives (``copies``: those copies)."""
    nat = iter(_native(side, p, i) for i in range(N))
    cop = iter(copies if copies is not None else [_copy(_native(peer, p, i), peer) for i in range(N)])
    return [next(nat) if c == "n" else next(cop) for c in order]


CASES = ("same", "swapped", "lost", "bad-mark")


@pytest.fixture(scope="module")
def topics(clusters):
    """One two-partition topic per case; partition 1 is right in every case, partition 0 carries the case."""
    out = {}
    for case in CASES:
        topic = f"multiset-{case}-{time.time_ns()}"
        for bs in clusters.values():
            create_topic(bs, topic, partitions=2)
        for p in (0, 1):
            src = _side(SRC, TGT, p, "nc" * N)  # onprem: alternating
            copies = [_copy(_native(SRC, p, i), SRC) for i in range(N)]
            if p == 0 and case == "swapped":
                copies[3], copies[4] = copies[4], copies[3]  # msk got onprem's 3 and 4 in the other order
            if p == 0 and case == "lost":
                copies[5] = None  # msk never got onprem's 5
            if p == 0 and case == "bad-mark":
                own = _native(SRC, p, 3)  # a record with a header of its own: the mark put before it
                copies[3] = own.with_(headers=((mark_header(SRC), SRC.encode()), *own.headers))
            kept = [c for c in copies if c is not None]
            tgt = _side(TGT, SRC, p, "n" * 4 + "c" * len(kept) + "n" * (N - 4), kept)  # msk: blocks
            produce(clusters["source"], topic, src)
            produce(clusters["target"], topic, tgt)
        out[case] = topic
    return out


def _run(clusters, topic, **kw):
    from msk_migrate.validation import run_validation

    until = int(time.time() * 1000) + 600_000
    return run_validation(make_request(clusters, topics=[topic], until_timestamp_ms=until, engine="native", **kw))


def test_both_sides_holding_every_record_of_both_origins_in_another_interleaving_match(clusters, topics):
    rep = _run(clusters, topics["same"], compare="multiset", marks=MARKS)
    t = rep.topic(topics["same"])
    assert rep.verdict == "match" and t.status == "match" and t.compare == "multiset", [p.differences for p in t.partitions]
    for p in t.partitions:
        assert (p.source.count, p.target.count) == (2 * N, 2 * N)
        assert p.source.copy_marks == {"stripped": N, "natives": N, "missing_or_wrong": 0, "origin_target": 0}
        assert p.target.copy_marks == p.source.copy_marks
    assert rep.to_dict()["run"]["compare"] == "multiset"


def test_the_same_topic_compared_as_one_way_records_is_a_mismatch_that_points_to_multiset(clusters, topics):
    rep = _run(clusters, topics["same"], marks=MARKS, mode="checksum")  # records mode: the target's natives unexpected
    assert rep.verdict == "mismatch"
    p0 = rep.topic(topics["same"]).partitions[0]
    assert p0.source.copy_marks["origin_target"] == N and p0.differences[0].startswith(f"mark missing/wrong: {N} target")
    assert f"origin: target: {N} source record(s) came from the target, so this topic flows both ways (active/active): " \
        "compare it with --compare multiset" in p0.differences
    assert _run(clusters, topics["same"], mode="checksum").verdict == "mismatch"  # no marks at all


def test_an_origins_records_in_another_order_on_one_side_fail_as_an_order_difference_within_that_origin(clusters, topics):
    rep = _run(clusters, topics["swapped"], compare="multiset", marks=MARKS, mode="checksum")
    p0, p1 = rep.topic(topics["swapped"]).partitions
    assert rep.verdict == "mismatch" and p1.status == "match"
    assert p0.status == "mismatch" and p0.source.count == p0.target.count == 2 * N
    assert any("in a different order on the two sides (same multiset" in d for d in p0.differences), p0.differences
    assert f"origin {SRC}: {N} record(s) on the source, {N} on the target" in p0.differences


def test_a_copy_lost_on_one_side_fails_naming_the_origin_short_of_records(clusters, topics):
    rep = _run(clusters, topics["lost"], compare="multiset", marks=MARKS)
    p0 = rep.topic(topics["lost"]).partitions[0]
    assert rep.verdict == "mismatch" and p0.status == "mismatch"
    assert f"origin {SRC}: {N} record(s) on the source, {N - 1} on the target" in p0.differences
    assert f"origin {TGT}: {N} record(s) on the source, {N} on the target" in p0.differences


def test_a_misplaced_mark_fails_the_partition_named(clusters, topics):
    rep = _run(clusters, topics["bad-mark"], compare="multiset", marks=MARKS)
    p0 = rep.topic(topics["bad-mark"]).partitions[0]
    assert p0.status == "mismatch" and p0.target.copy_marks["missing_or_wrong"] == 1
    assert p0.differences[0].startswith("copy mark wrong or misplaced: 1 target record(s)"), p0.differences


def test_the_command_line_runs_the_multiset_comparison_and_refuses_it_without_both_aliases(clusters, topics, msk_migrate_cli):
    until = str(int(time.time() * 1000) + 600_000)
    args = cli_args(clusters, "--topic", topics["same"], "--until-timestamp", until, "--no-report", "--output", "json")
    code, out, err = msk_migrate_cli("validate", *args, "--compare", "multiset", "--copy-marks", f"{SRC},{TGT}")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "match" and doc["run"]["compare"] == "multiset" and doc["topics"][0]["compare"] == "multiset"
    code, _out, err = msk_migrate_cli("validate", *args, "--compare", "multiset", "--copy-marks", SRC)
    assert code == 2 and err.count("\n") == 1 and "--compare multiset" in err and "--copy-marks SOURCE_ALIAS,TARGET_ALIAS" in err
    code, _out, err = msk_migrate_cli("validate", *args, "--compare", "multiset", "--copy-marks", f"{SRC},{TGT}", "--mode", "full")
    assert code == 2 and "--mode full" in err and "Traceback" not in err


def test_the_spark_pass_ranks_each_origin_apart_with_the_native_digests_and_verdicts(clusters, topics, spark):
    """Spark's two-origin checksum (a window rank per origin) gives the native pass's digests and copy-mark counts on
    every case, so either engine gives the same verdict."""
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation import run_validation
    from msk_migrate.validation.checksum import checksum
    from msk_migrate.validation.native import native_checksum
    from msk_migrate.validation.plan import make_plan

    until = int(time.time() * 1000) + 600_000
    every = [topics[case] for case in CASES]  # one Spark job for every case
    req = make_request(clusters, topics=every, until_timestamp_ms=until, marks=MARKS, compare="multiset", mode="checksum")
    plan = make_plan(req, SecretResolver())
    plans = {"source": plan.source, "target": plan.target}
    by_spark = checksum(spark, plans, detail=True)
    by_native = native_checksum(plans, plan.client_confs, req.isolation_level, detail=True, workers=1)
    for side in plans:
        assert set(by_spark[side]) == set(by_native[side]) and len(by_spark[side]) == 2 * len(CASES), side
        for tp, s in by_spark[side].items():
            n = by_native[side][tp]
            assert (s.count, s.sums, s.order) == (n.count, n.sums, n.order), (side, tp)
            assert s.marks == n.marks, (side, tp)
    native = run_validation(dataclasses.replace(req, engine="native"))
    by_spark_run = run_validation(dataclasses.replace(req, engine="spark"), spark=spark)
    for case in CASES:
        assert by_spark_run.topic(topics[case]).status == native.topic(topics[case]).status == \
            ("match" if case == "same" else "mismatch"), case
        assert [p.differences for p in by_spark_run.topic(topics[case]).partitions] == \
            [p.differences for p in native.topic(topics[case]).partitions], case


def test_a_plain_validate_of_a_marked_flow_compares_per_origin_and_matches(clusters, topics, msk_migrate_cli, tmp_path):
    """The flow marks its copies: `validate --config F` compares each origin's records without --compare, says so, and
    refuses an order comparison with the reason."""
    flow = tmp_path / "flow.yaml"
    flow.write_text(f"""source:
  alias: {SRC}
  bootstrap_servers: {clusters["source"]}
  auth: {{mode: plaintext}}
target:
  alias: {TGT}
  bootstrap_servers: {clusters["target"]}
  auth: {{mode: plaintext}}
migration:
  topics: ["{topics["same"]}"]
  groups: ["multiset-.*"]
  mark_copies: true
""")
    until = str(int(time.time() * 1000) + 600_000)
    code, out, err = msk_migrate_cli("validate", "--config", str(flow), "--until-timestamp", until, "--no-report",
                                     "--output", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "match" and doc["run"]["compare"] == "multiset", doc
    assert [t["topic"] for t in doc["topics"]] == [topics["same"]] and doc["topics"][0]["compare"] == "multiset"
    code, _out, err = msk_migrate_cli("validate", "--config", str(flow), "--until-timestamp", until, "--no-report",
                                      "--compare", "records")
    assert code == 2 and err.count("\n") == 1 and "--compare records: copies are marked here" in err, err
