"""Active/active with identical topic names, loop-free because of copy marks (issue 33, items 3 and 4), on the
session's real clusters and Connect worker, with connectors rendered by the product renderer.

* Both directions of one topic at once are the active-active rehearsal's (rehearsal/topology/active_active.py, in
  make test: the union stable for 60 s, every copy's mark checked by validation); here, the guards:
* a marked pair applied in one `connectors apply`; an unmarked pair refused, also in one apply;
* without marks the same two flows are refused by the renderer: no loop is ever started.
* Forwarding A -> B -> C over three clusters (the harness's peer as A): every record of A reaches C once, marked
  by A and by B.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter

import pytest

from msk_migrate.connect_api.apply import apply
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors, render_reverse_connectors
from msk_migrate.errors import UsageError
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.shape import make_shape
from msk_migrate.topology.marks import marked, origins
from tests.kafka_helpers import consume_all, create_topic, end_offsets, produce, wait_until

from .mm2_flows import flow

pytestmark = pytest.mark.integration

PARTITIONS = 2
POLL_S = 5


def _source_connector(configs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    (name,) = [n for n, c in configs.items() if c["connector.class"].endswith("MirrorSourceConnector")]
    return {name: configs[name]}


@contextlib.contextmanager
def _running(connect: ConnectClient, *configs: dict[str, dict[str, str]]):
    """The connectors applied in one ``connect_api.apply`` call (its loop guard lets a pair of marked connectors of
    opposite directions through, and would refuse the same pair unmarked) and RUNNING with a task; deleted at the
    end whatever happens."""
    merged = {name: c for cfg in configs for name, c in cfg.items()}
    try:
        for name, c in merged.items():
            assert marked(c), f"{name} is not a marked flow"
        apply(connect, merged, wait=True, timeout=120)
        for name in merged:
            connect.wait_state(name, "RUNNING", timeout=120, min_tasks=1)
        yield
    finally:
        for n in merged:
            with contextlib.suppress(Exception):
                connect.delete(n)


def _count(bootstrap: str, topic: str) -> int:
    return sum(end_offsets(bootstrap, topic).values())


def test_both_directions_of_a_topic_without_marks_are_refused_before_any_connector_exists(local_env, connect, unique):
    src, tgt = local_env.source(), local_env.target()
    spec = flow(f"nl{unique}", [f"nl{unique}"])
    before = set(connect.connectors())
    with pytest.raises(UsageError) as err:
        render_reverse_connectors(src, tgt, spec, [f"nl{unique}"])
    assert err.value.field == "migration.mark_copies" and "loop" in err.value.message
    assert set(connect.connectors()) == before


def test_a_marked_pair_of_opposite_flows_passes_the_loop_guard_in_one_apply_and_runs(local_env, connect, unique):
    src, tgt = local_env.source(), local_env.target()
    topic = f"mp{unique}"
    for side in (src, tgt):  # the same name on both clusters
        create_topic(side.bootstrap_servers, topic, partitions=PARTITIONS)
    spec = flow(f"mp{unique}", [topic], mark_copies=True, tasks_max=1, sync_topic_configs=False)
    forward = _source_connector(render_connectors(src, tgt, spec))
    reverse = _source_connector(render_reverse_connectors(src, tgt, spec, [topic]))
    with _running(connect, forward, reverse):  # one apply call: the guard compares the two with each other
        assert {*forward, *reverse} <= set(connect.connectors())


def test_an_unmarked_pair_of_opposite_flows_in_one_apply_is_refused_and_nothing_is_applied(local_env, connect, unique):
    src, tgt = local_env.source(), local_env.target()
    topic = f"np{unique}"
    there = _source_connector(render_connectors(src, tgt, flow(f"np{unique}", [topic])))
    back = _source_connector(render_connectors(tgt, src, flow(f"np{unique}-back", [topic])))
    before = set(connect.connectors())
    with pytest.raises(UsageError) as err:
        apply(connect, {**there, **back}, wait=False)
    assert err.value.field == "topics" and "mark_copies" in err.value.fix and topic in err.value.message
    assert set(connect.connectors()) == before


@pytest.fixture(scope="module")
def peer(local_env):
    """A third cluster beside the session's pair: the harness's peer (one plaintext KRaft broker on 127.0.0.1),
    added by an ``up`` that asks for it (the workers restart pinning it too) and removed at teardown by an ``up``
    that asks for none (the peer stopped and wiped, the workers restarted pinning the pair alone)."""
    pair = local_env.shape()
    with_peer = dataclasses.replace(pair, peer=make_shape(peer_brokers=1, available=1 << 30).peer)
    LocalEnvironment(local_env.base_dir, shape=with_peer).up()
    try:
        yield local_env.peer()
    finally:
        LocalEnvironment(local_env.base_dir, shape=dataclasses.replace(with_peer, peer=None)).up()


def test_forwarding_a_to_b_to_c_brings_every_record_of_a_to_c_once_marked_by_a_and_b(local_env, connect, peer, unique):
    """A = the peer, B = the source, C = the target, one topic name on all three. The hops are chosen so that each
    flow's records are written where the worker may write: A -> B through the reverse flow's producer (to the
    source), B -> C as the forward flow (to the worker's own cluster)."""
    a, b, c = peer, local_env.source(), local_env.target()
    topic = f"fw{unique}"
    for side in (a, b, c):
        create_topic(side.bootstrap_servers, topic, partitions=PARTITIONS)
    ab = flow(f"fwab{unique}", [topic], mark_copies=True, tasks_max=1)
    bc = flow(f"fwbc{unique}", [topic], mark_copies=True, tasks_max=1, sync_topic_configs=False)
    with _running(connect, _source_connector(render_reverse_connectors(b, a, ab, [topic])),
                  _source_connector(render_connectors(b, c, bc))):
        n_a, n_b = 300, 100
        produce(a.bootstrap_servers, topic, ((f"a-{i}".encode(), b"v", None, i % PARTITIONS) for i in range(n_a)))
        produce(b.bootstrap_servers, topic, ((f"b-{i}".encode(), b"v", None, i % PARTITIONS) for i in range(n_b)))
        wait_until(lambda: _count(c.bootstrap_servers, topic) >= n_a + n_b, timeout=120, what=f"C's {topic} holding {n_a + n_b} records")
        time.sleep(2 * POLL_S)  # anything extra (a loop, a duplicate) would arrive within this
        got = consume_all(c.bootstrap_servers, topic, n_a + n_b, timeout=60)
        counts = {ep.alias: _count(ep.bootstrap_servers, topic) for ep in (a, b, c)}
        print(f"forwarding {topic}: {a.alias} -> {b.alias} -> {c.alias}, records per cluster {counts}")
        assert counts == {a.alias: n_a, b.alias: n_a + n_b, c.alias: n_a + n_b}, counts  # nothing flows back to A
        keys = Counter(m.key().decode() for m in got)
        assert len(got) == n_a + n_b and set(keys.values()) == {1}
        paths = Counter(origins(m.headers()) for m in got)
        assert paths == {(a.alias, b.alias): n_a, (b.alias,): n_b}, paths
        assert all(origins(m.headers()) == (a.alias, b.alias) for m in got if m.key().startswith(b"a-"))
