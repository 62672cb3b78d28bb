"""The native checksum pass's own logic (no broker): how work is split, what a worker process receives,
and that its per-partition digest is the one Spark's tasks fold to (tests/validation compares both
engines on real clusters)."""

from __future__ import annotations

import pickle

from msk_migrate.validation.digest import ORDER_PRIME, _Chunk, fold_order
from msk_migrate.validation.native import (
    MASK64,
    Task,
    _Acc,
    bins,
    consumer_config,
    fingerprint,
    portable,
    worker_count,
)


def _task(partition: int = 0, start: int = 0, end: int = 10, latest: bool = False, side: str = "source") -> Task:
    return Task(side, "orders", "orders", partition, start, end, -(1 << 63), 1 << 63, False, latest)


def _records(n: int) -> list[tuple[bytes | None, bytes | None, list | None, int]]:
    return [(f"k{i}".encode() if i % 5 else None, None if i % 7 == 3 else f"v{i}".encode(),
             [("h", b"x"), ("h", None)] if i % 3 == 0 else None, 1_700_000_000_000 + i) for i in range(n)]


def _digest(recs, task: Task | None = None):
    acc = _Acc(task or _task(end=len(recs)), detail=False)
    for off, (k, v, h, ts) in enumerate(recs):
        acc.add(k, v, h, ts, off)
    return acc.digest()


def test_order_digest_equals_what_spark_folds_from_its_tasks():
    recs = _records(50)
    fps = [fingerprint(k, v, h, ts) for k, v, h, ts in recs]
    native = _digest(recs)
    # Spark: two tasks over offsets [0, 20) and [20, 50), each summing fp * rank-within-task
    chunks = [_Chunk(first, len(part), sum(part), sum(fp * i for i, fp in enumerate(part)))
              for first, part in ((20, fps[20:]), (0, fps[:20]))]
    assert native.order == fold_order(chunks) == sum(fp * i for i, fp in enumerate(fps)) % ORDER_PRIME
    assert native.sums["fp"] == sum(fps) & MASK64


def test_a_swap_changes_the_order_digest_and_not_the_record_fingerprint():
    recs = _records(30)
    swapped = [*recs[:10], recs[11], recs[10], *recs[12:]]
    a, b = _digest(recs), _digest(swapped)
    assert a.same_records(b) and not a.same_order(b)


def test_a_duplicate_changes_count_and_fingerprint():
    recs = _records(30)
    a, b = _digest(recs), _digest([*recs, recs[4]])
    assert (b.count, a.same_records(b)) == (31, False)


def test_null_key_tombstone_and_empty_values_are_told_apart():
    assert len({fingerprint(None, b"v", None, 1), fingerprint(b"", b"v", None, 1)}) == 2
    assert len({fingerprint(b"k", None, None, 1), fingerprint(b"k", b"", None, 1)}) == 2
    assert len({fingerprint(b"k", b"v", [("h", None)], 1), fingerprint(b"k", b"v", [("h", b"")], 1)}) == 2
    assert fingerprint(b"k", b"v", [("a", b"1"), ("b", b"2")], 1) != fingerprint(b"k", b"v", [("b", b"2"), ("a", b"1")], 1)


def test_latest_per_key_keeps_the_last_live_record_of_each_key():
    recs = [(b"k1", b"v1", None, 1), (b"k2", b"v1", None, 2), (b"k1", b"v2", None, 3), (b"k3", b"v", None, 4),
            (b"k3", None, None, 5), (None, b"no-key", None, 6)]
    d = _digest(recs, _task(end=6, latest=True))
    assert (d.count, d.min_ts, d.max_ts, d.null_keys, d.tombstones) == (2, 2, 3, 0, 0)
    assert d.sums["fp"] == (fingerprint(b"k2", b"v1", None, 2) + fingerprint(b"k1", b"v2", None, 3)) & MASK64


def test_parts_are_balanced_by_record_count():
    tasks = [_task(p, 0, n) for p, n in enumerate([900, 100, 500, 500, 300, 700, 50, 950])]
    parts = bins(tasks, 3)
    loads = sorted(sum(t.end - t.start for t in b) for b in parts)
    assert sum(loads) == 4000 and loads[-1] - loads[0] <= 950
    assert sorted(t.partition for b in parts for t in b) == list(range(8))
    assert worker_count(tasks[:2]) == 1  # a few thousand records: this process
    assert worker_count(tasks, requested=2) == 2


def test_a_worker_process_receives_no_callable_and_rebuilds_the_iam_token_callback(monkeypatch):
    conf = {"bootstrap.servers": "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098",
            "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
            "oauth_cb": lambda _c: ("t", 0), "error_cb": print, "logger": object()}
    sent = portable(conf)
    assert pickle.loads(pickle.dumps(sent)) == sent
    assert sent["_iam_region"] == "eu-west-1" and "oauth_cb" not in sent and "logger" not in sent
    got = consumer_config(sent, "target", "read_committed", verbose=False)
    assert callable(got["oauth_cb"]) and "_iam_region" not in got
    assert (got["isolation.level"], got["log_level"], got["enable.auto.commit"]) == ("read_committed", 0, False)
    assert got["auto.offset.reset"] == "error"  # a range deleted by retention fails the read
    assert "log_level" not in consumer_config(sent, "target", "read_committed", verbose=True)
