"""The operator task definition the stack synthesizes holds every endpoint, secret and network its commands may
use (msk_migrate.aws.operator_stack), and its role may read how ECS started the task (mskinfra.task_self_check)."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from infra_helpers import Synth

from msk_migrate.aws.operator_stack import (
    CONNECT_SECRET_ARN_ENV,
    CONNECT_URL_ENV,
    ENVIRONMENT_NAME_ENV,
    ENVIRONMENT_YAML_ENV,
    SECURITY_GROUPS_ENV,
    STACK_ARGV_ENV,
    SUBNETS_ENV,
    TARGET_BOOTSTRAP_ENV,
)
from msk_migrate.aws.task_view import ARGV_ENV
from msk_migrate.config.environment import EnvironmentConfig

ENVS = ["dev", "msk-scram"]  # msk-scram: the proof follower on, an existing-secret SCRAM target


def _operator_container(synth: Synth, env: str) -> dict:
    cfg = synth.configs[env]
    (td,) = [v for v in synth.resources(env, "aws_ecs_task_definition").values() if v["family"] == f"{cfg.resource_prefix}-operator"]
    (container,) = json.loads(td["container_definitions"])
    return container


@pytest.mark.parametrize("env", ENVS)
def test_the_operator_task_definition_holds_the_stacks_endpoints_and_network_and_no_request(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    container = _operator_container(synth, env)
    values = {e["name"]: e["value"] for e in container["environment"]}
    assert ARGV_ENV not in values and STACK_ARGV_ENV not in values, "the caller sends the request; the stack sends none"
    assert "command" not in container and "entryPoint" not in container
    # the environment, as the model dumps it, loads back to the same model (Terraform unescapes $${ at apply)
    doc = yaml.safe_load(values[ENVIRONMENT_YAML_ENV].replace("$${", "${"))
    assert EnvironmentConfig.model_validate(doc) == cfg and values[ENVIRONMENT_NAME_ENV] == cfg.name
    assert re.fullmatch(r"\$\{.*bootstrap_brokers\w*\}", values[TARGET_BOOTSTRAP_ENV]), values[TARGET_BOOTSTRAP_ENV]
    assert values[CONNECT_URL_ENV].startswith("https://") and values[CONNECT_SECRET_ARN_ENV].startswith("${aws_secretsmanager_secret.")
    assert json.loads(values[SUBNETS_ENV]) == list(cfg.subnet_ids)
    (sg,) = json.loads(values[SECURITY_GROUPS_ENV])
    connect = [k for k, v in synth.resources(env, "aws_security_group").items() if v["name"].endswith("-connect")]
    assert sg == "${aws_security_group." + connect[0] + ".id}", "the Connect service's group, where --in-vpc places the task"


@pytest.mark.parametrize("env", ENVS)
def test_the_operator_and_follower_roles_may_read_how_ecs_started_their_task_and_nothing_more(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    for name, sid in (("operator", "OperatorTask"), ("proof-follower", "ProofFollower")):
        policies = [json.loads(v["policy"]) for v in synth.resources(env, "aws_iam_role_policy").values() if v["name"] == name]
        if not policies:
            assert name == "proof-follower" and not cfg.proof.follower
            continue
        statements = {s["Sid"]: s for s in policies[0]["Statement"]}
        own = statements[f"{sid}DescribeOwnTask"]
        assert own["Action"] == "ecs:DescribeTasks"
        assert own["Resource"] == [f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:task/{cfg.resource_prefix}/*"]
        assert own["Condition"] == {"ArnEquals": {"ecs:cluster": f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:cluster/{cfg.resource_prefix}"}}
        eni = statements[f"{sid}DescribeOwnInterface"]
        assert eni["Action"] == "ec2:DescribeNetworkInterfaces" and eni["Resource"] == "*"
