"""Option values checked where click parses them: before a flow is read, a file written or a network call made.

:class:`Checked` turns any ``check(text) -> value`` (raising ``ValueError`` or
:class:`~msk_migrate.errors.UsageError`) into a click parameter type whose error is one
:class:`~msk_migrate.errors.UsageError` naming the option (``--region: ...``), so a malformed value exits 2
with one line whichever command it was given to, and the command's body only ever sees checked values.
The checks here know nothing of Kafka or AWS (those live with their facts: ``kafka.legal``,
``config.identifiers``); ``commands.options`` and ``commands.validate_options`` combine the two.

:class:`Aliased` keeps an option's old spelling working without showing it in ``--help`` (one
vocabulary across commands, no broken scripts).

Invariant: a check never creates, writes or connects to anything; it reads the local file system at most
(does the file exist, can the directory be written).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from .errors import UsageError
from .s3uri import SCHEME, split_s3_uri


def option_name(param: click.Parameter | None, ctx: click.Context | None = None) -> str:
    """How an error names ``param``: the spelling the user typed when that was a hidden alias
    (:class:`Aliased`), else its first long option (``--region``), or an argument's metavar (``REGION``)."""
    if param is None:
        return "value"
    if isinstance(param, click.Argument):
        return param.human_readable_name
    typed = ctx.meta.get(_TYPED, {}).get(param.name) if ctx is not None else None
    if typed:
        return str(typed)
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or list(param.opts) or [str(param.name)])[0]


#: ``ctx.meta`` key: parameter name -> the hidden alias the user typed for it.
_TYPED = "msk_migrate.clivalues.typed_alias"


class Checked(click.ParamType):
    """A click type whose value is ``check(text)``; a refused value is one UsageError naming the option."""

    def __init__(self, name: str, check: Callable[[str], Any], fix: str | None = None, metavar: str | None = None):
        self.name = name
        self.check = check
        self.fix = fix
        self.metavar = metavar

    def get_metavar(self, param: click.Parameter) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default that is already a value (a Path, a number)
            return value
        try:
            return self.check(value)
        except UsageError as exc:
            raise UsageError(option_name(param, ctx), exc.message, exc.fix or self.fix) from None
        except ValueError as exc:
            raise UsageError(option_name(param, ctx), str(exc), self.fix) from None


class Aliased(click.Option):
    """An option whose ``hidden_aliases`` (old spellings, kept for one release) are accepted but not shown in
    ``--help``. The old and the new spelling given together are refused (one line naming both, exit 2); a
    refused value is named by the spelling the user typed."""

    def __init__(self, *args: Any, hidden_aliases: Sequence[str] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.hidden_aliases = tuple(hidden_aliases)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, self.opts = self.opts, [o for o in self.opts if o not in self.hidden_aliases]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown

    def _alias_dest(self, alias: str) -> str:
        return f"{self.name}\0{alias}"

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        if not self.hidden_aliases or self.is_flag or self.count:
            return super().add_to_parser(parser, ctx)
        action = "append" if self.multiple else "store"
        parser.add_option(obj=self, opts=[o for o in self.opts if o not in self.hidden_aliases], dest=self.name,
                          action=action, nargs=self.nargs)
        for alias in self.hidden_aliases:
            parser.add_option(obj=self, opts=[alias], dest=self._alias_dest(alias), action=action, nargs=self.nargs)

    def parsed_value(self, opts: Any) -> Any:
        """This option's raw value in a parser's ``opts``, whichever spelling gave it (for readers of the raw
        parse, such as the operator task's grammar)."""
        values = [opts.get(d) for d in (self.name, *map(self._alias_dest, self.hidden_aliases))]
        return next((v for v in values if v is not None), None)

    def handle_parse_result(self, ctx: click.Context, opts: Any, args: list[str]) -> tuple[Any, list[str]]:
        given = [a for a in self.hidden_aliases if self._alias_dest(a) in opts]
        if given:
            opts = dict(opts)
            canonical = option_name(self)
            if (self.name in opts or len(given) > 1) and not ctx.resilient_parsing:
                spelled = ([canonical] if self.name in opts else []) + given
                raise UsageError(" and ".join(spelled), "two spellings of the same option",
                                 f"give {canonical} only; {', '.join(given)} is its old spelling")
            opts[self.name] = opts.pop(self._alias_dest(given[0]))
            ctx.meta.setdefault(_TYPED, {})[self.name] = given[0]
        return super().handle_parse_result(ctx, opts, args)


# ---- checks that know nothing of Kafka or AWS ------------------------------------------------------
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])"
HOST_PORT = re.compile(rf"(?P<host>{_HOST}):(?P<port>\d{{1,5}})")
#: S3 bucket names (general purpose buckets): 3-63 of [a-z0-9.-], starting and ending with a letter or digit.
BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def check_host_port(value: str) -> str:
    m = HOST_PORT.fullmatch(value.strip())
    if not m:
        raise ValueError(f"{value.strip()!r} is not host:port")
    if not 0 < int(m["port"]) < 65536:
        raise ValueError(f"port {m['port']} of {value.strip()!r} is outside 1..65535")
    return value.strip()


def check_host_ports(value: str) -> str:
    """``host:port[,host:port...]``, no empty item."""
    parts = [p.strip() for p in value.split(",")]
    if not value.strip() or any(not p for p in parts):
        raise ValueError(f"{value!r} is not a host:port[,host:port...] list (an empty item)")
    return ",".join(check_host_port(p) for p in parts)


def check_regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
    return value


def check_key_value(value: str) -> tuple[str, str]:
    """``KEY=VALUE`` with a non-empty key and value (spaces around either are dropped)."""
    key, sep, val = value.partition("=")
    if not sep or not key.strip() or not val.strip():
        raise ValueError(f"{value!r} is not KEY=VALUE")
    return key.strip(), val.strip()


def check_s3_uri(value: str) -> str:
    """``s3://bucket[/prefix]`` with a legal bucket name."""
    bucket, _ = split_s3_uri(value, "value")
    if not BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ValueError(f"{bucket!r} in {value!r} is not an S3 bucket name (3-63 of a-z, 0-9, '.', '-')")
    return value


def _existing_ancestor(path: Path) -> Path:
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_writable(value: str, kind: str = "path") -> Path:
    """A local file (``kind="file"``), directory (``"dir"``) or either (``"path"``) this process could create
    or replace: the nearest existing ancestor is a writable directory. Nothing is created here."""
    if not value.strip():
        raise ValueError("an empty path")
    path = Path(value)
    if path.exists():
        if kind == "file" and path.is_dir():
            raise ValueError(f"{value} is a directory, not a file")
        if kind == "dir" and not path.is_dir():
            raise ValueError(f"{value} exists and is not a directory")
        if not os.access(path if path.is_dir() else path.parent, os.W_OK):
            raise ValueError(f"{value} is not writable")
        return path
    ancestor = _existing_ancestor(path)
    if not ancestor.is_dir():
        raise ValueError(f"{value} cannot be created: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"{value} cannot be created: {ancestor} is not writable")
    return path


def check_readable_file(value: str) -> Path:
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"{value} is not a file" + ("" if path.exists() else " (it does not exist)"))
    if not os.access(path, os.R_OK):
        raise ValueError(f"{value} is not readable")
    return path


def check_write_location(value: str) -> str:
    """A directory (or file) to write to, or ``s3://bucket/prefix``."""
    if "://" in value or value.startswith("s3:"):  # no other scheme: http(s)://, file:// are refused here
        return check_s3_uri(value)
    check_writable(value)
    return value


def check_read_location(value: str) -> str:
    """A file or directory that exists, or ``s3://bucket/key-or-prefix``."""
    if "://" in value or value.startswith("s3:"):
        return check_s3_uri(value)
    if not Path(value).exists():
        raise ValueError(f"{value} does not exist (a file, a directory or {SCHEME}BUCKET/PREFIX)")
    return value
