"""The generated operator credentials, applied for real by terraform against moto's Secrets Manager:
the secret holds a usable value, and neither the plan nor the state file contains it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import boto3
from infra_helpers import Synth, terraform


def test_generated_passwords_reach_secrets_manager_but_never_the_plan_or_state(
    synth: Synth, tmp_path: Path, terraform_bin: str, terraform_env: dict, moto_endpoint: str, monkeypatch
) -> None:
    cfg = synth.configs["dev"]
    monkeypatch.setenv("MOTO_ACCOUNT_ID", cfg.account_id)
    work = tmp_path / "dev"
    shutil.copytree(synth.stack_dir("dev"), work, symlinks=True)
    state = tmp_path / "state.tfstate"
    (work / "backend_override.tf.json").write_text(json.dumps({"terraform": {"backend": {"local": {"path": str(state)}}}}))
    # migration-dev reads target-dev's outputs (the environment's KMS key among them): stand in for a
    # deployed target-dev with a state holding those outputs, so the secrets plan as they would there.
    stack = json.loads((work / "cdk.tf.json").read_text())
    remote = stack.get("data", {}).get("terraform_remote_state", {})
    if remote:
        used = set(re.findall(r"data\.terraform_remote_state\.\w+\.outputs\.(\w+)", json.dumps(stack)))
        arn = f"arn:aws:kms:{cfg.region}:{cfg.account_id}:key/00000000-0000-4000-8000-000000000000"
        outputs = {o: {"value": arn if "arn" in o or "kms" in o else f"stand-in-{o}", "type": "string"} for o in used}
        target_state = tmp_path / "target-dev.tfstate"
        target_state.write_text(json.dumps({"version": 4, "terraform_version": "1.11.4", "serial": 1,
                                            "lineage": "stand-in", "outputs": outputs, "resources": []}))
        (work / "remote_state_override.tf.json").write_text(json.dumps({"data": {"terraform_remote_state": {
            name: {"backend": "local", "config": {"path": str(target_state)}} for name in remote}}}))
    env = {**terraform_env, "AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": cfg.region, "AWS_EC2_METADATA_DISABLED": "true"}
    versions = sorted(synth.resources("dev", "aws_secretsmanager_secret_version"))
    targets = [f"-target=aws_secretsmanager_secret_version.{v}" for v in versions]
    init = terraform(terraform_bin, env, work, "init", "-input=false", "-no-color", "-reconfigure")
    assert init.returncode == 0, init.stderr[-3000:]
    plan = terraform(terraform_bin, env, work, "plan", "-input=false", "-no-color", "-out", "plan.bin", *targets)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    apply = terraform(terraform_bin, env, work, "apply", "-input=false", "-no-color", "plan.bin", timeout=600)
    assert apply.returncode == 0, apply.stdout[-3000:] + apply.stderr[-3000:]
    shown_plan = terraform(terraform_bin, env, work, "show", "-json", "plan.bin").stdout

    sm = boto3.client("secretsmanager", region_name=cfg.region, endpoint_url=moto_endpoint,
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    names = {f"{cfg.resource_prefix}/connect-rest": False, f"{cfg.resource_prefix}/prometheus-web": True}
    state_text = state.read_text()
    for name, has_bcrypt in names.items():
        value = json.loads(sm.get_secret_value(SecretId=name)["SecretString"])
        assert value["username"] == "mm2-operator"
        password = value["password"]
        assert len(password) == 40 and password.isalnum()
        assert ("password_bcrypt" in value) == has_bcrypt
        if has_bcrypt:
            assert value["password_bcrypt"].startswith("$2a$10$") and len(value["password_bcrypt"]) == 60
        assert password not in state_text, f"{name}: the password is in the Terraform state"
        assert password not in shown_plan, f"{name}: the password is in the plan"
        assert password not in apply.stdout + plan.stdout
