"""The rehearsal on the shape users bring: a Kafka 2.8.2 source on ZooKeeper 3.5.9 with three brokers, SCRAM-SHA-512
over TLS and the ACL authorizer (MirrorMaker 2's user holds only its read-only ACLs until the rollback grants the
reverse flow's), into a three-broker Kafka 4.1 target (replication factor 3, min.insync.replicas 2, like MSK).

All 14 steps, reverse replication writing into the 2.8 source and a group rolled back onto it, ending in a
reverse-validation match. The single-broker 3.9 -> 4.1 rehearsal (test_rehearsal.py) stays the fast default.
Preflight, run afterwards as the MM2 user with one ACL taken away, names the missing ACL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from msk_migrate import versions
from msk_migrate.kafka.mm2_acls import AclNeed
from msk_migrate.local.memory import PeakSampler
from msk_migrate.local.scram import MM2_USER
from msk_migrate.local.shape import make_shape
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal import rehearse
from msk_migrate.rehearsal.demo import REHEARSAL_MIGRATION

from .test_producer_cutover import (
    assert_forgotten_producer_fenced_and_named,
    fence_as_mm2_is_refused_naming_alter,
    forgotten_producer_is_fenced,
    unfence_removes_exactly_the_fence,
)
from .test_rehearsal import assert_every_step_to_a_match_both_ways_with_exact_cutovers

TIERS = ("kafka", "spark")
#: The module's rehearsal runs in its fixture, which the first test's timeout covers: the whole walk with both waves
#: (ten minutes and more on a machine shared by parallel jobs), not one test's 15 minutes of pyproject.toml.
pytestmark = pytest.mark.timeout(2400)
BROKERS = 3


@pytest.fixture(scope="module")
def zk_rehearsal():
    from msk_migrate.local.harness import LocalEnvironment

    base = LOCAL_DIR / "test-env" / f"rehearsal-zk-{os.getpid()}" / "env"
    os.environ.pop("MSK_MIGRATE_WORKER", None)
    shape = make_shape(versions.kafka_zk_version(), BROKERS, BROKERS, "scram-tls")
    try:
        with PeakSampler() as mem:
            res = rehearse(with_monitoring=False, validate=True, base_dir=base, worker="local", shape=shape)
        print(f"\nrehearsal on {shape.describe('source')} -> {shape.describe('target')}: "
              f"{res.seconds.get('total')} s, memory peak {mem.peak / (1 << 30):.2f} GiB (sum of RSS of the processes it started and this one, sampled)")
        for s in res.steps:
            print(f"| {s.name} | {'ok' if s.ok else 'FAILED'} | {s.seconds} | {s.result} |")
        yield SimpleNamespace(res=res, env=LocalEnvironment(base), peak=mem.peak, base=base)
    finally:
        keep = os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") == "1"  # logs kept for a look after a failure
        LocalEnvironment(base).down(wipe=not keep)
        if not keep:
            shutil.rmtree(base.parent, ignore_errors=True)


def test_rehearsal_on_a_zookeeper_scram_source_walks_every_step_to_a_match_both_ways(zk_rehearsal):
    # both cutovers exact: onto the 4.1 target and back onto the 2.8 source
    assert_every_step_to_a_match_both_ways_with_exact_cutovers(zk_rehearsal.res)
    assert zk_rehearsal.peak > 0


def test_environment_records_the_shape_and_every_broker_of_both_clusters(zk_rehearsal):
    st = zk_rehearsal.env.status()
    assert (st["source"]["kafka_version"], st["source"]["mode"], st["source"]["auth"]) == (
        versions.kafka_zk_version(), "zookeeper", "scram")
    assert (st["target"]["brokers"], st["target"]["replication_factor"], st["target"]["min_insync_replicas"]) == (BROKERS, 3, 2)
    names = [b["name"] for b in st["brokers"] if b["running"]]
    assert names == ["source-zookeeper", "source-broker", "source-broker-2", "source-broker-3",
                     "target-broker", "target-broker-2", "target-broker-3"]
    ports = [p for b in st["brokers"] for p in b["ports"].values()]
    assert len(ports) == len(set(ports))
    # the source's only listeners are SCRAM over TLS (clients) and mTLS (brokers, the harness admin)
    assert {lis for b in st["brokers"] if b["role"] == "source" and b["id"] for lis in b["ports"]} == {"SASL_SSL", "INTERNAL"}


def _preflight_acl_row(env) -> tuple[str, str]:
    from msk_migrate.runbook.preflight import run_preflight
    from msk_migrate.runbook.session import session_of

    rep = run_preflight(session_of(env.source(), env.target(), REHEARSAL_MIGRATION, env.worker_spec()))
    (row,) = [c for c in rep.checks if c.name == "source ACLs for MirrorMaker 2"]
    return row.status, row.detail


def _preflight_cli(base) -> subprocess.CompletedProcess:
    """``msk-migrate preflight --local`` against the rehearsal's environment, as an operator runs it."""
    env = {**os.environ, "MSK_MIGRATE_LOCAL_ENV_DIR": str(base)}
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", "preflight", "--local"], capture_output=True,
                          text=True, timeout=300, env=env)


def test_preflight_names_the_acl_the_mm2_user_lacks_on_the_source(zk_rehearsal):
    from confluent_kafka.admin import AdminClient

    from msk_migrate.local.acl import revoke

    env = zk_rehearsal.env
    assert _preflight_acl_row(env)[0] == "ok"
    read = AclNeed("topic", "*", "READ", "")
    describe_acls = AclNeed("cluster", "kafka-cluster", "DESCRIBE", "")
    admin = AdminClient(env.admin_config("source"))
    revoke(admin, f"User:{MM2_USER}", [read])
    try:
        # the MM2 user may not describe ACLs: preflight tests the permission by reading as the user
        status, detail = _preflight_acl_row(env)
        assert status == "fail" and "Topic:shop." in detail and " READ" in detail and "tested as User:mm2" in detail, detail
        # the command: its table, then one line naming the ACL and the grant, exit 2
        cli = _preflight_cli(zk_rehearsal.base)
        assert cli.returncode == 2, (cli.returncode, cli.stdout[-2000:], cli.stderr[-2000:])
        (line,) = [ln for ln in cli.stderr.splitlines() if ln.strip()]
        assert "source ACLs for MirrorMaker 2" in line and " READ" in line and "fix: grant User:mm2 ALLOW" in line, line
        assert "Traceback" not in cli.stderr
        # once it may, DescribeAcls names the wildcard grant that is missing
        env.grant_acls("source", f"User:{MM2_USER}", [describe_acls])
        status, detail = _preflight_acl_row(env)
        assert status == "fail" and "Topic:* READ" in detail and "DescribeAcls" in detail, detail
    finally:
        env.grant_acls("source", f"User:{MM2_USER}", [read])
        revoke(admin, f"User:{MM2_USER}", [describe_acls])
    assert _preflight_acl_row(env)[0] == "ok"


def test_a_forgotten_producer_is_fenced_and_named_on_a_zookeeper_source(zk_rehearsal):
    assert_forgotten_producer_fenced_and_named(zk_rehearsal.res)
    forgotten_producer_is_fenced(zk_rehearsal.env, "shop.events")


def test_fencing_without_the_alter_right_is_one_line_and_unfence_removes_exactly_the_fence(zk_rehearsal):
    fence_as_mm2_is_refused_naming_alter(zk_rehearsal.base, zk_rehearsal.env)
    unfence_removes_exactly_the_fence(zk_rehearsal.env, "shop.customers")
