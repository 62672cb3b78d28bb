"""The validator's copy-mark account on the real local clusters (issue 33): a flow with ``mark_copies`` writes each
source record to the target with exactly one trailing header ``msk-migrate.copied-from.<source alias>``; the
comparison removes exactly that and nothing else, in both engines.

Written straight to both clusters the way the marked flow ``onprem -> msk`` leaves them (no MM2): the source holds
its natives and two records that came from the target (they carry ``copied-from.msk``); the target holds the
natives' copies, each with the mark appended.
"""

from __future__ import annotations

import time

import pytest
from tests.kafka_helpers import BASE_TS, Rec, create_topic, produce
from validation_helpers import make_request

from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.request import CopyMarks

SRC, TGT = "onprem", "msk"
MARKS = CopyMarks(source_alias=SRC, target_alias=TGT)
N = 12


def _natives(p: int) -> list[Rec]:
    return [Rec(p, f"k{p}-{i}".encode(), f"v{i}".encode(), (("trace", f"t{i}".encode()),) if i % 2 else (), BASE_TS + i)
            for i in range(N)]


def _marked(r: Rec, alias: str = SRC, value: bytes | None = None) -> Rec:
    return r.with_(headers=(*r.headers, (mark_header(alias), alias.encode() if value is None else value)))


def _from_target(p: int) -> list[Rec]:
    """Records the opposite flow msk -> onprem copied onto the source: not expected on the target."""
    return [_marked(Rec(p, f"t{p}-{i}".encode(), b"from msk", (), BASE_TS + 100 + i), TGT) for i in range(2)]


@pytest.fixture(scope="module")
def marked(clusters):
    """Topics: ``good`` (every copy marked right), ``bad`` (partition 0: one copy unmarked, one with another value,
    one with the mark before its own header; partition 1 right)."""
    out = {}
    for name in ("good", "bad"):
        topic = f"marks-{name}-{time.time_ns()}"
        for bs in clusters.values():
            create_topic(bs, topic, partitions=2)
        for p in (0, 1):
            nat = _natives(p)
            src = nat[:6] + _from_target(p) + nat[6:]  # the opposite flow's records interleave with the natives
            tgt = [_marked(r) for r in nat]
            if name == "bad" and p == 0:
                tgt[1] = nat[1]  # mark missing
                tgt[2] = _marked(nat[2], value=b"someone-else")  # mark with another value
                tgt[3] = nat[3].with_(headers=((mark_header(SRC), SRC.encode()), *nat[3].headers))  # mark not last
            produce(clusters["source"], topic, src)
            produce(clusters["target"], topic, tgt)
        out[name] = topic
    return out


def _run(clusters, topic, spark=None, **kw):
    from msk_migrate.validation import run_validation

    until = int(time.time() * 1000) + 600_000
    return run_validation(make_request(clusters, topics=[topic], until_timestamp_ms=until, **kw), spark=spark)


def test_copies_match_their_source_records_once_the_trailing_mark_is_removed(clusters, marked):
    rep = _run(clusters, marked["good"], mode="checksum", engine="native", marks=MARKS)
    t = rep.topic(marked["good"])
    assert rep.verdict == "match" and t.status == "match", [p.differences for p in t.partitions]
    for p in t.partitions:
        assert (p.source.count, p.target.count) == (N, N)
        assert p.target.copy_marks == {"stripped": N, "missing_or_wrong": 0, "origin_target": 0}
        assert p.source.copy_marks == {"stripped": 0, "missing_or_wrong": 0, "origin_target": 2}
    doc = rep.to_dict()
    assert doc["run"]["copy_marks"] == {"source_alias": SRC, "target_alias": TGT}
    assert doc["topics"][0]["partitions"][0]["target"]["copy_marks"]["stripped"] == N


def test_without_the_mark_account_the_same_topic_is_a_mismatch(clusters, marked):
    rep = _run(clusters, marked["good"], mode="checksum", engine="native")
    assert rep.verdict == "mismatch"
    p0 = rep.topic(marked["good"]).partitions[0]
    assert (p0.source.count, p0.target.count) == (N + 2, N) and p0.target.copy_marks is None


def test_a_copy_without_its_mark_or_with_a_wrong_or_misplaced_one_is_named_and_fails(clusters, marked, spark):
    rep = _run(clusters, marked["bad"], spark=spark, mode="auto", engine="native", marks=MARKS)
    t = rep.topic(marked["bad"])
    assert rep.verdict == "mismatch"
    p0, p1 = t.partitions
    assert p1.status == "match"
    assert p0.status == "mismatch" and p0.target.copy_marks == {"stripped": N - 3, "missing_or_wrong": 3, "origin_target": 0}
    assert p0.differences[0].startswith("mark missing/wrong: 3 target record(s)"), p0.differences
    # the full diff (Spark) removes the good marks only: the wrong and the misplaced mark make two records changed
    # (headers); the unmarked copy is byte for byte its source record, so only the mark count names it
    assert (p0.missing, p0.unexpected, p0.changed, p0.duplicates) == (2, 2, 2, 0), p0.to_dict()
    assert p0.changes == {"headers": 2}


def test_the_spark_pass_removes_and_counts_the_marks_with_the_native_digests(clusters, marked, spark):
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation.checksum import checksum
    from msk_migrate.validation.native import native_checksum
    from msk_migrate.validation.plan import make_plan

    for name in ("good", "bad"):
        req = make_request(clusters, topics=[marked[name]], until_timestamp_ms=int(time.time() * 1000) + 600_000, marks=MARKS)
        plan = make_plan(req, SecretResolver())
        plans = {"source": plan.source, "target": plan.target}
        by_spark = checksum(spark, plans, detail=True)
        by_native = native_checksum(plans, plan.client_confs, req.isolation_level, detail=True, workers=1)
        for side in plans:
            for tp, s in by_spark[side].items():
                n = by_native[side][tp]
                assert (n.count, n.sums, n.order) == (s.count, s.sums, s.order), (name, side, tp)
                assert s.marks == n.marks, (name, side, tp)  # what it removed, could not remove, and left out
    rep = _run(clusters, marked["good"], spark=spark, mode="full", engine="spark", marks=MARKS)
    assert rep.verdict == "match", [p.differences for p in rep.topic(marked["good"]).partitions]
    rep = _run(clusters, marked["bad"], spark=spark, mode="checksum", engine="spark", marks=MARKS)
    p0 = rep.topic(marked["bad"]).partitions[0]
    assert p0.status == "mismatch" and p0.differences[0].startswith("mark missing/wrong: 3 target record(s)"), p0.differences
