"""Run a command as a one-off ECS task with the network view and credentials of the Connect workers.

``preflight --in-vpc`` and every other command's ``--in-vpc`` (:mod:`.operator_task`) use this: the preflight then resolves the brokers' names, opens
connections through the Connect security group and authenticates with the Connect task role (MSK IAM)
and the Connect secrets, exactly as the workers will, instead of from the operator's laptop.

What the task borrows from the running Connect service (``describe-services``): its subnets, security
groups and public-IP setting. It runs as the operator task definition's own role, with the image's own
entrypoint (:mod:`.operator_entry`): the RunTask request overrides only the container's environment,
never ``command`` or ``taskRoleArn`` (the right to run the operator task is not the right to run anything,
or to run as the Connect workers, issue 37).

Who started it: every RunTask carries the tag :data:`STARTED_BY_TAG` = the caller's ``aws:userid`` (STS
``GetCallerIdentity`` ``UserId``: ``AIDA…`` for an IAM user, ``AROA…:<session name>`` for an assumed role or SSO).
The operator policy the stack ships allows RunTask only with that tag equal to ``${aws:userid}`` and StopTask
only on tasks whose tag is the caller's (infra/mskinfra/iam_policy.py), so the tag names the person who
started the task and cannot be forged; inside the task it becomes ``MSK_MIGRATE_STARTED_BY`` for the ledger
(:data:`msk_migrate.ledger.storage.STARTED_BY_ENV`).

The result is the task's exit code (0 = every check passed) and its log lines from CloudWatch Logs
(the container's ``awslogs`` group and stream prefix); waiting is bounded by ``timeout``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UnreachableError, UsageError

#: ``startedBy`` of every task this module starts (find or stop them by it).
STARTED_BY = "msk-migrate-in-vpc"
#: The task tag naming the person who started it (the caller's ``aws:userid``; IAM enforces the value).
STARTED_BY_TAG = "msk-migrate:started-by"


@dataclass
class TaskResult:
    task_arn: str
    last_status: str
    exit_code: int | None
    stopped_reason: str
    log_lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.last_status == "STOPPED" and self.exit_code == 0

    def to_dict(self) -> dict:
        return {"task_arn": self.task_arn, "last_status": self.last_status, "exit_code": self.exit_code,
                "stopped_reason": self.stopped_reason, "ok": self.ok, "log_lines": self.log_lines}


@dataclass(frozen=True)
class ConnectPlacement:
    """Where the Connect workers run and as whom."""

    network_configuration: dict
    task_role_arn: str | None
    service_task_definition: str


def connect_placement(ecs, cluster: str, service: str) -> ConnectPlacement:
    """Network configuration and task role of the Connect ECS service ``service`` in ``cluster``."""
    found = ecs.describe_services(cluster=cluster, services=[service])
    services = [s for s in found.get("services", []) if s.get("status") != "INACTIVE"]
    if not services:
        raise UsageError("--ecs-service", f"no ECS service {service!r} in cluster {cluster!r}",
                         "pass the Connect service of the stack (output ecs_service_names)")
    svc = services[0]
    network = svc.get("networkConfiguration") or {}
    if not network.get("awsvpcConfiguration", {}).get("subnets"):
        raise UsageError("--ecs-service", f"service {service!r} has no awsvpc subnets", "pass the Connect service of the stack")
    td = ecs.describe_task_definition(taskDefinition=svc["taskDefinition"])["taskDefinition"]
    return ConnectPlacement(network, td.get("taskRoleArn"), svc["taskDefinition"])


def caller_user_id(sts) -> str:
    """The caller's ``aws:userid`` (STS GetCallerIdentity ``UserId``): the value IAM compares the task's
    :data:`STARTED_BY_TAG` with. GetCallerIdentity needs no permission; failing means no usable credentials."""
    try:
        return str(sts.get_caller_identity()["UserId"])
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnreachableError(f"STS GetCallerIdentity (who starts the task): {text}") from None


def start_task(ecs, *, cluster: str, task_definition: str, container: str,
               environment: dict[str, str], placement: ConnectPlacement, started_by: str) -> str:
    """RunTask on Fargate in the Connect subnets/security groups; the task ARN. Overrides: the container's
    environment only (the request travels there; the image's entrypoint decides what runs). Tagged
    :data:`STARTED_BY_TAG` = ``started_by`` (the caller's ``aws:userid``: the operator policy refuses any other)."""
    overrides: dict = {
        "containerOverrides": [
            {"name": container, "environment": [{"name": k, "value": v} for k, v in sorted(environment.items())]}
        ]
    }
    resp = ecs.run_task(
        cluster=cluster,
        taskDefinition=task_definition,
        launchType="FARGATE",
        platformVersion="LATEST",
        count=1,
        startedBy=STARTED_BY,
        networkConfiguration=placement.network_configuration,
        overrides=overrides,
        tags=[{"key": STARTED_BY_TAG, "value": started_by}],
    )
    if resp.get("failures") or not resp.get("tasks"):
        reasons = "; ".join(f"{f.get('arn', '')} {f.get('reason', '')}".strip() for f in resp.get("failures", []))
        raise UnreachableError(f"ECS RunTask in {cluster} started no task: {reasons or 'no reason given'}")
    return resp["tasks"][0]["taskArn"]


def wait_stopped(ecs, cluster: str, task_arn: str, *, timeout: float, poll: float = 5.0,
                 on_status: Callable[[str], None] | None = None) -> dict:
    """Poll DescribeTasks until the task is STOPPED or ``timeout`` seconds passed; the last description."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        tasks = ecs.describe_tasks(cluster=cluster, tasks=[task_arn]).get("tasks", [])
        if not tasks:
            raise UnreachableError(f"ECS task {task_arn} disappeared from cluster {cluster}")
        task = tasks[0]
        status = task.get("lastStatus", "")
        if status != last and on_status:
            on_status(status)
        last = status
        if status == "STOPPED" or time.monotonic() >= deadline:
            return task
        time.sleep(poll)


def container_exit_code(task: dict, container: str) -> int | None:
    for c in task.get("containers", []):
        if c.get("name") == container:
            return c.get("exitCode")
    return None


def task_log_lines(ecs, logs, task_definition: str, container: str, task_arn: str, limit: int = 1000) -> list[str]:
    """The container's lines in CloudWatch Logs (awslogs driver: stream ``<prefix>/<container>/<task id>``)."""
    td = ecs.describe_task_definition(taskDefinition=task_definition)["taskDefinition"]
    (cdef,) = [c for c in td["containerDefinitions"] if c["name"] == container] or [None]
    options = ((cdef or {}).get("logConfiguration") or {}).get("options") or {}
    group, prefix = options.get("awslogs-group"), options.get("awslogs-stream-prefix")
    if not group or not prefix:
        return []
    stream = f"{prefix}/{container}/{task_arn.rsplit('/', 1)[-1]}"
    try:
        events = logs.get_log_events(logGroupName=group, logStreamName=stream, startFromHead=True, limit=limit)["events"]
    except logs.exceptions.ResourceNotFoundException:
        return []
    return [e["message"] for e in events]


def run_in_vpc(ecs, logs, *, cluster: str, service: str, task_definition: str, container: str,
               environment: dict[str, str], timeout: float, poll: float = 5.0,
               on_status: Callable[[str], None] | None = None, sts=None) -> TaskResult:
    """Start the one-off task beside the Connect service, wait (bounded), collect exit code and logs.

    The task is tagged with the caller's ``aws:userid`` from ``sts`` (default: an STS client of the ECS
    client's region and the default credentials, the ones ``ecs`` signs with). A task still running at
    ``timeout`` is stopped (nothing is left behind; the caller's own task, so StopTask is allowed) and
    reported as not ok."""
    if sts is None:
        import boto3

        sts = boto3.client("sts", region_name=ecs.meta.region_name)
    started_by = caller_user_id(sts)
    placement = connect_placement(ecs, cluster, service)
    task_arn = start_task(ecs, cluster=cluster, task_definition=task_definition, container=container,
                          environment=environment, placement=placement, started_by=started_by)
    task = wait_stopped(ecs, cluster, task_arn, timeout=timeout, poll=poll, on_status=on_status)
    reason = task.get("stoppedReason", "")
    if task.get("lastStatus") != "STOPPED":
        ecs.stop_task(cluster=cluster, task=task_arn, reason=f"msk-migrate: no result within {timeout:.0f}s")
        reason = f"no result within {timeout:.0f}s; task stopped"
    return TaskResult(
        task_arn=task_arn,
        last_status=task.get("lastStatus", ""),
        exit_code=container_exit_code(task, container),
        stopped_reason=reason,
        log_lines=task_log_lines(ecs, logs, task_definition, container, task_arn),
    )
