"""The operator image's entrypoint: runs one runbook command on the stack's own flow, and nothing else.

Whoever may run the operator task chooses its RunTask request; the task's role reads every cluster, registry
and REST secret of the migration, writes the ledger and assumes the cleanup role. So the right to start it
must be the right to run the runbook and nothing more. What the entrypoint does, in this order, each step
refusing with one line and exit 2 before the next:

1. **No command override.** ECS overrides replace the container's command, never its entrypoint: any
   argument here is a ``containerOverrides.command``.
2. **No variable that acts before a check** (:func:`hazards`): the image starts Python with ``-I`` (no
   ``PYTHON*`` variable, no user site, no working directory on ``sys.path``); variables that change the loader
   (the dynamic loader itself reads ``LD_*`` before any code of ours: a read-only image holds nothing of the
   caller's to load, and the variable is refused once Python runs),
   TLS trust, proxies, AWS credentials or endpoints, or name one of the tool's own settings that the stack did
   not set, are refused by name before any connection.
3. **The caller's request, by the grammar** (:mod:`msk_migrate.commands.operator_grammar`, passed in): a runbook
   command and the options that select and tune it; an option naming a cluster, URL, secret or file is refused
   on the words alone, before any connection, and an S3 location outside the migration's own prefixes once
   step 4 has made the stack's values trustworthy. The stack's own request (a service's, the proof follower's
   ``MSK_MIGRATE_STACK_ARGV``) is the stack's and runs as written.
4. **ECS says how the task was started** (:mod:`.task_view`): no override but the caller's request
   (``MSK_MIGRATE_OPERATOR_ARGV``), the stack's subnets and exactly its security groups, no public address,
   and the caller's ``aws:userid`` in the tag IAM checks. Only then are the task definition's values
   (:mod:`.operator_stack`) the stack's.
5. **Run isolated**: the command gets ``--env`` of the stack's environment and an environment built from an
   allowlist (:func:`command_environment`), never the task's own; it runs as ``python -I -m msk_migrate.commands``.

It prints the command's stderr line by line as it comes (a service's progress is in CloudWatch while it
runs), then the record a first ``connectors apply`` left (after :data:`RECORD_MARKER`), :data:`STDOUT_MARKER`
and the command's stdout, and exits with its exit code: the caller reads the task's log back in that order.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.recorded import RECORD_DIR_ENV
from ..ledger.storage import STARTED_BY_ENV  # the person the ledger names, from the task's IAM-checked tag
from .operator_stack import CONFIG_ENV, ENVIRONMENT_NAME_ENV, STACK_ARGV_ENV, STACK_NAMES, Prefixes, RequestRefused, StackIncomplete, StackSettings, string_list
from .task_view import ARGV_ENV, METADATA_ENV, Admitted, NotAdmitted, TaskView, admit, describe_self, metadata_uri

#: The runbook's commands the operator task may run (``msk-migrate <command> …``); ``local``, ``rehearse``,
#: ``build-images`` and ``topology`` are laptop commands and are refused, as is anything else.
RUNBOOK_COMMANDS = ("acls", "cleanup", "connectors", "cutover", "lag", "offsets", "preflight", "rollback", "schemas", "status",
                    "validate")
#: Where the task writes the stack's environment (the file's stem is the environment's name, as ``--env`` requires).
IN_TASK_ENV_DIR = "/tmp/msk-migrate-env"
#: The proof follower's flow file (``--config``), written from the stack's ``MSK_MIGRATE_CONFIG_YAML``.
IN_TASK_FLOW = "/tmp/msk-migrate-flow.yaml"
IN_TASK_RECORDS = "/tmp/msk-migrate-recorded"
RECORD_MARKER = "--- msk-migrate environment record ---"
STDOUT_MARKER = "--- msk-migrate stdout ---"

#: Variables ECS or the image set that a command needs as they are (credentials come from the agent's endpoint).
PASSED_ENV = ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_EXECUTION_ENV", METADATA_ENV,
              "LANG", "MSK_MIGRATE_ROOT", "MSK_MIGRATE_LOCAL_DIR")
#: The tool's own names the task may hold: the stack's, the image's, the caller's request.
_OWN_NAMES = frozenset((*STACK_NAMES, ARGV_ENV, "MSK_MIGRATE_ROOT", "MSK_MIGRATE_LOCAL_DIR"))
#: Python's variables (``PYTHON`` + letters; a base image's ``PYTHON_VERSION`` is not one) that the image itself sets,
#: with its values (ignored under -I; any other is somebody's attempt).
_IMAGE_PYTHON = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
#: Names that change what runs, what is trusted or where a connection goes, before or beneath any check.
_HAZARDS = re.compile(
    r"LD_.*|GCONV_PATH|GLIBC_TUNABLES|LOCPATH|HOSTALIASES|RES_OPTIONS|LOCALDOMAIN|NLSPATH|TZDIR"
    r"|(HTTPS?|ALL|NO|FTP)_PROXY|SSL_CERT_(FILE|DIR)|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|OPENSSL_.*"
    r"|BROWSER|KRB5.*|SASL_PATH|BOTO_.*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS",
    re.IGNORECASE,
)


class Refused(Exception):
    """A start the entrypoint does not run; the message is the one line it prints."""


#: The grammar (msk_migrate.commands.operator_grammar.check_request): the admitted request, or its Refused.
Check = Callable[[list[str], "Prefixes | None"], Any]


@dataclass(frozen=True)
class Request:
    """What runs: the words after ``msk-migrate`` and whose request they are."""

    words: list[str]
    admitted: Admitted


def hazards(environ: Mapping[str, str]) -> None:
    """:class:`Refused` naming the first variable that may act before (or beneath) the entrypoint's checks."""
    for name in sorted(environ):
        upper = name.upper()
        if _HAZARDS.fullmatch(name):
            raise Refused(f"environment variable {name}: not taken by the operator task (it changes what runs, what is "
                          "trusted or where connections go)")
        if re.fullmatch(r"PYTHON[A-Z0-9]+", upper) and _IMAGE_PYTHON.get(name) != environ[name]:  # the interpreter's own
            raise Refused(f"environment variable {name}: not taken by the operator task (its Python runs isolated)")
        if upper.startswith("AWS_") and name not in PASSED_ENV:
            raise Refused(f"environment variable {name}: not taken by the operator task (its AWS credentials and "
                          "endpoints are the task role's and AWS's own)")
        if upper.startswith("MSK_MIGRATE_") and name not in _OWN_NAMES:
            raise Refused(f"environment variable {name}: not a setting the operator task takes (the stack sets them)")
        if name == "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI" and not environ[name].startswith("/"):
            raise Refused(f"environment variable {name}: not a path on the ECS agent's credentials endpoint")


def requested_words(environ: Mapping[str, str]) -> tuple[list[str], bool]:
    """(the words to run, True when they are the caller's request); :class:`Refused` when there are none or both."""
    caller, stack = environ.get(ARGV_ENV), environ.get(STACK_ARGV_ENV)
    if caller and stack:
        raise Refused(f"{ARGV_ENV}: this task definition runs its own request ({STACK_ARGV_ENV}); it takes none")
    raw, name = (caller, ARGV_ENV) if caller else (stack, STACK_ARGV_ENV)
    if not raw:
        raise Refused(f"{ARGV_ENV} is not set: send the runbook command as a JSON list, e.g. [\"lag\", \"--output\", \"json\"]")
    try:
        return string_list(raw, name), bool(caller)
    except ValueError as exc:
        raise Refused(str(exc)) from None


def decide(argv: list[str], environ: Mapping[str, str], check: Check, describe: Callable[[], TaskView]) -> Request:
    """The request to run, or :class:`Refused` (steps 1 to 4 of the module's doc, in order)."""
    if argv:
        raise Refused("the operator task takes no command (a containerOverrides.command was given): "
                      f"send the runbook command in {ARGV_ENV}")
    hazards(environ)
    words, from_caller = requested_words(environ)
    try:
        stack = StackSettings.from_environ(environ)
    except StackIncomplete as exc:
        raise Refused(str(exc)) from None
    if from_caller:  # what the words alone show is refused before any connection
        _grammar(check, words, None)
    try:
        admitted = admit(describe(), stack)
    except NotAdmitted as exc:
        raise Refused(str(exc)) from None
    if admitted.caller_request != from_caller:
        raise Refused(f"{ARGV_ENV}: the request is not the one ECS was sent")
    if from_caller:  # the stack's values are the stack's now: S3 locations against its prefixes, its --env
        words = _checked(words, stack, check)
    return Request(words, admitted)


def _grammar(check: Check, words: list[str], prefixes: Prefixes | None):
    try:
        return check(words, prefixes)
    except RequestRefused as exc:
        raise Refused(str(exc)) from None


def _checked(words: list[str], stack: StackSettings, check: Check) -> list[str]:
    """The caller's words by the grammar, with the stack's environment as ``--env`` when the command takes one."""
    env_file = _environment_file(stack)
    req = _grammar(check, words, _prefixes(stack))
    if "env" in getattr(req, "params", ()):
        at = len(getattr(req, "path", words[:1]))  # right after the command's path: before any "--" of the caller's
        return [*words[:at], "--env", str(env_file), *words[at:]]
    return list(words)


def _environment_file(stack: StackSettings) -> Path:
    from ..config.identifiers import check_env_name

    name = stack.environment_name
    try:
        check_env_name(name or "")
    except ValueError:
        name = None
    if not stack.environment_yaml or not name:
        raise Refused(f"{ENVIRONMENT_NAME_ENV}: this task definition carries no environment of the stack")
    return Path(IN_TASK_ENV_DIR) / f"{name}.yaml"


def _prefixes(stack: StackSettings) -> Prefixes:
    """Where the caller's S3 options may point: the migration's prefixes in the stack's config bucket."""
    from ..config.environment import EnvironmentConfig
    from ..config.loader import safe_load

    try:
        cfg = EnvironmentConfig.model_validate(safe_load(stack.environment_yaml or ""))
    except ValueError as exc:
        raise Refused(f"{ENVIRONMENT_NAME_ENV}: the stack's environment does not load ({str(exc).splitlines()[0]})") from None
    return Prefixes.of(cfg.config_bucket_name, cfg.migration.name)


def command_environment(environ: Mapping[str, str], stack: StackSettings, admitted: Admitted) -> dict[str, str]:
    """The command's whole environment: an allowlist of what ECS and the image set, the stack's values, the person."""
    env = {k: environ[k] for k in PASSED_ENV if environ.get(k)}
    if env.get("AWS_REGION"):
        env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
    # botocore's STS default is the global endpoint, which the VPC's STS endpoint is not: the ledger's caller
    # identity and the cleanup role's AssumeRole go to the region's (infra/mskinfra/endpoints.py).
    env["AWS_STS_REGIONAL_ENDPOINTS"] = "regional"
    env.update(stack.command_environment())
    env.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]), HOME="/tmp",
               PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env[RECORD_DIR_ENV] = IN_TASK_RECORDS
    if admitted.started_by:
        env[STARTED_BY_ENV] = admitted.started_by
    return env


def prepare_files(stack: StackSettings, *, env_dir: str = IN_TASK_ENV_DIR, flow: str = IN_TASK_FLOW) -> None:
    """Write the stack's environment (``--env``) and a service's flow file (``--config``) where the command reads them."""
    if stack.environment_yaml and stack.environment_name:
        Path(env_dir).mkdir(parents=True, exist_ok=True)
        (Path(env_dir) / f"{stack.environment_name}.yaml").write_text(stack.environment_yaml)
    if stack.values.get(CONFIG_ENV):
        Path(flow).write_text(stack.values[CONFIG_ENV])


def default_command() -> list[str]:
    """``msk-migrate`` as the entrypoint runs it: this Python, isolated."""
    return [sys.executable, "-I", "-m", "msk_migrate.commands"]


def run(words: list[str], env: Mapping[str, str], *, command: list[str] | None = None, records: str = IN_TASK_RECORDS) -> int:
    """Run the command, print stderr / record / marker / stdout; its exit code.

    The command's stderr (its progress) reaches the task's log line by line as it is written: a service's
    long-running command (the proof follower) is read in CloudWatch while it runs, not when the task stops.
    Its stdout (the result the caller parses) is kept and printed after the markers, once it has exited."""
    proc = subprocess.Popen([*(command or default_command()), *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(env))
    out = sys.stdout
    kept: list[str] = []
    reader = threading.Thread(target=lambda: kept.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    with _passing_stop_signals_to(proc):
        assert proc.stderr is not None
        for line in proc.stderr:
            out.write(line if line.endswith("\n") else line + "\n")
            out.flush()
        reader.join()
        proc.wait()
    stdout = kept[0] if kept else ""
    recorded = sorted(Path(records).glob("*.json")) if Path(records).is_dir() else []
    if recorded:
        out.write(f"{RECORD_MARKER}\n{recorded[0].read_text()}\n")
    out.write(f"{STDOUT_MARKER}\n{stdout}")
    out.flush()
    return proc.returncode


@contextlib.contextmanager
def _passing_stop_signals_to(proc: subprocess.Popen) -> Iterator[None]:
    """SIGTERM/SIGINT to this process go on to the command: ECS stops a task (a service's, such as the proof
    follower's ``validate --follow``) with SIGTERM to the entrypoint, and the command must get it to finish its
    work (persist its mark) and exit within the stop timeout, its output still printed here."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, lambda s, _f: proc.send_signal(s)) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None, *, check: Check, describe: Callable[[], TaskView] | None = None,
         extra_env: Mapping[str, str] | None = None) -> int:
    """The entrypoint: decide, write the stack's files, run. ``check`` is the grammar; ``describe`` how ECS sees this
    task (default: the metadata endpoint and the ECS API); ``extra_env`` is added to the command's environment."""
    args = sys.argv[1:] if argv is None else argv
    environ = dict(os.environ)
    try:
        view = describe or (lambda: describe_self(metadata_uri(environ)))
        req = decide(args, environ, check, view)
        stack = StackSettings.from_environ(environ)
        if req.admitted.caller_request:
            _environment_file(stack)
        prepare_files(stack)
    except (Refused, NotAdmitted) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    env = command_environment(environ, stack, req.admitted)
    env.update(extra_env or {})
    return run(req.words, env)
