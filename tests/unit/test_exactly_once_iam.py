"""Exactly-once needs transactional-id permissions on MSK IAM: exactly the ids Connect uses, no wildcard."""

from __future__ import annotations

import sys
from pathlib import Path

from msk_migrate.config.environment import load_environment

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "infra") not in sys.path:
    sys.path.insert(0, str(REPO / "infra"))


def _prod(exactly_once: bool):
    cfg = load_environment(REPO / "infra" / "environments" / "prod.yaml")
    return cfg.model_copy(update={"migration": cfg.migration.model_copy(update={"exactly_once": exactly_once})})


def test_exactly_once_grants_exactly_the_transactional_ids_of_the_leader_and_every_task():
    from mskinfra.iam_policy import transactional_id_statement, transactional_ids

    cfg = _prod(True)
    group, m = cfg.worker.group_id, cfg.migration
    ids = transactional_ids(cfg)
    assert ids[0] == f"connect-cluster-{group}"  # DistributedConfig.transactionalProducerId
    assert f"{group}-{m.name}-source-{m.tasks_max - 1}" in ids  # Worker.taskTransactionalId: group-connector-task
    assert f"{group}-{m.name}-source-{m.tasks_max}" not in ids
    assert len(ids) == 1 + m.tasks_max + m.tasks_max_checkpoint + 1
    st = transactional_id_statement(cfg, "arn:aws:kafka:eu-west-1:222222222222:topic/msk-prod/abc-1")
    assert st["Action"] == ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"]
    assert all(r.startswith("arn:aws:kafka:eu-west-1:222222222222:transactional-id/msk-prod/abc-1/") for r in st["Resource"])
    assert not any("*" in r for r in st["Resource"])


def test_worker_properties_enable_exactly_once_source_support_only_in_exactly_once_mode():
    from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
    from msk_migrate.connectors.worker_env import AUTO_RESTART_EXTENSION, worker_properties

    tgt = ClusterEndpoint(alias="target", bootstrap_servers="t:9098")
    on = worker_properties(tgt, WorkerSpec(), migration=MigrationSpec(exactly_once=True))
    off = worker_properties(tgt, WorkerSpec(), migration=MigrationSpec())
    assert on["exactly.once.source.support"] == "enabled"
    assert off["exactly.once.source.support"] == "disabled"
    assert AUTO_RESTART_EXTENSION in on["rest.extension.classes"].split(",")
    assert not {k for k in on if k.endswith((".user", ".password"))}, "credentials are never rendered"


def test_entrypoint_writes_the_exactly_once_and_auto_restart_worker_properties(tmp_path):
    import os
    import subprocess

    from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
    from msk_migrate.connectors.worker_env import worker_environment
    from msk_migrate.paths import CONNECT_ENTRYPOINT

    worker = WorkerSpec(auto_restart_max_restarts=3)
    tgt = ClusterEndpoint(alias="target", bootstrap_servers="b-1:9098")
    env = {"PATH": os.environ["PATH"], "CONNECT_DRY_RUN": "1",
           **worker_environment(tgt, worker, config_dir=str(tmp_path), migration=MigrationSpec(exactly_once=True))}
    env.update({name: "s3cret" for name in env["CONNECT_REQUIRED_ENV"].split()})
    env["CONNECT_REST_USERNAME"] = "ops"
    r = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "exactly.once.source.support=enabled" in r.stdout
    assert "io.mskmigrate.connect.autorestart.AutoRestartExtension" in r.stdout
    assert "msk.migrate.auto.restart.max.restarts=3" in r.stdout
    assert f"msk.migrate.auto.restart.rest.credentials.file={tmp_path}/rest-credentials.properties" in r.stdout
    assert "s3cret" not in r.stdout, "no secret value in worker.properties"
    assert (tmp_path / "rest-credentials.properties").read_text() == "ops=s3cret\n"
    missing = {k: v for k, v in env.items() if k != "CONNECT_REST_PASSWORD"}
    bad = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env=missing, capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
