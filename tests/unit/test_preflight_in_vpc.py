"""``msk-migrate preflight --in-vpc`` against moto's ECS and CloudWatch Logs (a moto server on 127.0.0.1).

moto answers every API call (DescribeServices, DescribeTaskDefinition, RunTask, DescribeTasks,
StopTask, GetLogEvents) but runs no container: what the ECS agent and the awslogs driver would do
(stop the task with the container's exit code, write its stdout to the log stream) is done by the
``finish`` helper below, the only part not exercised against the real service.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from msk_migrate.aws import ecs_task, preflight_task
from msk_migrate.aws.task_view import ARGV_ENV

REGION = "eu-west-1"
CLUSTER = "msk-migrate-dev"
LOG_GROUP = "/msk-migrate-dev/operator"
TASK_ROLE = "arn:aws:iam::123456789012:role/msk-migrate-dev-kafka-connect-task"
OPERATOR_ROLE = "arn:aws:iam::123456789012:role/msk-migrate-dev-operator-task"
REPORT = {"ok": True, "checks": [{"name": "source reachable", "status": "ok", "detail": "3 brokers"}], "topics": [], "groups": []}

MIGRATION_YAML = """\
source:
  alias: source
  bootstrap_servers: kafka-1.dev.corp.example:9093
  auth: {mode: plaintext}
target:
  alias: target
  bootstrap_servers: b-1.msk.example:9098
  auth: {mode: plaintext}
"""


@pytest.fixture(scope="module")
def moto_url():
    from tests.infra.moto_shims import ecs_tasks_stay

    with ecs_tasks_stay() as url:
        yield url


@pytest.fixture()
def aws(moto_url, monkeypatch):
    from tests.infra.moto_shims import use_moto

    use_moto(monkeypatch, moto_url, REGION)
    import boto3  # here: test_operator_in_vpc's unit tests import this module and never need boto3

    ecs = boto3.client("ecs", region_name=REGION)
    logs = boto3.client("logs", region_name=REGION)
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.60.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.60.1.0/24")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName=f"connect-{time.time_ns()}", Description="connect", VpcId=vpc)["GroupId"]
    ecs.create_cluster(clusterName=CLUSTER)
    connect_td = ecs.register_task_definition(
        family=f"{CLUSTER}-kafka-connect", taskRoleArn=TASK_ROLE, networkMode="awsvpc", requiresCompatibilities=["FARGATE"],
        cpu="1024", memory="4096", containerDefinitions=[{"name": "kafka-connect", "image": "connect:1", "essential": True, "cpu": 1024, "memory": 4096}],
    )["taskDefinition"]["taskDefinitionArn"]
    ecs.register_task_definition(
        family=f"{CLUSTER}-operator", taskRoleArn=OPERATOR_ROLE, networkMode="awsvpc", requiresCompatibilities=["FARGATE"],
        cpu="256", memory="512",
        containerDefinitions=[{
            "name": "operator", "image": "msk-migrate:1", "essential": True, "cpu": 256, "memory": 512,
            "logConfiguration": {"logDriver": "awslogs", "options": {
                "awslogs-group": LOG_GROUP, "awslogs-region": REGION, "awslogs-stream-prefix": "operator"}},
        }],
    )
    ecs.create_service(
        cluster=CLUSTER, serviceName=f"{CLUSTER}-kafka-connect", taskDefinition=connect_td, desiredCount=0, launchType="FARGATE",
        networkConfiguration={"awsvpcConfiguration": {"subnets": [subnet], "securityGroups": [sg], "assignPublicIp": "DISABLED"}},
    )
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=LOG_GROUP)
    return {"ecs": ecs, "logs": logs, "subnet": subnet, "sg": sg}


def cli(*args: str) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess (same environment: the moto endpoint and fake credentials)."""
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def finish(aws: dict, exit_code: int, lines: list[str], delay: float = 0.5) -> threading.Thread:
    """Play the ECS agent + awslogs driver: once the task exists, log its output and stop it with ``exit_code``."""

    def run() -> None:
        from moto.backends import get_backend

        deadline = time.time() + 30
        while time.time() < deadline:
            arns = aws["ecs"].list_tasks(cluster=CLUSTER, startedBy=ecs_task.STARTED_BY)["taskArns"]
            running = [a for a in arns if aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[a])["tasks"][0]["lastStatus"] != "STOPPED"]
            if running:
                break
            time.sleep(0.1)
        else:
            return
        time.sleep(delay)
        arn = running[0]
        stream = f"operator/operator/{arn.rsplit('/', 1)[-1]}"
        aws["logs"].create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
        now = int(time.time() * 1000)
        aws["logs"].put_log_events(logGroupName=LOG_GROUP, logStreamName=stream,
                                   logEvents=[{"timestamp": now + i, "message": m} for i, m in enumerate(lines)])
        # The container's exit code is in place before the task reads STOPPED, as on ECS: a poller that sees
        # STOPPED always sees the exit code too.
        backend = get_backend("ecs")["123456789012"][REGION]
        for task in backend.tasks[CLUSTER].values():
            if task.task_arn == arn:
                task.containers = [{"name": "operator", "exitCode": exit_code, "lastStatus": "STOPPED"}]
        aws["ecs"].stop_task(cluster=CLUSTER, task=arn, reason="Essential container in task exited")

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_preflight_task_runs_in_the_connect_subnets_as_the_operator_role_without_command_or_role_override(aws, tmp_path) -> None:
    waiter = finish(aws, 0, ["starting", json.dumps(REPORT, indent=2)])
    result, report = preflight_task.run(ecs_cluster=CLUSTER, ecs_service=None, task_definition=None, container="operator",
                                        region=REGION, timeout=60, poll=0.2, clients=(aws["ecs"], aws["logs"]))
    waiter.join(5)
    assert result.ok and result.exit_code == 0 and report == REPORT
    task = aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[result.task_arn])["tasks"][0]
    assert task["launchType"] == "FARGATE" and task["startedBy"] == ecs_task.STARTED_BY
    assert task["taskDefinitionArn"].split("/")[-1].startswith(f"{CLUSTER}-operator:")
    awsvpc = task["attachments"][0]["details"] if task.get("attachments") else []
    if awsvpc:  # moto records the ENI of the awsvpc network configuration
        assert {"name": "subnetId", "value": aws["subnet"]} in awsvpc
    overrides = task["overrides"]
    assert "taskRoleArn" not in overrides, "preflight runs as the operator task role (issue 37)"
    (co,) = overrides["containerOverrides"]
    assert co["name"] == "operator" and "command" not in co, "the image's entrypoint runs the request"
    sent = {e["name"]: e["value"] for e in co["environment"]}
    assert list(sent) == [ARGV_ENV], "the request alone: the task's flow, clusters and secrets are the stack's"
    assert json.loads(sent[ARGV_ENV]) == ["preflight", "--output", "json"]


def test_run_task_request_carries_the_connect_network_configuration(aws) -> None:
    placement = ecs_task.connect_placement(aws["ecs"], CLUSTER, f"{CLUSTER}-kafka-connect")
    assert placement.network_configuration["awsvpcConfiguration"] == {
        "subnets": [aws["subnet"]], "securityGroups": [aws["sg"]], "assignPublicIp": "DISABLED"}
    assert placement.task_role_arn == TASK_ROLE


def test_cli_prints_the_in_vpc_report_and_exits_1_when_a_check_failed(aws, tmp_path) -> None:
    failed = {**REPORT, "ok": False, "checks": [{"name": "target topics", "status": "fail", "detail": "orders exists with 3 partitions"}]}
    waiter = finish(aws, 1, [json.dumps(failed)])
    res = cli("preflight", "--in-vpc", "--ecs-cluster", CLUSTER, "--region", REGION, "--output", "json")
    waiter.join(5)
    assert res.returncode == 1, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert out["report"] == failed and out["task"]["exit_code"] == 1 and out["task"]["last_status"] == "STOPPED"


def test_a_task_that_never_finishes_is_stopped_after_the_timeout(aws, tmp_path, monkeypatch) -> None:
    real_wait = ecs_task.wait_stopped
    monkeypatch.setattr(ecs_task, "wait_stopped", lambda *a, **kw: real_wait(*a, **{**kw, "timeout": 1.0}))
    result, report = preflight_task.run(ecs_cluster=CLUSTER, ecs_service=None, task_definition=None, container="operator",
                                        region=REGION, timeout=30, poll=0.2, clients=(aws["ecs"], aws["logs"]))
    assert not result.ok and report is None and "no result within" in result.stopped_reason
    task = aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[result.task_arn])["tasks"][0]
    assert task["lastStatus"] == "STOPPED", "a timed-out task is not left running"


def test_missing_cluster_or_service_is_one_line_naming_the_option(aws, tmp_path) -> None:
    res = cli("preflight", "--in-vpc")
    assert res.returncode == 2 and "--ecs-cluster" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    res = cli("preflight", "--in-vpc", "--ecs-cluster", CLUSTER, "--ecs-service", "nope", "--region", REGION)
    assert res.returncode == 2 and "--ecs-service" in res.stderr and "nope" in res.stderr
    res = cli("preflight", "--in-vpc", "--ecs-cluster", CLUSTER, "--task-definition", "absent", "--region", REGION)
    assert res.returncode == 2 and "--task-definition" in res.stderr and "absent" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_an_in_vpc_preflight_of_a_callers_flow_file_or_endpoint_is_refused_and_starts_nothing(aws, tmp_path) -> None:
    cfg = tmp_path / "migration.yaml"
    cfg.write_text(MIGRATION_YAML)
    before = aws["ecs"].list_tasks(cluster=CLUSTER)["taskArns"]
    for extra, option in ((["--config", str(cfg)], "--config"), (["--target-bootstrap", "127.0.0.1:1"], "--target-bootstrap"),
                          (["--connect-url", "http://127.0.0.1:1"], "--connect-url")):
        res = cli("preflight", *extra, "--in-vpc", "--ecs-cluster", CLUSTER, "--region", REGION)
        assert res.returncode == 2 and res.stderr.startswith(f"error: {option}:"), res.stderr
        assert "stack's own environment" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert aws["ecs"].list_tasks(cluster=CLUSTER)["taskArns"] == before, "nothing started"


def test_an_in_vpc_preflight_of_a_wave_sends_the_wave_in_the_request_and_the_grammar_admits_it(aws) -> None:
    from msk_migrate.commands.operator_grammar import check_request
    from msk_migrate.commands.root import cli

    waiter = finish(aws, 0, [json.dumps(REPORT)])
    result, _ = preflight_task.run(ecs_cluster=CLUSTER, ecs_service=None, task_definition=None, container="operator",
                                   region=REGION, timeout=60, poll=0.2, clients=(aws["ecs"], aws["logs"]), wave="first")
    waiter.join(5)
    task = aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[result.task_arn])["tasks"][0]
    (co,) = task["overrides"]["containerOverrides"]
    words = json.loads({e["name"]: e["value"] for e in co["environment"]}[ARGV_ENV])
    assert words == ["preflight", "--output", "json", "--wave", "first"]
    check_request(words, None, cli)  # what the task's entrypoint checks again before it runs anything
