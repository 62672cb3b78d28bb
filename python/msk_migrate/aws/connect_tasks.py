"""What ECS keeps of the Connect service's stopped tasks: the evidence of why a deployed worker is down.

ECS shows a stopped task for about an hour: its ``stoppedReason``, ``stopCode`` and, per container, the
``exitCode`` and ``reason`` ("OutOfMemoryError: Container killed due to memory usage"); the worker's own last
words are in its awslogs stream. :func:`stopped_connect_tasks` reads them (ListTasks with ``serviceName`` and
``desiredStatus=STOPPED``, else the task ids the service's recent events name; DescribeTasks; the task
definition's log settings and GetLogEvents of the newest stopped task) and never fails: a call that is refused
or unanswered leaves its part out and is named in :attr:`StoppedTasks.unread`.

Reads only; the decision is :func:`msk_migrate.connect_api.worker_down.classify_ecs` (the caller passes it what
was read: this floor and the Connect client's are siblings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

#: The Connect container of the stack's task definition (infra/mskinfra/ecs.py: the component's name).
CONNECT_CONTAINER = "kafka-connect"
#: How many stopped tasks are described (DescribeTasks takes at most 100).
MAX_TASKS = 20
#: Lines of the newest stopped task's log read (from its end).
LOG_LINES = 200
#: A task id in a service event ("(service S) has stopped 1 running tasks: (task 0a1b…)."): 32 hex digits on ECS.
_TASK_IN_EVENT = re.compile(r"\(task ([0-9a-f][0-9a-f-]{31,35})\)")


def connect_service_names(resource_prefix: str) -> tuple[str, str]:
    """(ECS cluster, Connect service) of an environment's stack (infra/mskinfra/ecs.py names them so)."""
    return resource_prefix, f"{resource_prefix}-{CONNECT_CONTAINER}"


@dataclass
class StoppedTasks:
    """The service's stopped tasks, newest first (DescribeTasks entries as returned), the newest one's log, and what
    could not be read (``"ecs:ListTasks: AccessDeniedException"``...)."""

    tasks: list[dict[str, Any]]
    log_tail: list[str] = field(default_factory=list)
    log: str | None = None  #: ``<log group> <log stream>`` of those lines
    log_task: str | None = None  #: the ARN of the task they are of
    unread: list[str] = field(default_factory=list)


def _stopped_at(task: dict[str, Any]) -> datetime:
    at = task.get("stoppedAt")
    if isinstance(at, datetime):
        return at if at.tzinfo else at.replace(tzinfo=UTC)
    return datetime.fromtimestamp(at, UTC) if isinstance(at, int | float) else datetime.min.replace(tzinfo=UTC)


def _why(exc: Exception) -> str:
    code = getattr(exc, "response", {}).get("Error", {}).get("Code") if hasattr(exc, "response") else None
    return str(code or type(exc).__name__)


def _stopped_arns(ecs: Any, cluster: str, service: str, unread: list[str]) -> list[str]:
    try:
        return list(ecs.list_tasks(cluster=cluster, serviceName=service, desiredStatus="STOPPED",
                                   maxResults=MAX_TASKS).get("taskArns") or [])[:MAX_TASKS]
    except Exception as exc:  # e.g. an operator policy without ecs:ListTasks: the service's events name tasks too
        unread.append(f"ecs:ListTasks: {_why(exc)}")
    try:
        services = ecs.describe_services(cluster=cluster, services=[service]).get("services") or []
    except Exception as exc:
        unread.append(f"ecs:DescribeServices: {_why(exc)}")
        return []
    ids = [m for s in services for e in (s.get("events") or []) for m in _TASK_IN_EVENT.findall(str(e.get("message", "")))]
    return list(dict.fromkeys(ids))[:MAX_TASKS]


def _log_tail(ecs: Any, logs: Any, task: dict[str, Any], container: str, unread: list[str]) -> tuple[list[str], str | None]:
    try:
        td = ecs.describe_task_definition(taskDefinition=task["taskDefinitionArn"])["taskDefinition"]
        cdef: dict[str, Any] = next((c for c in td.get("containerDefinitions") or [] if c.get("name") == container), {})
        options = (cdef.get("logConfiguration") or {}).get("options") or {}
        group, prefix = options.get("awslogs-group"), options.get("awslogs-stream-prefix")
        if not group or not prefix:
            return [], None
        stream = f"{prefix}/{container}/{str(task['taskArn']).rsplit('/', 1)[-1]}"
        events = logs.get_log_events(logGroupName=group, logStreamName=stream, startFromHead=False, limit=LOG_LINES)["events"]
        return [str(e.get("message", "")) for e in events], f"{group} {stream}"
    except Exception as exc:
        unread.append(f"the task's log: {_why(exc)}")
        return [], None


def stopped_connect_tasks(ecs: Any, logs: Any, cluster: str, service: str, container: str = CONNECT_CONTAINER) -> StoppedTasks:
    """The stopped tasks of ``service`` (its own: ``group`` ``service:<service>``) and the log tail of the newest."""
    unread: list[str] = []
    arns = _stopped_arns(ecs, cluster, service, unread)
    tasks: list[dict[str, Any]] = []
    if arns:
        try:
            tasks = list(ecs.describe_tasks(cluster=cluster, tasks=arns).get("tasks") or [])
        except Exception as exc:
            unread.append(f"ecs:DescribeTasks: {_why(exc)}")
    mine = [t for t in tasks if t.get("lastStatus") == "STOPPED" and t.get("group") == f"service:{service}"]
    mine.sort(key=_stopped_at, reverse=True)
    lines, where = _log_tail(ecs, logs, mine[0], container, unread) if mine else ([], None)
    return StoppedTasks(mine, lines, where, mine[0]["taskArn"] if where else None, unread)
