"""Origin counts in both checksum engines (issue 47): in the one-way records comparison with copy marks (a request
with ``marks`` and ``compare: records``, reachable through the request API), the source's records that came from the
target are left out of every digest and counted as ``origin_target`` by the Spark pass exactly as by the native pass,
and the records compared around them keep the native pass's order digest, however Spark splits a partition into tasks.

Written straight to both clusters the way the marked flow ``onprem -> msk`` leaves them (no MM2, as
tests/validation/test_validation_marks.py writes them): the source holds its natives and records copied from msk (the
first, some in the middle, the last); the target holds the natives' copies with the mark appended.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from tests.kafka_helpers import BASE_TS, Rec, create_topic, produce
from validation_helpers import make_request

from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.request import CopyMarks

SRC, TGT = "onprem", "msk"
MARKS = CopyMarks(source_alias=SRC, target_alias=TGT)
N = 30


def _native(p: int, i: int) -> Rec:
    return Rec(p, f"k{p}-{i}".encode(), f"v{i}".encode(), (("trace", f"t{i}".encode()),) if i % 2 else (), BASE_TS + i)


def _marked(r: Rec, alias: str) -> Rec:
    return r.with_(headers=(*r.headers, (mark_header(alias), alias.encode())))


def _back(p: int, i: int) -> Rec:
    """A record the opposite flow msk -> onprem copied onto the source: not expected on the target."""
    return _marked(Rec(p, f"back{p}-{i}".encode(), b"from msk", (), BASE_TS + 100 + i), TGT)


#: where the records from msk stand among a partition's natives (indexes before which one is written)
BACK_AT = {0: (0, 7, 8, 15, 22, N), 1: (N,), 2: ()}


@pytest.fixture(scope="module")
def topics(clusters):
    """``good``: every copy right; ``reordered``: partition 0's copies 10 and 11 swapped on the target; ``only-back``:
    partition 0 of the source holds nothing but records from msk (the target's partition is empty)."""
    out = {}
    for name in ("good", "reordered", "only-back"):
        topic = f"origin-counts-{name}-{time.time_ns()}"
        for bs in clusters.values():
            create_topic(bs, topic, partitions=3)
        for p in range(3):
            if name == "only-back" and p == 0:
                produce(clusters["source"], topic, [_back(p, i) for i in range(4)])
                continue
            src: list[Rec] = []
            for i in range(N + 1):
                src += [_back(p, 100 * i + j) for j in range(BACK_AT[p].count(i))]
                if i < N:
                    src.append(_native(p, i))
            tgt = [_marked(_native(p, i), SRC) for i in range(N)]
            if name == "reordered" and p == 0:
                tgt[10], tgt[11] = tgt[11], tgt[10]
            produce(clusters["source"], topic, src)
            produce(clusters["target"], topic, tgt)
        out[name] = topic
    return out


def _request(clusters, topics, **kw):
    until = int(time.time() * 1000) + 600_000
    return make_request(clusters, topics=topics, until_timestamp_ms=until, marks=MARKS, compare="records", **kw)


@pytest.mark.parametrize("min_partitions", [None, 12])
def test_the_spark_pass_counts_the_records_from_the_target_and_gives_the_native_digests(clusters, topics, spark,
                                                                                        min_partitions):
    """``min_partitions`` 12: Spark reads each partition in several tasks, so records from the target fall at task
    boundaries and inside tasks; the compared records are ranked without them either way."""
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation.checksum import checksum
    from msk_migrate.validation.native import native_checksum
    from msk_migrate.validation.plan import make_plan

    req = _request(clusters, list(topics.values()), mode="checksum", min_partitions=min_partitions)
    plan = make_plan(req, SecretResolver())
    plans = {"source": plan.source, "target": plan.target}
    by_spark = checksum(spark, plans, detail=True)
    by_native = native_checksum(plans, plan.client_confs, req.isolation_level, detail=True, workers=1)
    counted = 0
    for side in plans:
        assert set(by_spark[side]) == set(by_native[side]) and len(by_spark[side]) == 3 * len(topics), side
        for tp, s in by_spark[side].items():
            n = by_native[side][tp]
            assert (s.count, s.sums, s.order, s.min_ts, s.max_ts) == (n.count, n.sums, n.order, n.min_ts, n.max_ts), (side, tp)
            assert s.marks == n.marks and s.marks is not None, (side, tp, s.marks, n.marks)
            counted += s.marks["origin_target"]
    good = topics["good"]
    assert [by_spark["source"][(good, p)].marks["origin_target"] for p in range(3)] == [len(BACK_AT[p]) for p in range(3)]
    assert by_spark["source"][(topics["only-back"], 0)].marks == \
        {"stripped": 0, "missing_or_wrong": 0, "origin_target": 4} and by_spark["source"][(topics["only-back"], 0)].count == 0
    assert counted == 3 * sum(len(v) for v in BACK_AT.values()) + 4 - len(BACK_AT[0])  # only-back's partition 0: 4


def test_both_engines_give_the_same_verdicts_and_differences_with_the_origin_target_hint(clusters, topics, spark):
    from msk_migrate.validation import run_validation

    req = _request(clusters, list(topics.values()), mode="checksum")
    native = run_validation(dataclasses.replace(req, engine="native"))
    by_spark = run_validation(dataclasses.replace(req, engine="spark"), spark=spark)
    assert native.verdict == by_spark.verdict == "mismatch"
    for name, topic in topics.items():
        n_t, s_t = native.topic(topic), by_spark.topic(topic)
        assert [p.status for p in s_t.partitions] == [p.status for p in n_t.partitions], name
        assert [p.differences for p in s_t.partitions] == [p.differences for p in n_t.partitions], name
        assert [p.source.copy_marks for p in s_t.partitions] == [p.source.copy_marks for p in n_t.partitions], name
    good = by_spark.topic(topics["good"])
    assert good.status == "match" and [p.source.copy_marks["origin_target"] for p in good.partitions] == [6, 1, 0]
    assert [p.status for p in by_spark.topic(topics["reordered"]).partitions] == ["mismatch", "match", "match"]
    # a partition whose source holds only records from the target compared nothing: never a match
    assert by_spark.topic(topics["only-back"]).partitions[0].status != "match"
