"""The harness's optional third cluster (the peer, `local up --peer-brokers 1`): started beside the pair,
shown by status, reachable as its own endpoint, removed by an `up` that asks for none, stopped by `down`.
Any sequence of up/down with and without a peer leaves no stale state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from msk_migrate.access.admin import quiet
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.procs import start_time
from msk_migrate.local.shape import make_shape

pytestmark = pytest.mark.integration


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", *args], capture_output=True, text=True, timeout=300)


def _cluster_id(bootstrap: str) -> str:
    admin = AdminClient(quiet({"bootstrap.servers": bootstrap}))  # kept alive until the future resolves
    return admin.describe_cluster(request_timeout=30).result().cluster_id


def _gone(pid: int) -> bool:
    """Not running: no such process, or a zombie this test process has not reaped (brokers are its children)."""
    return start_time(pid) is None or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_a_peer_cluster_starts_beside_the_pair_and_an_up_without_it_removes_only_it(tmp_path):
    base = tmp_path / "env"
    env = LocalEnvironment(base, with_connect=False, shape=make_shape(peer_brokers=1))
    try:
        status = env.up()
        assert {"source", "target", "peer"} <= set(status) and status["running"], status.keys()
        r = run("local", "status", "--dir", str(base), "--output", "json")
        assert r.returncode == 0 and {row["name"] for row in json.loads(r.stdout)["rows"]} >= {"source", "target", "peer"}, r.stdout
        peer, source, target = env.peer(), env.source(), env.target()
        assert peer.alias == "peer"
        ids = {_cluster_id(ep.bootstrap_servers) for ep in (source, target, peer)}
        assert len(ids) == 3, "the peer is a cluster of its own"
        pair_pids = {n: env.proc(n).pid for n in ("source-broker", "target-broker")}
        peer_pid = env.proc("peer-broker").pid

        # an `up` that asks for no peer stops it and wipes it; the pair keeps running untouched
        status = LocalEnvironment(base, with_connect=False, shape=make_shape()).up()
        assert "peer" not in status and status["running"]
        assert {n: env.proc(n).pid for n in pair_pids} == pair_pids, "the pair was restarted"
        assert _gone(peer_pid) and not (base / "peer").exists()
        assert env.proc("peer-broker") is None
        with pytest.raises(ValueError, match="no peer cluster"):
            env.peer()
    finally:
        stopped = LocalEnvironment(base).down(wipe=True)
    assert "peer-broker" not in stopped and {"source-broker", "target-broker"} <= set(stopped)
