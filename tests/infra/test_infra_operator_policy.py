"""The operator policy the stack ships (issue 37): exactly the calls of ``msk-migrate … --in-vpc``, and over
every synthesized IAM document no ``iam:PassRole`` on ``*`` or without ``iam:PassedToService``."""

from __future__ import annotations

import json

import pytest
from infra_helpers import Synth

from mskinfra.util import pass_role_refusal

ENVS = ["dev"]


def _documents(synth: Synth, env: str) -> list[tuple[str, dict]]:
    docs = []
    for kind in ("aws_iam_role_policy", "aws_iam_policy"):
        docs += [(f"{kind}.{k}", json.loads(v["policy"])) for k, v in synth.resources(env, kind).items()]
    return docs


@pytest.mark.parametrize("env", ENVS)
def test_no_synthesized_policy_passes_a_role_on_star_or_without_a_service_condition(synth: Synth, env: str) -> None:
    docs = _documents(synth, env)
    assert len(docs) >= 5, "the stack's IAM documents were found"
    assert [(name, pass_role_refusal(d["Statement"])) for name, d in docs if pass_role_refusal(d["Statement"])] == []


@pytest.mark.parametrize("env", ENVS)
def test_the_operator_policy_is_the_in_vpc_calls_on_this_stack_only_and_is_an_output(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    (policy,) = [v for v in synth.resources(env, "aws_iam_policy").values() if v["name"] == f"{cfg.resource_prefix}-operator"]
    statements = {s["Sid"]: s for s in json.loads(policy["policy"])["Statement"]}
    run = statements["RunTheOperatorTask"]
    assert run["Action"] == "ecs:RunTask"
    assert run["Resource"] == [f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:task-definition/{cfg.resource_prefix}-operator:*"]
    assert run["Condition"]["ArnEquals"] == {"ecs:cluster": f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:cluster/{cfg.resource_prefix}"}
    assert list(run["Condition"]) == ["ArnEquals", "StringEquals"], "and tagged by the caller: test_infra_ledger_bucket.py"
    passing = statements["PassTheOperatorRoles"]
    assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}
    assert len(passing["Resource"]) == 2 and all("*" not in r for r in passing["Resource"])
    actions = sorted({a for s in statements.values() for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])})
    assert actions == ["ecs:DescribeServices", "ecs:DescribeTaskDefinition", "ecs:DescribeTasks", "ecs:ListTasks", "ecs:RunTask",
                       "ecs:StopTask", "ecs:TagResource", "iam:PassRole", "logs:GetLogEvents"]
    # why a worker died (lag / connectors status): the cluster's stopped tasks and the Connect log, nothing wider
    assert statements["ListTheClustersTasks"]["Condition"] == {"ArnEquals": run["Condition"]["ArnEquals"]}
    assert statements["ReadTheConnectLog"]["Resource"] == ["${aws_cloudwatch_log_group.logs_connect_30B1C765.arn}:log-stream:*"]
    assert [s for s in statements.values() if s["Resource"] == "*"] == [statements["ReadTaskDefinitions"]]
    assert "operator_policy_arn" in synth.stacks[env]["output"]


@pytest.mark.parametrize("env", ENVS)
def test_the_operator_task_reads_and_appends_its_migrations_ledger_and_no_other_key(synth: Synth, env: str) -> None:
    """`lag` and the gates read the ledger (msk_migrate.ledger) inside the VPC and the state-changing commands
    append to it: the operator task role may get, put and list under ``ledger/<migration>/`` of the config bucket only."""
    cfg = synth.configs[env]
    (policy,) = [v for v in synth.resources(env, "aws_iam_role_policy").values() if v["name"] == "operator"]
    statements = {s["Sid"]: s for s in json.loads(policy["policy"])["Statement"]}
    prefix = f"ledger/{cfg.migration.name}/"
    rw, listing = statements["ReadAndAppendTheLedger"], statements["ListTheLedger"]
    assert rw["Action"] == ["s3:GetObject", "s3:PutObject"]
    assert len(rw["Resource"]) == 1 and rw["Resource"][0].endswith(f"/{prefix}*")
    assert listing["Condition"] == {"StringLike": {"s3:prefix": [f"{prefix}*"]}}
    assert [s["Sid"] for s in statements.values() if any(str(a).startswith("s3:") for a in
            ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))] == ["ReadAndAppendTheLedger", "ListTheLedger"]


@pytest.mark.parametrize("env", ENVS)
def test_deleting_is_no_standing_right_of_the_operator_task_but_a_cleanup_role_only_it_may_assume(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    assert cfg.target.auth.mode == "iam"
    policies = {v["name"]: v for v in synth.resources(env, "aws_iam_role_policy").values()}
    operator = {s["Sid"]: s for s in json.loads(policies["operator"]["policy"])["Statement"]}
    cleanup = {s["Sid"]: s for s in json.loads(policies["cleanup"]["policy"])["Statement"]}

    def actions(sts: dict) -> set[str]:
        return {a for s in sts.values() for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}

    assert not {a for a in actions(operator) if a.startswith("kafka-cluster:Delete")}
    roles = {v["name"]: k for k, v in synth.resources(env, "aws_iam_role").items()}
    cleanup_role = synth.resources(env, "aws_iam_role")[roles[f"{cfg.resource_prefix}-cleanup"]]
    assert operator["AssumeCleanupRole"] == {"Sid": "AssumeCleanupRole", "Effect": "Allow", "Action": "sts:AssumeRole",
                                             "Resource": ["${aws_iam_role." + roles[f"{cfg.resource_prefix}-cleanup"] + ".arn}"]}
    # Only the operator task role may assume it; it deletes the internal topics and the worker's group, nothing else.
    (trust,) = json.loads(cleanup_role["assume_role_policy"])["Statement"]
    assert trust["Principal"] == {"AWS": "${aws_iam_role." + roles[f"{cfg.resource_prefix}-operator-task"] + ".arn}"}
    assert actions(cleanup) == {"kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:DescribeTopic",
                                "kafka-cluster:DeleteTopic", "kafka-cluster:DescribeGroup", "kafka-cluster:DeleteGroup"}
    assert [r.rsplit("/", 1)[1] for r in cleanup["CleanupTargetMskGroups"]["Resource"]] == [cfg.worker.group_id]
    assert all("*" not in r.rsplit("/", 1)[1] for r in cleanup["CleanupTargetMskTopics"]["Resource"])
    # The operator task names the role: `cleanup --yes` assumes it for the deletion only.
    (td,) = [v for v in synth.resources(env, "aws_ecs_task_definition").values() if v["family"].endswith("-operator")]
    (container,) = json.loads(td["container_definitions"])
    env_vars = {e["name"]: e["value"] for e in container["environment"]}
    assert env_vars["MSK_MIGRATE_CLEANUP_ROLE_ARN"] == "${aws_iam_role." + roles[f"{cfg.resource_prefix}-cleanup"] + ".arn}"
