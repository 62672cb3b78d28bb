"""A created MSK cluster holds the migrated data: destroying the migration stack must not take it, nor
anything it needs to keep serving (KMS key, security group and client rules, broker log group,
configuration, SCRAM association, storage autoscaling). They live in ``target-<env>``; the hand-over
gate (infra/handover.py) proves it with a real ``terraform plan -destroy`` against moto.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from infra_helpers import ALL_ENVS, INFRA, REPO, SHIPPED_DIR, Synth, terraform

HANDOVER = INFRA / "handover.py"
CREATED = [e for e in ALL_ENVS if e in ("dev", "msk-scram")]


def _addresses(doc: dict) -> set[str]:
    return {f"{t}.{n}" for t, rs in doc.get("resource", {}).items() for n in rs}


def _by_type(doc: dict, rtype: str) -> dict[str, dict]:
    return doc.get("resource", {}).get(rtype, {})


@pytest.mark.parametrize("env", CREATED)
def test_the_cluster_and_everything_it_needs_live_in_the_target_stack(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    target, migration = synth.target_stacks[env], synth.stacks[env]
    prefix = cfg.resource_prefix
    (cluster,) = _by_type(target, "aws_msk_cluster").values()
    assert cluster["lifecycle"]["prevent_destroy"] is True
    (key,) = _by_type(target, "aws_kms_key").values()
    assert key["lifecycle"]["prevent_destroy"] is True
    assert "aws_kms_key.kms_key" in cluster["encryption_info"]["encryption_at_rest_kms_key_arn"]
    (sg,) = _by_type(target, "aws_security_group").values()
    assert sg["name"] == f"{prefix}-msk"
    client_ports = {r["from_port"] for r in _by_type(target, "aws_vpc_security_group_ingress_rule").values()}
    expected_ports = {9098, 9096} if cfg.target.create.scram else {9098}
    assert client_ports == (set() if cfg.target.create.client_access.is_empty() else expected_ports)
    (logs,) = _by_type(target, "aws_cloudwatch_log_group").values()
    assert logs["name"] == f"/{prefix}/msk-broker"
    assert len(_by_type(target, "aws_msk_configuration")) == 1
    assert len(_by_type(target, "aws_msk_scram_secret_association")) == (1 if cfg.target.create.scram else 0)
    (scaling,) = _by_type(target, "aws_appautoscaling_target").values()
    assert scaling["scalable_dimension"] == "kafka:broker-storage:VolumeSize"
    assert scaling["max_capacity"] == cfg.target.create.max_ebs_gb
    # ... and none of it in the migration stack, which reads the target through its state's outputs.
    for rtype in ("aws_msk_cluster", "aws_msk_configuration", "aws_msk_scram_secret_association", "aws_kms_key",
                  "aws_appautoscaling_target"):
        assert rtype not in migration.get("resource", {}) or (rtype == "aws_appautoscaling_target" and all(
            "kafka" not in r["service_namespace"] for r in _by_type(migration, rtype).values()
        )), f"{env}: {rtype} in migration-{env}"
    assert f"{prefix}-msk" not in {g["name"] for g in _by_type(migration, "aws_security_group").values()}
    assert f"/{prefix}/msk-broker" not in {g["name"] for g in _by_type(migration, "aws_cloudwatch_log_group").values()}
    assert not _addresses(target) & _addresses(migration)
    (remote,) = migration["data"]["terraform_remote_state"].values()
    wanted = f"target-{env}.tfstate"
    assert remote["config"].get("path", "").endswith(wanted) or remote["config"].get("key", "").endswith("target.tfstate")


@pytest.mark.parametrize("env", CREATED)
def test_migration_stack_forgets_and_never_destroys_what_the_target_keeps(synth: Synth, env: str) -> None:
    removed = synth.stacks[env]["removed"]
    assert {r["from"] for r in removed} == _addresses(synth.target_stacks[env])
    assert all(r["lifecycle"] == {"destroy": False} for r in removed)


def test_an_existing_cluster_environment_has_no_target_stack(synth: Synth) -> None:
    assert "prod" not in synth.target_stacks and "removed" not in synth.stacks["prod"]


def test_handover_of_a_stack_that_did_not_create_its_cluster_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(HANDOVER), "prod", "--outdir", str(tmp_path / "out")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: prod.yaml: target.existing_cluster_arn:"), proc.stderr
    assert "npx cdktf destroy migration-prod" in lines[0]
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------ terraform plan -destroy against moto


def _state(resources: list[tuple[str, str]], lineage: str) -> dict:
    """A Terraform state (v4) holding ``resources`` (ids only: the destroy plan runs with -refresh=false)."""
    return {
        "version": 4,
        "terraform_version": "1.11.4",
        "serial": 1,
        "lineage": lineage,
        "outputs": {},
        "resources": [
            {
                "mode": "managed",
                "type": t,
                "name": n,
                "provider": 'provider["registry.terraform.io/hashicorp/aws"]',
                "instances": [{"schema_version": 0, "attributes": {"id": f"id-{n}"}}],
            }
            for t, n in resources
        ],
    }


def test_handover_destroy_plan_keeps_the_cluster_and_all_it_needs(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict, moto_endpoint: str, monkeypatch
) -> None:
    """The hardest case: an older deployment whose migration state still holds the cluster.

    1. ``terraform plan -destroy`` of migration-dev would delete the cluster, key, security group...
       (``removed`` blocks do not protect destroy plans): the gate refuses, exit 1, naming them.
    2. ``--adopt`` moves them into target-dev's state; the destroy plan of migration-dev then deletes
       only the migration's own resources and none of the kept ones.
    """
    cfg = synth.configs["dev"]
    monkeypatch.setenv("MOTO_ACCOUNT_ID", cfg.account_id)
    out = tmp_path / "out"
    (out / "stacks").mkdir(parents=True)
    for name in ("migration-dev", "target-dev"):
        shutil.copytree(synth.outdir / "stacks" / name, out / "stacks" / name, symlinks=True)
    state_dir = tmp_path / "state"  # where the stacks' relative local-backend paths point
    state_dir.mkdir()
    assert synth.stacks["dev"]["terraform"]["backend"]["local"]["path"] == "../../../state/migration-dev.tfstate"
    target_doc, migration_doc = synth.target_stacks["dev"], synth.stacks["dev"]
    kept = sorted(_addresses(target_doc))
    own = sorted(a for a in _addresses(migration_doc) if a.split(".")[0] in ("aws_ecr_repository", "aws_s3_bucket", "aws_security_group", "aws_ecs_service"))
    legacy = [tuple(a.split(".", 1)) for a in kept + own]
    (state_dir / "migration-dev.tfstate").write_text(json.dumps(_state(legacy, "6c0f5a1e-0000-4000-8000-00000000000a")))

    env = {
        **terraform_env,
        "AWS_ENDPOINT_URL": moto_endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": cfg.region,
        "AWS_EC2_METADATA_DISABLED": "true",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }

    def handover(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(HANDOVER), "dev", "--environments", str(SHIPPED_DIR), "--outdir", str(out),
             "--skip-synth", "--no-refresh", *extra],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
        )

    refused = handover()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "REFUSED" in refused.stderr and "aws_msk_cluster." in refused.stderr and "aws_kms_key." in refused.stderr
    assert "--adopt" in refused.stderr

    adopted = handover("--adopt")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert f"adopted into target-dev: {len(kept)} resources" in adopted.stdout
    assert f"0 of {len(kept)} kept resources touched" in adopted.stdout

    mig = out / "stacks" / "migration-dev"
    plan = json.loads(terraform(terraform_bin, env, mig, "show", "-json", "handover.tfplan").stdout)
    deleted = {rc["address"] for rc in plan["resource_changes"] if "delete" in rc["change"]["actions"]}
    assert deleted == set(own), "the destroy plan deletes exactly the migration's own resources"
    assert not deleted & set(kept)
    target_state = json.loads((state_dir / "target-dev.tfstate").read_text())
    assert {f"{r['type']}.{r['name']}" for r in target_state["resources"]} == set(kept)
