"""The plain-Terraform path: the synthesized JSON works with terraform alone, no cdktf CLI.

- ``terraform init -backend=false`` + ``terraform validate`` on every synthesized stack, with the AWS
  provider 5.100.0 from the local filesystem mirror, checked against the committed lock file
  (infra/.terraform.lock.hcl, copied next to every stack by the synth): a provider whose checksum the lock does
  not record, or another version, is refused;
- ``terraform plan`` of target-dev (creates its MSK cluster) against a moto server (STS answers the
  account check; nothing else is read at plan time), and of migration-dev reading target-dev's outputs
  from its state (``terraform_remote_state``);
- ``terraform plan`` of prod (existing cluster) against moto plus a stub of MSK's GetBootstrapBrokers:
  the planned connector objects in S3 then carry the real bootstrap string and are byte-for-byte the
  renderer's output.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from infra_helpers import ALL_ENVS, REPO, Synth, terraform

from msk_migrate.connectors import render_connectors

STUB_BOOTSTRAP_IAM = "b-1.payments.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098,b-2.payments.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098"


@pytest.fixture(scope="module")
def initialized(synth: Synth, terraform_bin: str, terraform_env: dict[str, str]) -> dict[str, Path]:
    """``terraform init -backend=false`` once per stack (plugins linked from the mirror)."""
    dirs = {}
    for env in STACKS:
        d = synth.outdir / "stacks" / env
        proc = terraform(terraform_bin, terraform_env, d, "init", "-backend=false", "-input=false", "-no-color")
        assert proc.returncode == 0, f"terraform init failed for {env}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        dirs[env] = d
    return dirs


#: Every synthesized stack: migration-<env> for each environment, target-<env> where it creates its cluster.
STACKS = [f"migration-{e}" for e in ALL_ENVS] + ["target-dev", "target-msk-scram"]


@pytest.mark.parametrize("env", STACKS)
def test_terraform_validates_the_synthesized_stack_without_cdktf(
    initialized: dict[str, Path], terraform_bin: str, terraform_env: dict[str, str], env: str
) -> None:
    proc = terraform(terraform_bin, terraform_env, initialized[env], "validate", "-json", "-no-color")
    result = json.loads(proc.stdout)
    assert result["valid"] is True, json.dumps(result["diagnostics"], indent=1)[:3000]
    assert result["warning_count"] == 0, json.dumps(result["diagnostics"], indent=1)[:3000]


def test_lock_file_pins_the_provider_version(initialized: dict[str, Path]) -> None:
    lock = (initialized["migration-dev"] / ".terraform.lock.hcl").read_text()
    assert 'provider "registry.terraform.io/hashicorp/aws"' in lock and 'version     = "5.100.0"' in lock


# ---------------------------------------------------------------- the committed provider lock file

COMMITTED_LOCK = REPO / "infra" / ".terraform.lock.hcl"


def test_every_synthesized_stack_carries_the_committed_lock_file(synth: Synth) -> None:
    committed = COMMITTED_LOCK.read_bytes()
    for stack in STACKS:
        assert (synth.outdir / "stacks" / stack / ".terraform.lock.hcl").read_bytes() == committed, stack


def test_terraform_init_installs_the_provider_the_lock_file_records_and_leaves_the_lock_as_committed(
    initialized: dict[str, Path],
) -> None:
    committed = COMMITTED_LOCK.read_text()
    for stack, d in initialized.items():
        assert (d / ".terraform.lock.hcl").read_text() == committed, f"{stack}: init changed the lock"
        assert list((d / ".terraform" / "providers" / "registry.terraform.io" / "hashicorp" / "aws").iterdir()) == [
            d / ".terraform" / "providers" / "registry.terraform.io" / "hashicorp" / "aws" / "5.100.0"]


def _init_with_lock(synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict[str, str], edit) -> tuple[int, str]:
    work = tmp_path / "target-dev"
    shutil.copytree(synth.outdir / "stacks" / "target-dev", work, symlinks=True)
    lock = work / ".terraform.lock.hcl"
    lock.write_text(edit(lock.read_text()))
    proc = terraform(terraform_bin, terraform_env, work, "init", "-backend=false", "-input=false", "-no-color")
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split())


def test_terraform_init_refuses_a_provider_whose_checksum_the_lock_does_not_record(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict[str, str]
) -> None:
    def tamper(text: str) -> str:
        changed = re.sub(r'"h1:[A-Za-z0-9+/]{43}="', '"h1:' + "A" * 43 + '="', text)
        assert changed != text
        return changed

    code, out = _init_with_lock(synth, tmp_path, terraform_bin, terraform_env, tamper)
    assert code != 0 and "doesn't match any of the checksums previously recorded in the dependency lock file" in out, out[-2000:]
    assert not (tmp_path / "target-dev" / ".terraform" / "providers").exists() or not any(
        (tmp_path / "target-dev" / ".terraform" / "providers").rglob("terraform-provider-aws_*")), "nothing installed"


def test_terraform_init_keeps_the_locked_version_and_never_upgrades(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict[str, str]
) -> None:
    code, out = _init_with_lock(synth, tmp_path, terraform_bin, terraform_env, lambda t: t.replace("5.100.0", "5.99.0"))
    assert code != 0 and "does not match configured version constraint" in out, out[-2000:]


# ---------------------------------------------------------------- plan against moto


class _MskStub(BaseHTTPRequestHandler):
    """Answers GetBootstrapBrokers (GET /v1/clusters/<arn>/bootstrap-brokers), which moto lacks."""

    def do_GET(self) -> None:
        if self.path.split("?")[0].endswith("/bootstrap-brokers"):
            body = json.dumps({"bootstrapBrokerStringSaslIam": STUB_BOOTSTRAP_IAM}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def aws_endpoints():
    from moto.server import ThreadedMotoServer

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    stub = ThreadingHTTPServer(("127.0.0.1", 0), _MskStub)
    thread = threading.Thread(target=stub.serve_forever, daemon=True)
    thread.start()
    yield {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ENDPOINT_URL_KAFKA": f"http://127.0.0.1:{stub.server_address[1]}"}
    stub.shutdown()
    moto.stop()


def _plan(synth: Synth, env: str, tmp_path: Path, terraform_bin: str, terraform_env: dict, endpoints: dict, monkeypatch,
          stack: str = "migration") -> dict:
    cfg = synth.configs[env]
    monkeypatch.setenv("MOTO_ACCOUNT_ID", cfg.account_id)  # read by the in-process moto server per request
    # Same layout as cdktf.out: the stacks' relative local-backend paths then point at tmp_path/state.
    work = tmp_path / "out" / "stacks" / f"{stack}-{env}"
    shutil.copytree(synth.outdir / "stacks" / f"{stack}-{env}", work, symlinks=True)
    if cfg.backend is not None:
        # The S3 backend would need the real state bucket: plan on local state instead (override file).
        (work / "backend_override.tf.json").write_text(json.dumps({"terraform": {"backend": {"local": {"path": str(tmp_path / "state")}}}}))
    env_vars = {
        **terraform_env,
        **endpoints,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": cfg.region,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    init = terraform(terraform_bin, env_vars, work, "init", "-input=false", "-no-color", "-reconfigure")
    assert init.returncode == 0, init.stderr[-3000:]
    plan = terraform(terraform_bin, env_vars, work, "plan", "-input=false", "-no-color", "-out", "plan.bin")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    assert "0 to change, 0 to destroy" in plan.stdout
    shown = terraform(terraform_bin, env_vars, work, "show", "-json", "plan.bin")
    assert shown.returncode == 0, shown.stderr[-2000:]
    return json.loads(shown.stdout)


def _planned(plan: dict, rtype: str) -> list[dict]:
    return [r for r in plan["planned_values"]["root_module"]["resources"] if r["type"] == rtype]


def test_terraform_plans_a_new_cluster_environment_against_moto(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict, aws_endpoints: dict, monkeypatch
) -> None:
    target = _plan(synth, "dev", tmp_path, terraform_bin, terraform_env, aws_endpoints, monkeypatch, stack="target")
    (cluster,) = _planned(target, "aws_msk_cluster")
    assert cluster["values"]["cluster_name"] == "msk-migrate-dev"
    assert len(_planned(target, "aws_appautoscaling_policy")) == 1
    assert not _planned(target, "aws_ecs_service")
    # migration-dev reads the cluster from target-dev's state (as after `deploy target-dev`).
    outputs = {
        "cluster_arn": "arn:aws:kafka:eu-west-1:111111111111:cluster/msk-migrate-dev/0b1c2d3e-1111-2222-3333-444455556666-2",
        "cluster_name": "msk-migrate-dev",
        "cluster_uuid": "0b1c2d3e-1111-2222-3333-444455556666-2",
        "bootstrap_brokers_sasl_iam": STUB_BOOTSTRAP_IAM,
        "bootstrap_brokers_sasl_scram": "",
        "msk_security_group_id": "sg-0123456789abcdef0",
        "kms_key_arn": "arn:aws:kms:eu-west-1:111111111111:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
        "broker_log_group": "/msk-migrate-dev/msk-broker",
        "broker_endpoints": "b-1.msk-migrate-dev.stub.kafka.eu-west-1.amazonaws.com,b-2.msk-migrate-dev.stub.kafka.eu-west-1.amazonaws.com",
    }
    state = {"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "5d1e0c2a-0000-4000-8000-000000000001",
             "outputs": {k: {"value": v, "type": "string"} for k, v in outputs.items()}, "resources": []}
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "state" / "target-dev.tfstate").write_text(json.dumps(state))
    plan = _plan(synth, "dev", tmp_path, terraform_bin, terraform_env, aws_endpoints, monkeypatch)
    assert not _planned(plan, "aws_msk_cluster") and not _planned(plan, "aws_kms_key")
    assert len(_planned(plan, "aws_ecs_service")) == 3
    # The bootstrap string from target-dev's outputs is in the connector objects at plan time.
    contents = {r["values"]["key"]: r["values"]["content"] for r in _planned(plan, "aws_s3_object")}
    assert f"CONNECT_BOOTSTRAP_SERVERS={STUB_BOOTSTRAP_IAM}\n" in contents["worker/connect-worker.env"]
    repo_keys = {r["values"]["encryption_configuration"][0]["kms_key"] for r in _planned(plan, "aws_ecr_repository")}
    assert repo_keys == {outputs["kms_key_arn"]}, "the migration's repositories use the kept environment key"


def test_terraform_plan_puts_the_real_bootstrap_into_the_connector_objects(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict, aws_endpoints: dict, monkeypatch
) -> None:
    cfg = synth.configs["prod"]
    plan = _plan(synth, "prod", tmp_path, terraform_bin, terraform_env, aws_endpoints, monkeypatch)
    expected = render_connectors(cfg.source.endpoint(), cfg.target.endpoint(STUB_BOOTSTRAP_IAM), cfg.migration)
    contents = {r["values"]["key"]: r["values"]["content"] for r in _planned(plan, "aws_s3_object")}
    for name, config in expected.items():
        assert contents[f"connectors/{name}.json"] == json.dumps(config, indent=2, sort_keys=True) + "\n"
    assert f"CONNECT_BOOTSTRAP_SERVERS={STUB_BOOTSTRAP_IAM}\n" in contents["worker/connect-worker.env"]
    # Terraform resolved the template literals: the worker sees ${env:...} references, not $${env:...}.
    assert "${env:MM2_SOURCE_TLS_PRIVATE_KEY}" in contents["connectors/mm2-prod-source.json"]
    assert "$${" not in "".join(contents.values())
