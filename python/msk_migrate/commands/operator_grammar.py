"""What a caller may ask of the operator task: a runbook command and the options that select and tune it.

The operator task runs as a role that reads every cluster, registry and REST secret of the migration. Whoever
may start it may choose the command, which topics, groups and waves it looks at, its limits and its output
format: never where it connects, which secret it presents, which file it reads or where it writes outside
the migration's own S3 prefixes. The stack owns those (:mod:`msk_migrate.aws.operator_stack`); this module is the fixed grammar
that keeps them out of a caller's request, used twice: on the laptop before a task is started (``--in-vpc``)
and in the task before anything runs (:mod:`msk_migrate.aws.operator_entry`).

Invariants:

- every option of every runbook command is classified here, either as a caller's option of a kind whose
  values are checked (:data:`CALLER_OPTIONS`) or as the stack's (:data:`STACK_OPTIONS`, refused with the
  reason); an option the table does not know is refused, so a new option is closed until someone decides;
- the check reads the words with the command's own click parser (the same spelling rules: ``--opt value``,
  ``--opt=value``, flags, arguments), and decides on what that parser matched;
- nothing here reads a file, resolves a name or opens a connection: a refusal happens before any of that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..aws.operator_entry import RUNBOOK_COMMANDS
from ..aws.operator_stack import Prefixes
from ..aws.operator_stack import RequestRefused as Refused


class Kind(Enum):
    """What a caller's option value is, and so how it is checked."""

    FLAG = "flag"  #: no value
    CHOSEN = "chosen"  #: a number or a choice: click's own type refuses anything else
    NAME = "name"  #: a topic, group, wave, subject or connector name
    TEXT = "text"  #: free text that stays inside the tool (a reason, a regex, a topic map)
    S3 = "s3"  #: an S3 location inside the migration's own prefixes


#: Options a caller may give, by kind (the same option means the same thing on every command).
CALLER_OPTIONS: dict[str, Kind] = {
    **dict.fromkeys(("--strict", "--include-worker-topics", "--yes", "--no-wait", "--producers", "--exact-only", "--dry-run",
                     "--force", "--watch", "--ledger-only", "--allow-duplicates", "--no-report", "--verbose", "--show-keys",
                     "--ignore-schemas", "--once", "--follow"), Kind.FLAG),
    **dict.fromkeys(("--output", "--timeout", "--quiet-seconds", "--max-records", "--max-age", "--max-redelivery",
                     "--max-report-age", "--max-report-age-seconds", "--interval", "--to", "--mode", "--compacted", "--isolation-level", "--sample-size",
                     "--min-partitions", "--engine", "--metadata-timeout", "--on", "--compare", "--grace-seconds",
                     "--timestamp-slack-seconds", "--from-timestamp", "--until-timestamp", "--task-timeout", "--fence"), Kind.CHOSEN),
    **dict.fromkeys(("--topic", "--group", "--wave", "--subject", "--topics"), Kind.NAME),
    **dict.fromkeys(("--reason", "--topic-regex", "--exclude-regex", "--topic-map", "--ignore-config", "--copy-marks", "--marks"), Kind.TEXT),
    **dict.fromkeys(("--from-s3", "--validation-report", "--report-dir", "--certificate", "--mark"), Kind.S3),
}

_ENDPOINT = "the operator task takes its clusters, worker, registries and secrets from the stack"
_FILE = "a file names what the task reads or writes; the task reads only the stack's and writes only the migration's S3 prefixes"
#: Options only the stack gives (the entrypoint fills in what the command needs), each with its reason.
STACK_OPTIONS: dict[str, str] = {
    **dict.fromkeys(("--env", "--config", "--with-env", "--with-config", "--clusters"), "the flow is the stack's own environment"),
    **dict.fromkeys(("--local", "--local-dir"), "the local rehearsal environment is not in the VPC"),
    **dict.fromkeys(("--connect-url", "--connect-ca", "--connect-secret-arn", "--target-bootstrap", "--source-registry",
                     "--target-registry", "--source-registry-secret-arn", "--target-registry-secret-arn", "--s3-endpoint-url",
                     "--cluster-arn", "--source-bootstrap", "--source-bootstrap-servers", "--source-auth", "--source-secret-arn",
                     "--source-ca-secret-arn", "--source-scram-mechanism", "--source-scram-tls", "--target-bootstrap-servers",
                     "--target-auth", "--target-secret-arn", "--target-ca-secret-arn", "--target-scram-mechanism",
                     "--target-scram-tls", "--kafka-option"), _ENDPOINT),
    **dict.fromkeys(("--from-dir", "--dir", "--out-dir", "--out", "--offsets-snapshot", "--job-request"), _FILE),
    **dict.fromkeys(("--metrics-port", "--metrics-bind"), "the proof follower's metrics listener is the stack's service"),
    **dict.fromkeys(("--in-vpc", "--ecs-cluster", "--ecs-service", "--task-definition", "--container", "--task-container",
                     "--region", "--aws-region"),
                    "the task already runs in the VPC"),
}

#: A name the tool passes on (topic, group, wave, subject, connector): Kafka's legal topic characters plus the
#: few a consumer group or subject name commonly holds; never ``$``/``{`` (a config provider's variable syntax).
_NAME = re.compile(r"[A-Za-z0-9._:@+=-]{1,249}")
#: Names in a comma-separated list (``validate --topic a,b``; ``--topics``, its old spelling).
_NAMES = re.compile(r"[A-Za-z0-9._:@+=-]{1,249}(,[A-Za-z0-9._:@+=-]{1,249})*")
_TEXT_MAX = 1024


@dataclass(frozen=True)
class Request:
    """A caller's request the grammar admitted: the command's path (``("cutover", "check")``) and its words."""

    path: tuple[str, ...]
    words: tuple[str, ...]
    #: the command's own parameter names (``"env"``, ``"connect_url"``): which stack values it takes
    params: frozenset[str]


def check_request(words: list[str], prefixes: Prefixes | None, tree: Any) -> Request:
    """The request ``words`` (after ``msk-migrate``) as the grammar admits it, or :class:`Refused`.

    ``prefixes``: where S3 options may point; None refuses every S3 option (the laptop, which does not know
    the stack's bucket, leaves that check to the task). ``tree``: the command line (``commands.root.cli``),
    passed in by its callers: the root imports this module, never the other way round."""
    import click

    from ..clivalues import Aliased

    if not words:
        raise Refused("command", "no command", "send a runbook command, e.g. [\"lag\", \"--output\", \"json\"]")
    if words[0] not in RUNBOOK_COMMANDS:
        raise Refused("command", f"{words[0][:40]!r} is not a runbook command the operator task runs",
                      f"run one of {', '.join(RUNBOOK_COMMANDS)}")
    cmd, path, rest = _command(words, tree)
    ctx = click.Context(cmd, info_name=path[-1], resilient_parsing=True)
    parser = cmd.make_parser(ctx)
    for word in rest:  # an option the parser would not know is the grammar's to name, not click's usage text
        name = word.split("=", 1)[0]
        if name.startswith("--") and name not in parser._long_opt:
            raise Refused(name, f"is not an option of `{' '.join(path)}`", f"see `msk-migrate {' '.join(path)} --help`")
        if word.startswith("-") and not word.startswith("--"):
            raise Refused(word[:40], "short options are not taken by the operator task", "spell the option out (--name)")
    try:
        values, args, order = parser.parse_args(list(rest))
    except click.UsageError as exc:
        raise Refused(" ".join(path), exc.format_message(), f"see `msk-migrate {' '.join(path)} --help`") from None
    seen: set[str] = set()
    for param in order:
        if not isinstance(param, click.Option) or param.name in seen:
            continue
        seen.add(param.name or "")
        _check_option(param, param.parsed_value(values) if isinstance(param, Aliased) else values.get(param.name), prefixes, path)
    for param in cmd.params:
        if isinstance(param, click.Argument) and values.get(param.name) is not None:
            for value in _as_list(values.get(param.name)):
                _check_value(param.human_readable_name.upper(), Kind.NAME, value, prefixes)
    if args:
        raise Refused(" ".join(path), f"unexpected argument {str(args[0])[:40]!r}", f"see `msk-migrate {' '.join(path)} --help`")
    return Request(path, tuple(words), frozenset(p.name for p in cmd.params if p.name))


def _command(words: list[str], tree: Any):
    """(click command, its path, the words after the path) of ``words`` in ``tree``; :class:`Refused` for an
    unknown subcommand."""
    import click

    cmd: click.Command = tree.commands[words[0]]
    path = [words[0]]
    rest = words[1:]
    while isinstance(cmd, click.Group):
        if not rest or rest[0] not in cmd.commands:
            known = ", ".join(sorted(cmd.commands))
            got = repr(rest[0][:40]) if rest else "nothing"
            raise Refused(" ".join(path), f"{got} is not one of its commands", f"use one of: {known}")
        cmd = cmd.commands[rest[0]]
        path.append(rest[0])
        rest = rest[1:]
    return cmd, tuple(path), rest


def _check_option(param, value, prefixes: Prefixes | None, path: tuple[str, ...]) -> None:
    names = [o for o in param.opts if o.startswith("--")] or list(param.opts)
    name = names[0]
    stack = [n for n in names if n in STACK_OPTIONS]
    if stack:
        raise Refused(name, f"is the stack's: {STACK_OPTIONS[stack[0]]}", f"drop {name}")
    kinds = [CALLER_OPTIONS[n] for n in names if n in CALLER_OPTIONS]
    if not kinds:
        raise Refused(name, "is not an option the operator task takes", f"drop {name}, or run the command on a laptop")
    kind = kinds[0]
    if kind is Kind.FLAG:
        return
    for v in _as_list(value):
        _check_value(name, kind, v, prefixes)
        if kind is Kind.CHOSEN:
            _convert(param, v, name, path)


def _check_value(name: str, kind: Kind, value, prefixes: Prefixes | None) -> None:
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or "${" in text or len(text) > _TEXT_MAX:
        raise Refused(name, "a control character, a ${...} variable or more than 1024 characters", "give a plain value")
    if kind is Kind.NAME and not (_NAMES if name in ("--topic", "--topics") else _NAME).fullmatch(text):
        raise Refused(name, f"{text[:60]!r} is not a topic, group, wave, subject or connector name",
                      "use letters, digits and . _ - : @ + =")
    if kind is Kind.S3:
        if prefixes is None:
            if not text.startswith("s3://"):
                raise Refused(name, f"{text[:60]!r} is a local path: a file in the task is gone when it stops",
                              "give an s3:// location under the migration's prefixes in the config bucket")
            return
        if not prefixes.admits(text):
            raise Refused(name, f"{text[:80]!r} is outside the migration's own S3 prefixes", f"use one of {prefixes.describe()}")


def _convert(param, value: str, name: str, path: tuple[str, ...]) -> None:
    """A number or choice as the command's own click type reads it (its refusal is the option's)."""
    import click

    from ..errors import UsageError

    try:
        param.type.convert(value, param, None)
    except (click.BadParameter, UsageError) as exc:
        raise Refused(name, str(getattr(exc, "message", exc)), f"see `msk-migrate {' '.join(path)} --help`") from None


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def classified(option: str) -> bool:
    """True when the grammar has decided ``option`` (caller's or the stack's)."""
    return option in CALLER_OPTIONS or option in STACK_OPTIONS

