"""``msk-migrate <command> --in-vpc``: any operator command as a one-off Fargate task, against moto's ECS and Logs.

Same moto server and the same stand-in for the ECS agent + awslogs driver (``finish``) as the preflight's
``--in-vpc`` tests; here the task is the stack's operator task definition with its own task role.
"""

from __future__ import annotations

import json

import pytest

from msk_migrate.aws import ecs_task, operator_entry, operator_task
from msk_migrate.errors import UsageError

from . import test_preflight_in_vpc as pf
from .test_preflight_in_vpc import CLUSTER, MIGRATION_YAML, REGION, cli, finish

# The same moto server and ECS/Logs fixtures as the preflight's --in-vpc tests.
moto_url = pf.moto_url
aws = pf.aws

LAG_ROWS = {"talked_to": {"config": "flow file", "source": "kafka-1:9093", "target": "b-1:9098", "worker": None},
            "rows": [{"group": "orders", "lag": 3}], "ok": False}


def test_any_command_runs_in_the_operator_task_and_its_json_and_exit_code_come_back(aws, tmp_path) -> None:
    cfg = tmp_path / "flow.yaml"
    cfg.write_text(MIGRATION_YAML)
    # What the task's shell prints: the command's stderr, the marker, then its stdout (one JSON document).
    waiter = finish(aws, 1, ["config: flow file ...", operator_task.STDOUT_MARKER, *json.dumps(LAG_ROWS, indent=2).splitlines()])
    res = cli("lag", "--config", str(cfg), "--output", "json", "--in-vpc", "--ecs-cluster", CLUSTER, "--aws-region", REGION)
    waiter.join(5)
    assert res.returncode == 1, res.stdout + res.stderr
    assert json.loads(res.stdout) == LAG_ROWS, "stdout is exactly the command's JSON document"
    assert "config: flow file ..." in res.stderr and "exit code 1" in res.stderr
    (arn,) = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY, desiredStatus="STOPPED")["taskArns"][-1:]
    task = aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[arn])["tasks"][0]
    assert task["taskDefinitionArn"].split("/")[-1].startswith(f"{CLUSTER}-operator:")
    assert "taskRoleArn" not in task["overrides"], "the operator task runs as its own (operator) role"
    (co,) = task["overrides"]["containerOverrides"]
    assert co["name"] == "operator" and "command" not in co, "the image's entrypoint runs the request (issue 37)"
    sent = {e["name"]: e["value"] for e in co["environment"]}
    assert json.loads(sent[operator_entry.ARGV_ENV]) == ["lag", "--config", operator_task.IN_TASK_FLOW, "--output", "json"]
    assert sent[operator_task.CONFIG_ENV] == MIGRATION_YAML


def test_the_command_line_loses_only_the_in_vpc_options() -> None:
    req = operator_task.split_argv(["cutover", "check", "--env=dev", "--in-vpc", "--ecs-cluster", "c1", "--task-timeout=120",
                                    "--task-definition", "td", "--aws-region", "eu-west-1", "--output", "json"])
    assert req.argv == ["cutover", "check", "--env=dev", "--output", "json"]
    assert (req.ecs_cluster, req.task_definition, req.timeout, req.region) == ("c1", "td", 120.0, "eu-west-1")
    assert operator_task.wants_in_vpc(["lag", "--in-vpc"]) and not operator_task.wants_in_vpc(["preflight", "--in-vpc"])
    assert not operator_task.wants_in_vpc(["lag", "--env", "dev"])


def test_output_is_split_at_the_last_marker() -> None:
    err, out = operator_task.split_output(["a", operator_task.STDOUT_MARKER, "{", "}"])
    assert (err, out) == (["a"], ["{", "}"])


def test_in_vpc_without_the_task_definition_is_one_line_and_starts_nothing(aws, tmp_path) -> None:
    cfg = tmp_path / "flow.yaml"
    cfg.write_text(MIGRATION_YAML)
    before = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY)["taskArns"]
    res = cli("lag", "--config", str(cfg), "--in-vpc", "--ecs-cluster", CLUSTER, "--task-definition", "msk-migrate-dev-nope",
              "--aws-region", REGION)
    assert res.returncode == 2 and "--task-definition" in res.stderr and "msk-migrate-dev-nope" in res.stderr, res.stderr
    assert [ln for ln in res.stderr.splitlines() if ln.startswith("error:")] == [res.stderr.strip().splitlines()[-1]]
    assert "Traceback" not in res.stderr
    assert aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY)["taskArns"] == before, "nothing started"
    res = cli("lag", "--config", str(cfg), "--in-vpc")
    assert res.returncode == 2 and "--ecs-cluster" in res.stderr
    res = cli("lag", "--local", "--in-vpc", "--ecs-cluster", CLUSTER)
    assert res.returncode == 2 and "--local" in res.stderr


def test_the_environment_record_travels_to_the_task_and_a_first_apply_in_the_vpc_comes_back(aws, tmp_path, monkeypatch) -> None:
    from msk_migrate.config.recorded import RECORD_DIR_ENV, load_record
    from msk_migrate.paths import REPO_ROOT

    env_yaml = tmp_path / "dev.yaml"
    env_yaml.write_text((REPO_ROOT / "infra" / "environments" / "dev.yaml").read_text())
    records = tmp_path / "recorded"
    monkeypatch.setenv(RECORD_DIR_ENV, str(records))
    # no record yet: a first `connectors apply --env` runs in the task and writes one there; the task
    # prints it after the record marker and this side keeps it in the checkout
    rec = {"environment": "dev", "target_cluster_id": "MSKclusterId0000000001", "target_bootstrap": "b-1:9098",
           "recorded_at": "2026-11-25T13:00:00+00:00", "migration": "mm2-dev"}
    waiter = finish(aws, 0, ["applying connectors", operator_task.RECORD_MARKER, *json.dumps(rec, indent=2).splitlines(),
                             operator_task.STDOUT_MARKER, "created: mm2-dev-source"])
    res = cli("connectors", "apply", "--env", str(env_yaml), "--in-vpc", "--ecs-cluster", CLUSTER, "--aws-region", REGION)
    waiter.join(5)
    assert res.returncode == 0, res.stdout + res.stderr
    assert load_record("dev")["target_cluster_id"] == "MSKclusterId0000000001"
    assert "commit it" in res.stderr and operator_task.RECORD_MARKER not in res.stderr
    assert res.stdout.strip() == "created: mm2-dev-source"
    (co,) = _last_task(aws)["overrides"]["containerOverrides"]
    assert {"name": RECORD_DIR_ENV, "value": operator_task.IN_TASK_RECORDS} in co["environment"]
    assert operator_task.RECORD_ENV not in {e["name"] for e in co["environment"]}  # nothing to send yet

    # from now on the record goes with every command, so the task checks the same cluster ids as a laptop would
    waiter = finish(aws, 1, ["lagging", operator_task.STDOUT_MARKER, "{}"])
    res = cli("lag", "--env", str(env_yaml), "--in-vpc", "--ecs-cluster", CLUSTER, "--aws-region", REGION)
    waiter.join(5)
    assert res.returncode == 1, res.stdout + res.stderr
    (co,) = _last_task(aws)["overrides"]["containerOverrides"]
    sent = {e["name"]: e["value"] for e in co["environment"]}
    assert json.loads(sent[operator_task.RECORD_ENV])["target_cluster_id"] == "MSKclusterId0000000001"
    assert sent[operator_entry.RECORD_NAME_ENV] == "dev" and "command" not in co


def _last_task(aws) -> dict:
    (arn,) = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY, desiredStatus="STOPPED")["taskArns"][-1:]
    return aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[arn])["tasks"][0]


def test_the_entrypoint_writes_the_record_runs_the_command_and_prints_what_it_recorded(tmp_path, capsys, monkeypatch) -> None:
    # the operator image's entrypoint, run here with a stand-in msk-migrate that records as a first apply does
    import os

    records = tmp_path / "in-task-records"
    fake = tmp_path / "bin" / "msk-migrate"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "stderr line" >&2\nprintf \'{"environment": "dev", "target_cluster_id": "X1"}\' '
                    '> "$MSK_MIGRATE_RECORD_DIR/dev.json"\necho "stdout line"\nexit 3\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    env = {**os.environ, "MSK_MIGRATE_RECORD_DIR": str(records), operator_entry.RECORD_NAME_ENV: "dev",
           operator_entry.ARGV_ENV: json.dumps(["connectors", "apply", "--env", "/dev/null"])}
    words = operator_entry.request([], env)
    assert operator_entry.run(words, env, records=str(records), flow=str(tmp_path / "flow.yaml")) == 3
    err, out = operator_task.split_output(capsys.readouterr().out.splitlines())
    err, rec = operator_task.split_record(err)
    assert (err, out, rec) == (["stderr line"], ["stdout line"], {"environment": "dev", "target_cluster_id": "X1"})


@pytest.mark.parametrize(("argv", "argv_env", "named"), [
    (["sh", "-c", "env"], '["lag"]', "takes no command"),                     # a containerOverrides.command
    ([], '["local", "up"]', "'local' is not a runbook command"),               # a laptop command
    ([], '["sh"]', "'sh' is not a runbook command"),
    ([], '["lag", "--in-vpc"]', "--in-vpc inside the operator task"),
    ([], "lag --env dev", "is not JSON"),
    ([], None, "is not set"),
])
def test_the_entrypoint_refuses_a_command_override_or_a_command_outside_the_list(argv, argv_env, named, capsys, monkeypatch) -> None:
    if argv_env is None:
        monkeypatch.delenv(operator_entry.ARGV_ENV, raising=False)
    else:
        monkeypatch.setenv(operator_entry.ARGV_ENV, argv_env)
    monkeypatch.setenv("PATH", "/nonexistent")  # nothing could run even if the entrypoint tried
    assert operator_entry.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and named in err[0], err


def test_in_vpc_refuses_a_laptop_command_before_anything_starts() -> None:
    req = operator_task.split_argv(["local", "up", "--in-vpc", "--ecs-cluster", "c1"])
    with pytest.raises(UsageError, match="local is not a runbook command"):
        operator_task.prepare(req, environ={})
