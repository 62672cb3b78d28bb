"""How this task was started, as ECS itself tells it: the overrides, the network and the tags of the RunTask.

A caller who may run the operator task chooses the RunTask request: environment overrides, command, roles,
network configuration. IAM cannot limit the overrides (no condition key covers ``containerOverrides``) and
the task's own environment cannot tell a task definition's value from an override of the same name. ECS can:
``DescribeTasks`` returns the task's ``overrides`` exactly as they were sent and its network interface, and
``DescribeNetworkInterfaces`` the security groups on it. The task finds itself through the task metadata
endpoint, which the ECS agent serves at a fixed link-local address (:data:`METADATA_HOST`): a metadata URI
that points anywhere else is refused before it is read.

:func:`admit` is the decision (small and side-effect free, the views passed in): which request runs, whose it
is, or the one line that says why nothing runs.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .ecs_task import STARTED_BY_TAG  # the caller's aws:userid, which the operator user policy makes IAM check
from .operator_stack import StackSettings

#: The task metadata endpoint's address on Fargate (and the ECS agent's on EC2): link-local, not routable.
METADATA_HOST = "169.254.170.2"
METADATA_ENV = "ECS_CONTAINER_METADATA_URI_V4"
_METADATA_URI = re.compile(r"http://169\.254\.170\.2/v4/[A-Za-z0-9._-]+")
#: The caller's request (environment override) and the only override the operator task accepts.
ARGV_ENV = "MSK_MIGRATE_OPERATOR_ARGV"


class NotAdmitted(Exception):
    """The task was started in a way the entrypoint does not run; the message is the one line printed."""


@dataclass(frozen=True)
class TaskView:
    """This task as ECS describes it."""

    task_arn: str
    container: str  #: the container this process runs in
    overrides: Mapping[str, Any]  #: DescribeTasks ``overrides``, as sent
    subnets: tuple[str, ...]  #: the subnets of the task's network interfaces
    security_groups: frozenset[str]  #: the security groups on them
    public_ip: bool  #: whether an interface has a public address
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Admitted:
    """A start the entrypoint runs: whose request it is."""

    caller_request: bool  #: True: the caller's ``MSK_MIGRATE_OPERATOR_ARGV``; False: the stack's own request
    started_by: str | None  #: the caller's ``aws:userid`` from the tag IAM checks, None for the stack's own


def admit(view: TaskView, stack: StackSettings) -> Admitted:
    """Run, or :class:`NotAdmitted`: no override but the caller's request, the stack's network, a known caller."""
    for key, value in view.overrides.items():
        if key != "containerOverrides" and value:
            raise NotAdmitted(f"RunTask override {key}: the operator task takes no override but its request ({ARGV_ENV})")
    sent: set[str] = set()
    for co in view.overrides.get("containerOverrides") or []:
        name = co.get("name")
        extra = sorted(k for k, v in co.items() if k not in ("name", "environment") and v)
        if extra:
            raise NotAdmitted(f"RunTask containerOverrides.{extra[0]} for {name}: the operator task takes no override but "
                              f"its request ({ARGV_ENV})")
        names = [e.get("name") for e in co.get("environment") or []]
        if names and name != view.container:
            raise NotAdmitted(f"RunTask environment override for container {name!r}: only {view.container!r} takes a request")
        other = sorted(str(n) for n in names if n != ARGV_ENV)
        if other:
            raise NotAdmitted(f"RunTask environment override {other[0]}: the operator task takes only {ARGV_ENV}; "
                              "its clusters, worker, secrets and settings are the stack's")
        sent.update(str(n) for n in names)
    outside = sorted(s for s in view.subnets if s not in stack.subnets)
    if outside or not view.subnets:
        raise NotAdmitted(f"RunTask network configuration: subnet {outside[0] if outside else '(none)'} is not one of the "
                          f"stack's ({', '.join(stack.subnets)})")
    if view.security_groups != frozenset(stack.security_groups):
        raise NotAdmitted(f"RunTask network configuration: security groups {', '.join(sorted(view.security_groups)) or '(none)'} "
                          f"are not the stack's ({', '.join(stack.security_groups)})")
    if view.public_ip:
        raise NotAdmitted("RunTask network configuration: assignPublicIp is ENABLED; the operator task has no public address")
    caller = ARGV_ENV in sent
    person = view.tags.get(STARTED_BY_TAG)
    if caller and not person:
        raise NotAdmitted(f"the task carries no {STARTED_BY_TAG} tag: start it with `msk-migrate <command> --in-vpc`, "
                          "which tags it with the caller IAM authenticated")
    return Admitted(caller_request=caller, started_by=person if caller else None)


def metadata_uri(environ: Mapping[str, str]) -> str:
    """The task metadata endpoint from the environment ECS sets; :class:`NotAdmitted` for any other address."""
    uri = environ.get(METADATA_ENV, "")
    if not _METADATA_URI.fullmatch(uri):
        raise NotAdmitted(f"{METADATA_ENV} is not the ECS agent's endpoint (http://{METADATA_HOST}/v4/…): "
                          "the operator task runs only as ECS starts it")
    return uri


Clients = Callable[[str], tuple[Any, Any]]


def _boto_clients(region: str) -> tuple[Any, Any]:
    import boto3

    return boto3.client("ecs", region_name=region), boto3.client("ec2", region_name=region)


def describe_self(uri: str, clients: Clients = _boto_clients, timeout: float = 5.0) -> TaskView:
    """This task as ECS describes it (metadata endpoint, then DescribeTasks and DescribeNetworkInterfaces)."""
    with urllib.request.urlopen(uri, timeout=timeout) as resp:
        container = json.load(resp).get("Name") or ""
    with urllib.request.urlopen(uri + "/task", timeout=timeout) as resp:
        meta = json.load(resp)
    task_arn, cluster = meta["TaskARN"], meta["Cluster"]
    region = task_arn.split(":")[3]
    ecs, ec2 = clients(region)
    tasks = ecs.describe_tasks(cluster=cluster, tasks=[task_arn], include=["TAGS"]).get("tasks") or []
    if not tasks:
        raise NotAdmitted(f"ECS does not describe this task ({task_arn})")
    task = tasks[0]
    enis = [d["value"] for a in task.get("attachments") or [] if a.get("type") == "ElasticNetworkInterface"
            for d in a.get("details") or [] if d.get("name") == "networkInterfaceId"]
    subnets: list[str] = []
    groups: set[str] = set()
    public = False
    if enis:
        for eni in ec2.describe_network_interfaces(NetworkInterfaceIds=enis)["NetworkInterfaces"]:
            subnets.append(eni.get("SubnetId", ""))
            groups.update(g["GroupId"] for g in eni.get("Groups") or [])
            public = public or bool((eni.get("Association") or {}).get("PublicIp"))
    return TaskView(task_arn=task_arn, container=container, overrides=task.get("overrides") or {}, subnets=tuple(subnets),
                    security_groups=frozenset(groups), public_ip=public,
                    tags={t["key"]: t["value"] for t in task.get("tags") or [] if "key" in t and "value" in t})
