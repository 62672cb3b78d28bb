"""The follower's Prometheus exposition: series per topic/partition, served on 127.0.0.1 (no server
beyond the follower's own endpoint)."""

from __future__ import annotations

import urllib.request

from msk_migrate.validation.follow.compare import PartitionCompare, record
from msk_migrate.validation.follow.follower import Follower
from msk_migrate.validation.follow.mark import Mark, PartitionMark, TopicMark
from msk_migrate.validation.follow.metrics import Metrics, PartitionSample, exposition


def test_the_exposition_has_every_proof_series_per_partition_with_escaped_labels():
    text = exposition([PartitionSample('we"ird', 3, 12, 4.5, 100, True, False)], 1700000000.0)
    assert 'msk_migrate_proof_lag_records{topic="we\\"ird",partition="3"} 12' in text
    assert 'msk_migrate_proof_lag_seconds{topic="we\\"ird",partition="3"} 4.5' in text
    assert 'msk_migrate_proof_records_proven_total{topic="we\\"ird",partition="3"} 100' in text
    assert 'msk_migrate_proof_mismatch{topic="we\\"ird",partition="3"} 1' in text
    assert 'msk_migrate_proof_truncated{topic="we\\"ird",partition="3"} 0' in text
    assert "# TYPE msk_migrate_proof_records_proven_total counter" in text
    assert "msk_migrate_proof_last_pass_timestamp_seconds 1700000000.000" in text


def test_the_endpoint_serves_the_latest_snapshot_on_loopback_only():
    m = Metrics()
    port = m.serve(0)
    try:
        m.publish([PartitionSample("t", 0, 0, 0.0, 7, False, False)], None)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            body = r.read().decode()
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert 'msk_migrate_proof_records_proven_total{topic="t",partition="0"} 7' in body
        assert m._server is not None and m._server.server_address[0] == "127.0.0.1"
    finally:
        m.close()


def test_proof_lag_is_the_offsets_past_the_mark_and_the_age_of_the_oldest_unproven_record():
    pm = PartitionMark(10, 10, compared=10, proven_ts_ms=1_000)
    mark = Mark("m", "S", "T", {"t": TopicMark("t", 1, 1, partitions={0: pm})}, updated_ms=1_000)
    f = Follower.__new__(Follower)
    f.mark, f.ends = mark, {"source": {("t", 0): 15}, "target": {}}
    c = PartitionCompare(pm)
    c.src.append(record(10, b"k", b"v", None, 4_000, False))
    f.cmp = {("t", 0): c}
    (s,) = f.samples(now_ms=10_000)
    assert (s.lag_records, s.lag_seconds, s.proven) == (5, 6.0, 10)
    f.ends["source"][("t", 0)] = 10
    assert f.samples(now_ms=10_000)[0].lag_seconds == 0.0
