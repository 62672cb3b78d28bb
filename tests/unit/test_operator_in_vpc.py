"""``msk-migrate <command> --in-vpc``: any operator command as a one-off Fargate task, against moto's ECS and Logs.

Same moto server and the same stand-in for the ECS agent + awslogs driver (``finish``) as the preflight's
``--in-vpc`` tests; here the task is the stack's operator task definition with its own task role.
"""

from __future__ import annotations

import json

import pytest

from msk_migrate.aws import ecs_task, operator_entry, operator_task
from msk_migrate.aws.task_view import ARGV_ENV
from msk_migrate.commands.root import grammar
from msk_migrate.errors import UsageError

from . import test_preflight_in_vpc as pf
from .test_preflight_in_vpc import CLUSTER, REGION, cli, finish

# The same moto server and ECS/Logs fixtures as the preflight's --in-vpc tests.
moto_url = pf.moto_url
aws = pf.aws

LAG_ROWS = {"talked_to": {"config": "flow file", "source": "kafka-1:9093", "target": "b-1:9098", "worker": None},
            "rows": [{"group": "orders", "lag": 3}], "ok": False}


def test_any_command_runs_in_the_operator_task_and_its_json_and_exit_code_come_back(aws, tmp_path) -> None:
    # What the task's shell prints: the command's stderr, the marker, then its stdout (one JSON document).
    waiter = finish(aws, 1, ["config: flow file ...", operator_task.STDOUT_MARKER, *json.dumps(LAG_ROWS, indent=2).splitlines()])
    res = cli("lag", "--output", "json", "--in-vpc", "--ecs-cluster", CLUSTER, "--aws-region", REGION)
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
    assert sent == {ARGV_ENV: json.dumps(["lag", "--output", "json"])}, "the request alone: clusters and secrets are the stack's"
    tagged = aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[arn], include=["TAGS"])["tasks"][0].get("tags", [])
    assert {t["key"]: t["value"] for t in tagged}.get(ecs_task.STARTED_BY_TAG), "tagged with the caller"


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
    before = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY)["taskArns"]
    res = cli("lag", "--in-vpc", "--ecs-cluster", CLUSTER, "--task-definition", "msk-migrate-dev-nope",
              "--aws-region", REGION)
    assert res.returncode == 2 and "--task-definition" in res.stderr and "msk-migrate-dev-nope" in res.stderr, res.stderr
    assert [ln for ln in res.stderr.splitlines() if ln.startswith("error:")] == [res.stderr.strip().splitlines()[-1]]
    assert "Traceback" not in res.stderr
    assert aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY)["taskArns"] == before, "nothing started"
    res = cli("lag", "--in-vpc")
    assert res.returncode == 2 and "--ecs-cluster" in res.stderr
    res = cli("lag", "--local", "--in-vpc", "--ecs-cluster", CLUSTER)
    assert res.returncode == 2 and "--local" in res.stderr


def test_a_first_apply_in_the_vpc_brings_its_record_back_and_no_record_or_flow_is_ever_sent(aws, tmp_path, monkeypatch) -> None:
    from msk_migrate.config.recorded import RECORD_DIR_ENV, load_record
    from msk_migrate.paths import REPO_ROOT

    env_yaml = tmp_path / "dev.yaml"
    env_yaml.write_text((REPO_ROOT / "infra" / "environments" / "dev.yaml").read_text())
    records = tmp_path / "recorded"
    monkeypatch.setenv(RECORD_DIR_ENV, str(records))
    # a first `connectors apply` runs in the task and records the stack's clusters there; the task prints the
    # record after the record marker and this side keeps it in the checkout
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
    # --env names which environment's stack this is on the laptop; the task reads the stack's own
    assert co["environment"] == [{"name": ARGV_ENV, "value": json.dumps(["connectors", "apply"])}]

    waiter = finish(aws, 1, ["lagging", operator_task.STDOUT_MARKER, "{}"])
    res = cli("lag", "--env", str(env_yaml), "--in-vpc", "--ecs-cluster", CLUSTER, "--aws-region", REGION)
    waiter.join(5)
    assert res.returncode == 1, res.stdout + res.stderr
    (co,) = _last_task(aws)["overrides"]["containerOverrides"]
    assert co["environment"] == [{"name": ARGV_ENV, "value": json.dumps(["lag"])}] and "command" not in co


def _last_task(aws) -> dict:
    (arn,) = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY, desiredStatus="STOPPED")["taskArns"][-1:]
    return aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[arn])["tasks"][0]


def test_the_entrypoint_runs_the_command_and_prints_stderr_the_record_it_left_and_stdout(tmp_path, capsys) -> None:
    # the operator image's run step, with a stand-in msk-migrate that records as a first apply does
    records = tmp_path / "in-task-records"
    records.mkdir()
    fake = tmp_path / "msk-migrate"
    fake.write_text('#!/bin/sh\necho "stderr line" >&2\nprintf \'{"environment": "dev", "target_cluster_id": "X1"}\' '
                    '> "$MSK_MIGRATE_RECORD_DIR/dev.json"\necho "stdout line"\nexit 3\n')
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "MSK_MIGRATE_RECORD_DIR": str(records)}
    assert operator_entry.run(["connectors", "apply"], env, command=[str(fake)], records=str(records)) == 3
    err, out = operator_task.split_output(capsys.readouterr().out.splitlines())
    err, rec = operator_task.split_record(err)
    assert (err, out, rec) == (["stderr line"], ["stdout line"], {"environment": "dev", "target_cluster_id": "X1"})


def test_in_vpc_refuses_a_laptop_command_before_anything_starts() -> None:
    req = operator_task.split_argv(["local", "up", "--in-vpc", "--ecs-cluster", "c1"])
    with pytest.raises(UsageError, match="local is not a runbook command"):
        operator_task.prepare(req, grammar)


@pytest.mark.parametrize(("words", "option"), [
    (["connectors", "status", "--config", "/tmp/msk-migrate-flow.yaml"], "--config"),
    (["connectors", "status", "--connect-url", "http://127.0.0.1:1"], "--connect-url"),
    (["connectors", "status", "--connect-secret-arn", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:x"], "--connect-secret-arn"),
    (["schemas", "plan", "--source-registry", "http://127.0.0.1:1"], "--source-registry"),
    (["cutover", "check", "--validation-report", "s3://elsewhere/x/"], "--validation-report"),
    (["validate", "--follow", "--mark", "s3://another-bucket/proof/mark.json"], "--mark"),
    (["lag", "--local"], "--local"),
    (["validate", "--kafka-option", "sasl.jaas.config=x"], "--kafka-option"),
])
def test_in_vpc_refuses_an_option_that_names_an_endpoint_file_or_foreign_location_before_anything_starts(words, option) -> None:
    req = operator_task.split_argv([*words, "--env", "dev", "--in-vpc", "--ecs-cluster", "c1"])
    with pytest.raises(UsageError) as err:
        operator_task.prepare(req, grammar)
    assert err.value.field == option and "with --in-vpc" in str(err.value), str(err.value)


def test_an_in_vpc_refusal_with_output_json_is_one_line_and_one_json_document() -> None:
    res = cli("lag", "--connect-url", "http://127.0.0.1:1", "--output", "json", "--in-vpc", "--ecs-cluster", CLUSTER)
    assert res.returncode == 2 and res.stderr.startswith("error: --connect-url:") and len(res.stderr.strip().splitlines()) == 1
    doc = json.loads(res.stdout)
    assert (doc["command"], doc["verdict"], doc["exit_code"], doc["rows"]) == ("lag", "bad-input", 2, [])
    assert doc["error"].startswith("--connect-url: is the stack's")
