"""Issue 47: a flow's connectors go to the worker its own flow names. On a local environment running a worker of its
own for a second migration (a topology rehearsal's flow worker), `--config F --local` takes the worker of F's
`worker.group_id`, and `connectors apply` refuses, by name and before any network call, a `--connect-url` that is
another group's worker when F names one of the environment's groups. No process runs: the state is recorded only."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli


@pytest.fixture
def two_workers(tmp_path: Path, monkeypatch) -> tuple[Path, int, int]:
    """A recorded local environment: the pair's worker (group mm2-connect) and billing's (group billing-connect)."""
    from msk_migrate.local.connect_worker import local_worker_spec
    from msk_migrate.local.layout import plan_layout
    from msk_migrate.local.procs import ProcRecord
    from msk_migrate.local.shape import default_shape
    from msk_migrate.local.state import FlowWorker, LocalState, StateFile

    base = tmp_path / "env"
    shape = default_shape()
    pair, billing = local_worker_spec(), local_worker_spec(group_id="billing-connect")
    StateFile(base).save(LocalState(shape=shape, workers=[pair], clusters={r: plan_layout(shape.side(r)) for r in ("source", "target")},
                                    procs={"connect": ProcRecord("connect", 1, 1, str(base / "connect.log"))},
                                    flow_workers={"billing": FlowWorker(spec=billing, source="source", target="target")}))
    for var in ("MSK_MIGRATE_CONNECT_URL", "MSK_MIGRATE_TARGET_BOOTSTRAP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(base))
    return base, pair.rest_port, billing.rest_port


def _flow_file(tmp_path: Path, group: str | None) -> Path:
    doc = {"source": {"alias": "peer", "bootstrap_servers": "10.9.9.1:9092"},
           "target": {"alias": "target", "bootstrap_servers": "10.9.9.2:9092"},
           "migration": {"name": "billing", "topics": ["billing-.*"], "replication_factor": 1, "internal_replication_factor": 1},
           "worker": {"replication_factor": 1, **({"group_id": group} if group else {})}}
    path = tmp_path / f"flow-{group or 'default'}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_local_takes_the_worker_of_the_flows_group_else_the_environments(two_workers, tmp_path) -> None:
    from msk_migrate.commands.flow import resolve_flow

    base, pair, billing = two_workers
    named = resolve_flow(None, _flow_file(tmp_path, "billing-connect"), True, None, None, base)
    assert named.connect_url == f"http://127.0.0.1:{billing}"
    unnamed = resolve_flow(None, _flow_file(tmp_path, None), True, None, None, base)
    assert unnamed.connect_url == f"http://127.0.0.1:{pair}"


def test_apply_refuses_another_groups_worker_by_name_before_any_network_call(two_workers, tmp_path, capfd) -> None:
    _, pair, billing = two_workers
    flow = _flow_file(tmp_path, "billing-connect")
    capfd.readouterr()
    code = run_cli(cli, ["connectors", "apply", "--config", str(flow), "--connect-url", f"http://127.0.0.1:{pair}"], "msk-migrate")
    err = capfd.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: --connect-url: http://127.0.0.1:{pair} is the environment's worker (Connect group mm2-connect)")
    assert f"names worker group billing-connect, whose worker is http://127.0.0.1:{billing}" in err


def test_apply_refuses_a_migration_of_the_same_name_into_the_same_target_before_any_network_call(tmp_path, capfd) -> None:
    """Two migrations with one name on one target: one line naming migration.name, exit 2, nothing reached (the
    clusters' addresses are unroutable: reaching them would fail another way)."""
    mine = _flow_file(tmp_path, "billing-connect")
    other = tmp_path / "other.yaml"
    doc = yaml.safe_load(mine.read_text())
    doc["source"] = {"alias": "dc9", "bootstrap_servers": "10.9.9.3:9092"}
    doc["migration"]["topics"] = ["ledger-.*"]
    doc["worker"] = {"group_id": "other-connect", "config_storage_topic": "o-c", "offset_storage_topic": "o-o",
                     "status_storage_topic": "o-s"}
    other.write_text(yaml.safe_dump(doc))
    capfd.readouterr()
    code = run_cli(cli, ["connectors", "apply", "--config", str(mine), "--connect-url", "http://10.9.9.4:8083",
                         "--with-config", str(other)], "msk-migrate")
    err = capfd.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: migration.name: flows "), err
    assert str(other) in err and "both name their connectors billing-*" in err
