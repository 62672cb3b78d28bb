"""``msk-migrate <any command> --in-vpc``: run an operator command as a one-off Fargate task inside the VPC.

Operators reach only the load balancer; MSK (9098, IAM) answers only inside the application subnets. So
``lag``, ``offsets``, ``cutover check``, ``cleanup``, ``validate``, ``acls plan`` ... run as a one-off task
of the stack's operator task definition (``<cluster>-operator``: the operator image, the operator task
role, its own log group), placed in the Connect service's subnets and security groups, and this process
prints what the command printed (CloudWatch Logs) and exits with its exit code.

How the command travels: the command line minus the ``--in-vpc`` options (and minus ``--env NAME``, which
only says which environment's stack this is) goes as the environment override ``MSK_MIGRATE_OPERATOR_ARGV``
(a JSON list) and nothing else: no flow, no record, no exported variable. The task takes its clusters, worker,
registries and secrets from the stack (:mod:`.operator_stack`) and the image's entrypoint (:mod:`.operator_entry`)
checks the request against the operator grammar (:mod:`msk_migrate.commands.operator_grammar`) before anything
runs; the same grammar is checked here first, so an option that names a cluster, URL, secret, file or S3
location outside the migration's prefixes is refused on this side (one line, exit 2) and no task starts.
The task prints the command's stderr, a marker line, then its stdout, so ``--output json`` stays one JSON
document on this side's stdout.

A first ``connectors apply`` in the VPC records the environment's clusters in the task's record directory;
the task prints that record after a second marker and this side saves it in the checkout (to be committed).

The ``--in-vpc`` options are taken off the command line before click parses it (:func:`split_argv`), so
every command gets them without declaring them; ``preflight`` keeps its own ``--in-vpc`` (it runs with the
Connect task role, to check exactly what the workers will see).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UsageError
from .operator_entry import IN_TASK_RECORDS, RECORD_MARKER, RUNBOOK_COMMANDS, STDOUT_MARKER
from .operator_stack import Prefixes
from .task_view import ARGV_ENV

__all__ = ["ARGV_ENV", "IN_TASK_RECORDS", "RECORD_MARKER", "STDOUT_MARKER"]

DEFAULT_CONTAINER = "operator"

#: The options ``--in-vpc`` adds to every command (name -> takes a value).
IN_VPC_OPTIONS: dict[str, bool] = {
    "--in-vpc": False,
    "--ecs-cluster": True,
    "--ecs-service": True,
    "--task-definition": True,
    "--task-container": True,
    "--task-timeout": True,
    "--aws-region": True,
}
#: Commands with their own ``--in-vpc`` (left to click).
OWN_IN_VPC = ("preflight",)


@dataclass
class InVpcRequest:
    """An operator command to run in the VPC, and where."""

    argv: list[str]  #: the command line without the --in-vpc options
    ecs_cluster: str | None = None
    ecs_service: str | None = None
    task_definition: str | None = None
    container: str = DEFAULT_CONTAINER
    timeout: float = 900.0
    region: str | None = None
    environment: dict[str, str] = field(default_factory=dict)


def wants_in_vpc(argv: list[str]) -> bool:
    """True when ``--in-vpc`` is on the command line of a command without its own ``--in-vpc``."""
    if "--in-vpc" not in argv:
        return False
    words = [a for a in argv if not a.startswith("-")]
    return not (words and words[0] in OWN_IN_VPC)


def split_argv(argv: list[str]) -> InVpcRequest:
    """Take the --in-vpc options (``--opt value`` or ``--opt=value``) off ``argv``."""
    rest: list[str] = []
    values: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        if name in IN_VPC_OPTIONS:
            if IN_VPC_OPTIONS[name]:
                if eq:
                    values[name] = inline
                elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    values[name] = argv[i + 1]
                    i += 1
                else:
                    raise UsageError(name, "needs a value", f"pass {name} VALUE")
            i += 1
            continue
        rest.append(arg)
        i += 1
    req = InVpcRequest(argv=rest, ecs_cluster=values.get("--ecs-cluster"), ecs_service=values.get("--ecs-service"),
                       task_definition=values.get("--task-definition"),
                       container=values.get("--task-container", DEFAULT_CONTAINER), region=values.get("--aws-region"))
    if "--task-timeout" in values:
        try:
            req.timeout = float(values["--task-timeout"])
        except ValueError:
            raise UsageError("--task-timeout", f"{values['--task-timeout']!r} is not a number of seconds", "pass e.g. --task-timeout 900") from None
        if not 30 <= req.timeout <= 3600:
            raise UsageError("--task-timeout", f"{req.timeout:g} s is outside 30..3600", "pass a timeout between 30 and 3600 seconds")
    return req


#: The grammar (msk_migrate.commands.operator_grammar.check_request), passed in by the command line.
Check = Callable[[list[str], "Prefixes | None"], object]


def _environment_option(argv: list[str]) -> tuple[list[str], str | None]:
    """(``argv`` without ``--env NAME``, NAME or None): the environment names the stack; its flow is the stack's."""
    rest: list[str] = []
    env = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--env" and i + 1 < len(argv):
            env = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--env="):
            env = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return rest, env


def _prefixes_of(env: str | None) -> Prefixes | None:
    """The migration's S3 prefixes of ``--env NAME`` (checked here too), or None without one."""
    if not env:
        return None
    from ..config.environment import load_environment
    from ..config.environment_files import environment_path

    cfg = load_environment(environment_path(env))
    return Prefixes.of(cfg.config_bucket_name, cfg.migration.name)


def prepare(req: InVpcRequest, check: Check) -> dict[str, str]:
    """The task's environment overrides for ``req``: the request alone, checked by the operator grammar first."""
    from .operator_stack import RequestRefused

    if not req.ecs_cluster:
        raise UsageError("--ecs-cluster", "required with --in-vpc", "pass the stack output ecs_cluster_name")
    words, env = _environment_option(list(req.argv))
    commands = [a for a in words if not a.startswith("-")]
    if not commands:
        raise UsageError("--in-vpc", "no command to run", "put --in-vpc after an operator command, e.g. msk-migrate lag --env dev --in-vpc ...")
    if commands[0] not in RUNBOOK_COMMANDS:
        raise UsageError("--in-vpc", f"{commands[0]} is not a runbook command the operator task runs",
                         f"run one of {', '.join(RUNBOOK_COMMANDS)} with --in-vpc")
    try:
        check(words, _prefixes_of(env))
    except RequestRefused as exc:
        raise UsageError(exc.field, f"{exc.message} (with --in-vpc)", exc.fix) from None
    return {ARGV_ENV: json.dumps(words)}


def split_output(lines: list[str]) -> tuple[list[str], list[str]]:
    """(stderr lines, stdout lines) of the command from the task's log lines."""
    if STDOUT_MARKER not in lines:
        return lines, []
    at = len(lines) - 1 - lines[::-1].index(STDOUT_MARKER)
    return lines[:at], lines[at + 1:]


def split_record(err: list[str]) -> tuple[list[str], dict | None]:
    """(the command's stderr lines, the environment's record the task printed after them, or None)."""
    if RECORD_MARKER not in err:
        return err, None
    at = len(err) - 1 - err[::-1].index(RECORD_MARKER)
    try:
        rec = json.loads("\n".join(err[at + 1:]))
    except ValueError:
        return err[:at], None
    return err[:at], rec if isinstance(rec, dict) else None


def bring_back_record(rec: dict | None) -> str | None:
    """Save the record a first apply wrote in the task into this checkout (never over an existing one);
    the line to print, or None."""
    from ..config.recorded import adopt_record

    if not rec or not isinstance(rec.get("environment"), str):
        return None
    path = adopt_record(rec["environment"], rec)
    return f"recorded environment {rec['environment']}'s clusters in {path}: commit it" if path else None


def require_task_definition(ecs, task_definition: str) -> None:
    """The task definition must exist before anything starts (the operator task of the stack)."""
    try:
        ecs.describe_task_definition(taskDefinition=task_definition)
    except ecs.exceptions.ClientException:
        raise UsageError("--task-definition", f"no task definition {task_definition!r}",
                         "deploy the stack (it creates <cluster>-operator) or pass --task-definition NAME") from None


def run_request(req: InVpcRequest, check: Check, *, clients=None, poll: float = 5.0, on_status=None, on_checked=None):
    """Check, start, wait, collect: ``(TaskResult, stderr lines, stdout lines)``. ``on_checked`` is called
    once every input is checked, before the task starts."""
    import boto3

    from .ecs_task import run_in_vpc

    env = prepare(req, check)
    ecs, logs = clients or (boto3.client("ecs", region_name=req.region), boto3.client("logs", region_name=req.region))
    assert req.ecs_cluster
    task_definition = req.task_definition or f"{req.ecs_cluster}-operator"
    require_task_definition(ecs, task_definition)
    if on_checked:
        on_checked()
    result = run_in_vpc(
        ecs, logs,
        cluster=req.ecs_cluster,
        service=req.ecs_service or f"{req.ecs_cluster}-kafka-connect",
        task_definition=task_definition,
        container=req.container,
        environment=env,
        timeout=req.timeout,
        poll=poll,
        on_status=on_status,
    )
    err, out = split_output(result.log_lines)
    return result, err, out


def main_in_vpc(argv: list[str], check: Check) -> int:
    """Run ``argv`` (a full msk-migrate command line with --in-vpc) in the VPC; print its output; its exit code.

    The task's status goes to stderr; the command's stdout to stdout. Exit 2 when no result came back."""
    from ..cliutil import err_console

    req = split_argv(argv)

    def announce() -> None:
        err_console.print(f"running `msk-migrate {' '.join(req.argv)}` in ECS cluster {req.ecs_cluster} "
                          "(operator task: Connect subnets, operator task role)", highlight=False, soft_wrap=True)

    with err_console.status("starting the operator task") as status:
        result, err, out = run_request(req, check, on_status=lambda s: status.update(f"operator task: {s.lower()}"), on_checked=announce)
    err, rec = split_record(err)
    for line in err:
        sys.stderr.write(line + "\n")
    for line in out:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    err_console.print(f"task {result.task_arn}: {result.last_status}, exit code {result.exit_code}"
                      + (f" ({result.stopped_reason})" if result.stopped_reason else ""), highlight=False, soft_wrap=True)
    saved = bring_back_record(rec)
    if saved:
        err_console.print(saved, highlight=False, soft_wrap=True)
    if result.last_status != "STOPPED" or result.exit_code is None:
        return 2
    return int(result.exit_code)
