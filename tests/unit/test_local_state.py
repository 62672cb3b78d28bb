"""The local state cannot go stale: a shape asked for wins over the recorded one, a changed side starts over
(its layout and data gone, the workers forgotten with it), a heap change keeps the data; the state file
round-trips typed, an earlier loose file is still read, and a secured source's endpoint names its secrets
file instead of handing them over through os.environ. No process is started."""

from __future__ import annotations

import json
from pathlib import Path

from msk_migrate.access.secrets import SecretResolver
from msk_migrate.local.connect_worker import local_worker_spec
from msk_migrate.local.endpoints import cluster_endpoint, write_secrets
from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.layout import plan_layout
from msk_migrate.local.reshape import apply_shape
from msk_migrate.local.shape import default_shape, make_shape
from msk_migrate.local.state import LocalState, StateFile

BIG = 1 << 30  # free memory is not what these tests are about


def _recorded(tmp_path: Path, shape) -> LocalState:
    state = LocalState(shape=shape, workers=[local_worker_spec()], prometheus_port=9999)
    for role in ("source", "target"):
        state.clusters[role] = plan_layout(shape.side(role))  # type: ignore[index]
        (tmp_path / role).mkdir()
    return state


def test_the_shape_asked_for_wins_over_the_recorded_one(tmp_path: Path) -> None:
    store = StateFile(tmp_path)
    store.save(_recorded(tmp_path, default_shape()))
    three = make_shape(None, 1, 3, "plaintext", available=BIG)
    env = LocalEnvironment(tmp_path, shape=three)
    assert env.shape().target.replication_factor == 3  # not the recorded environment's 1
    assert LocalEnvironment(tmp_path).shape() == default_shape()  # no shape asked: the recorded one


def test_a_changed_side_starts_over_and_the_workers_follow(tmp_path: Path) -> None:
    state = _recorded(tmp_path, default_shape())
    kept = state.clusters["source"]
    said: list[str] = []
    apply_shape(state, make_shape(None, 1, 3, "plaintext", available=BIG), tmp_path, said.append)
    assert "target" not in state.clusters and state.clusters["source"] == kept
    assert not (tmp_path / "target").exists() and (tmp_path / "source").exists()
    assert state.workers == [] and state.prometheus_port is None
    assert state.side("target").brokers == 3
    assert any("target" in m and "starting the cluster over" in m for m in said), said


def test_a_heap_change_restarts_and_keeps_the_data(tmp_path: Path) -> None:
    state = _recorded(tmp_path, default_shape())
    before = state.model_copy(deep=True)
    apply_shape(state, make_shape(heap="512m", available=BIG), tmp_path, lambda m: None)
    assert state.clusters == before.clusters and state.workers == before.workers
    assert state.side("source").heap == "512m" and (tmp_path / "source").exists()


def test_the_state_file_round_trips_and_an_earlier_file_is_read(tmp_path: Path) -> None:
    store = StateFile(tmp_path)
    state = _recorded(tmp_path, default_shape())
    store.save(state)
    assert store.load() == state
    earlier = json.loads(store.path.read_text())
    earlier.update(ports={"source": 1, "prometheus": 9998}, worker=earlier.pop("workers")[0], versions={}, endpoints={})
    earlier.pop("prometheus_port")
    store.path.write_text(json.dumps(earlier))
    loaded = store.load()
    assert loaded.prometheus_port == 9998 and loaded.workers == state.workers


def test_a_secured_source_endpoint_names_its_secrets_file_under_either_role(tmp_path: Path) -> None:
    shape = make_shape("2.8.2", 1, 1, "scram-tls", available=BIG)
    state = _recorded(tmp_path, shape)
    path = tmp_path / "source" / "mm2-secrets.json"
    write_secrets(path, {"username": "mm2", "password": "pw", "ca": "-----BEGIN CERTIFICATE-----"})
    assert path.stat().st_mode & 0o777 == 0o600
    state.secrets_file = str(path)
    ep = cluster_endpoint(state, "source")
    assert (ep.auth.mode, ep.auth.secrets_from, ep.auth.secrets_file) == ("scram", "file", str(path))
    resolver = SecretResolver(environ={})  # nothing in the environment
    for role in ("source", "target"):  # the reverse flow reads the source as its target
        assert resolver.resolve(role, ep.auth)["password"] == "pw"
    StateFile(tmp_path).save(state)
    assert "pw" not in StateFile(tmp_path).path.read_text()  # the state names the file, never a secret
