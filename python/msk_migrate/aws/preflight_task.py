"""``msk-migrate preflight --in-vpc``: the ordinary preflight, run as a one-off ECS task beside the
Connect workers (their subnets and security groups), as the operator task role, its result printed here.

The operator image's entrypoint (:mod:`.operator_entry`) runs ``msk-migrate preflight --output json`` on the
stack's own environment (it adds ``--env``): the request, the environment override ``MSK_MIGRATE_OPERATOR_ARGV``,
is the only thing sent; the clusters and their secrets are the stack's, never a file of the caller's.
The JSON report is read back from the task's CloudWatch log stream; the exit code decides.
"""

from __future__ import annotations

import functools
import json

import click

from ..clivalues import Aliased, Checked
from ..config.identifiers import check_region
from ..errors import UsageError
from .task_view import ARGV_ENV

#: ``--region``: a region where ECS runs (botocore's endpoint data), refused while parsing.
_ECS_REGION = Checked("region", lambda v: check_region(v, "ecs", "ECS"), "pass the stack's region, e.g. eu-west-1", "REGION")


#: The request the operator image's entrypoint runs: the ordinary preflight on the stack's environment.
REQUEST = ["preflight", "--output", "json"]


def task_environment(wave: str | None = None) -> dict[str, str]:
    """The one override the task gets: the request, with ``--wave`` when one was asked for."""
    return {ARGV_ENV: json.dumps(REQUEST + (["--wave", wave] if wave is not None else []))}


def in_vpc_options(f):
    """The options of ``preflight`` that only ``--in-vpc`` uses (passed on as ``in_vpc_opts``)."""
    options = [
        click.option("--in-vpc", is_flag=True, help="Run the preflight as a one-off ECS task in the Connect subnets as the operator task role."),
        click.option("--ecs-cluster", help="ECS cluster of the stack (output ecs_cluster_name); required with --in-vpc."),
        click.option("--ecs-service", help="Connect service whose network the task uses. Default: <cluster>-kafka-connect."),
        click.option("--task-definition", help="Task definition with msk-migrate in its image. Default: <cluster>-operator (the stack's operator task)."),
        click.option("--task-container", "--container", "container", cls=Aliased, hidden_aliases=["--container"],
                     default="operator", show_default=True, help="Container of the task definition that runs the command."),
        click.option("--aws-region", "--region", "region", cls=Aliased, hidden_aliases=["--region"],
                     type=_ECS_REGION, help="AWS region (default: the AWS profile's)."),
        click.option("--task-timeout", "--timeout", "timeout", cls=Aliased, hidden_aliases=["--timeout"],
                     type=click.FloatRange(30, 3600), default=600, show_default=True, help="Seconds to wait for the task."),
    ]

    @functools.wraps(f)
    def wrapper(*args, in_vpc, ecs_cluster, ecs_service, task_definition, container, region, timeout, **kwargs):
        opts = dict(in_vpc=in_vpc, ecs_cluster=ecs_cluster, ecs_service=ecs_service, task_definition=task_definition,
                    container=container, region=region, timeout=timeout)
        return f(*args, in_vpc_opts=opts, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def report_from_logs(lines: list[str]) -> dict | None:
    """The preflight's JSON report from the task's log lines (the last JSON object printed)."""
    text = "\n".join(lines)
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start:])
            if isinstance(obj, dict) and "checks" in obj:
                return obj
        except ValueError:
            pass
        start = text.find("{", start + 1)
    return None


def run(*, ecs_cluster: str | None, ecs_service: str | None, task_definition: str | None,
        container: str, region: str | None, timeout: float, poll: float = 5.0, on_status=None, clients=None,
        wave: str | None = None):
    """Start, wait, collect: ``(TaskResult, report dict or None)``."""
    import boto3

    from .ecs_task import run_in_vpc
    from .operator_task import require_task_definition

    if not ecs_cluster:
        raise UsageError("--ecs-cluster", "required with --in-vpc", "pass the stack output ecs_cluster_name")
    env = task_environment(wave)
    ecs, logs = clients or (boto3.client("ecs", region_name=region), boto3.client("logs", region_name=region))
    task_definition = task_definition or f"{ecs_cluster}-operator"
    require_task_definition(ecs, task_definition)
    result = run_in_vpc(
        ecs, logs,
        cluster=ecs_cluster,
        service=ecs_service or f"{ecs_cluster}-kafka-connect",
        task_definition=task_definition,
        container=container,
        environment=env,
        timeout=timeout,
        poll=poll,
        on_status=on_status,
    )
    return result, report_from_logs(result.log_lines)


def print_in_vpc(con, output: str, **opts) -> int:
    """Run in the VPC and print like the local preflight; the exit code: 0 ok, 1 a check failed, 2 no result."""
    from rich.table import Table

    from ..cliutil import emit_json
    from ..outcome import json_document

    cluster = opts.get("ecs_cluster")
    if not cluster:
        raise UsageError("--ecs-cluster", "required with --in-vpc", "pass the stack output ecs_cluster_name")
    con.print(f"preflight in ECS cluster {cluster} (network of the Connect service, operator task role)")
    with con.status("starting the preflight task") as status:
        result, report = run(on_status=lambda s: status.update(f"preflight task: {s.lower()}"), **opts)
    if output == "json":
        code = 2 if result.last_status != "STOPPED" or result.exit_code is None else (0 if result.exit_code == 0 else 1)
        emit_json({"task": result.to_dict(), "report": report,
                   **json_document({"ecs_cluster": cluster}, (report or {}).get("checks", []),
                                   {0: "ok", 1: "failed"}.get(code, "no-result"), code)})
    else:
        con.print(f"task {result.task_arn}: {result.last_status}, exit code {result.exit_code}"
                  + (f" ({result.stopped_reason})" if result.stopped_reason else ""))
        if report:
            t = Table(title="preflight (in VPC)")
            for column in ("check", "status", "detail"):
                t.add_column(column)
            colour = {"ok": "green", "warn": "yellow", "fail": "red"}
            for c in report["checks"]:
                t.add_row(c["name"], f"[{colour.get(c['status'], 'white')}]{c['status']}[/]", c.get("detail", ""))
            con.print(t)
        else:
            con.print("[red]no preflight report in the task's log[/]; last lines:")
            for line in result.log_lines[-20:]:
                con.print(f"  {line}", markup=False, highlight=False)
    if result.last_status != "STOPPED" or result.exit_code is None:
        return 2
    return 0 if result.exit_code == 0 else 1
