"""Preflight names an old source's release from its API versions: the harness starts a Kafka 2.4.1 source
on ZooKeeper (one broker, small heap, no Connect worker), and the "source broker version" row says 2.4–2.5
(not "DescribeCluster supported, so >= 2.8", which librdkafka's Metadata fallback made it say before).
The session's shared clusters (3.9.2 -> 4.1.2) are placed too, at no extra cost."""

from __future__ import annotations

import os

import pytest

from msk_migrate import versions
from msk_migrate.local.shape import make_shape
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.runbook.preflight import Preflight, PreflightReport, check_source_version
from msk_migrate.runbook.session import session_of

TIERS = ("kafka",)


def _version_row(endpoint) -> tuple[str, str]:
    from msk_migrate.rehearsal.demo import REHEARSAL_MIGRATION

    p = Preflight(session_of(endpoint, None, REHEARSAL_MIGRATION), PreflightReport())
    check_source_version(p)
    (row,) = p.report.checks
    return row.status, row.detail


@pytest.fixture(scope="module")
def old_source():
    from msk_migrate.local.harness import LocalEnvironment

    base = LOCAL_DIR / "test-env" / f"old-source-{os.getpid()}"
    shape = make_shape(versions.kafka_zk_oldest_version(), 1, 1, "plaintext", heap="256m", available=1 << 30)
    env = LocalEnvironment(base, with_connect=False, shape=shape)
    try:
        env.up()
        yield env
    finally:
        env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") != "1")


def test_preflight_names_a_2_4_source_and_keeps_connect_3_9_and_4x_clients(old_source):
    status, detail = _version_row(old_source.source())
    assert status == "ok", detail
    assert detail.startswith("Kafka 2.4–2.5 by its API versions"), detail
    assert "OffsetDelete (key 47): yes" in detail and "AlterClientQuotas (key 49): no" in detail, detail


def test_the_session_clusters_are_placed_in_their_lines(local_env):
    assert _version_row(local_env.source())[1].startswith("Kafka 3.0–3.9 by its API versions")
    assert _version_row(local_env.target())[1].startswith("Kafka >= 4.0 by its API versions")
