"""Shared CLI conventions: ``--output text|json``, one-line errors with exit code 2, rich progress."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import click
from rich.console import Console

from .outcome import json_document, to_json

#: Human output goes to stderr when JSON is requested, so stdout stays machine-readable.
#: Not a terminal (a log, a pipe): wide enough that tables keep whole numbers and names.
_LOG_WIDTH = None if sys.stdout.isatty() else 160
console = Console(stderr=False, width=_LOG_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

output_option = click.option(
    "--output",
    "output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json prints one JSON document on stdout for other tools.",
)


def human(output: str) -> Console:
    """Console for progress and tables: stderr when stdout carries JSON."""
    return err_console if output == "json" else console


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


# ---- the one JSON shape ----------------------------------------------------------------------------
#: Every ``--output json`` document is an object with these keys (more keys may follow):
#: ``talked_to`` (object: role -> endpoint, {} when the command reaches nothing), ``rows`` (list of
#: objects: the command's detail), ``verdict`` (string: what the outcome means) and ``exit_code`` (int:
#: the process's exit code for it).
JSON_SHAPE = ("talked_to", "rows", "verdict", "exit_code")


def json_shape_problems(doc: Any) -> list[str]:
    """Why ``doc`` is not of :data:`JSON_SHAPE` (empty when it is)."""
    if not isinstance(doc, dict):
        return [f"the document is a {type(doc).__name__}, not an object with {', '.join(JSON_SHAPE)}"]
    out = [f"no {k!r} key" for k in JSON_SHAPE if k not in doc]
    types = {"talked_to": dict, "rows": list, "verdict": str, "exit_code": int}
    out += [f"{k!r} is a {type(doc[k]).__name__}, not a {t.__name__}" for k, t in types.items()
            if k in doc and not isinstance(doc[k], t)]
    if isinstance(doc.get("rows"), list) and not all(isinstance(r, dict) for r in doc["rows"]):
        out.append("'rows' holds items that are not objects")
    return out


def emit_json_stream(head: dict[str, Any], rows: Iterable[Any], tail: Callable[[], dict[str, Any]]) -> None:
    """Write a :data:`JSON_SHAPE` document whose ``rows`` are streamed (one row in memory at a time):
    ``head`` (with ``talked_to``) first, then ``rows``, then ``tail()`` (``verdict``, ``exit_code``:
    known only after the last row)."""
    out = sys.stdout
    out.write("{\n")
    for k, v in head.items():
        out.write(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, default=str)},\n")
    out.write('  "rows": [')
    first = True
    for r in rows:
        out.write(("\n    " if first else ",\n    ") + json.dumps(to_json(r), sort_keys=True, default=str))
        first = False
    out.write("\n  ]" if not first else "]")
    for k, v in tail().items():
        out.write(f",\n  {json.dumps(k)}: {json.dumps(v, sort_keys=True, default=str)}")
    out.write("\n}\n")
    out.flush()


#: Exit code of an error msk-migrate did not anticipate (a bug): still one line, never a traceback,
#: and distinct from 2 so tests that feed malformed input notice an input that escaped validation.
INTERNAL_ERROR = 3


def _one_line(text: str) -> str:
    """Errors are one line: the first non-empty line of a multi-line message, plus how many were cut."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return "unknown error"
    return lines[0] if len(lines) == 1 else f"{lines[0]} (+{len(lines) - 1} more lines; re-run with MSK_MIGRATE_DEBUG=1)"


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {_one_line(message)}", err=True)
    sys.exit(code)


def error_exit_code(exc: BaseException) -> tuple[int, str]:
    """The project's error contract, in one place: (exit code, one-line message) for an exception.

    2 = bad input (UsageError, click usage errors, unreadable/unwritable files), an unreachable
    endpoint (UnreachableError) or a REST error; 1 = a timeout or a failed outcome that carries
    exit_code 1; INTERNAL_ERROR = anything else (a bug) - still one line."""
    from .errors import UnreachableError, UsageError

    if isinstance(exc, click.exceptions.Abort):
        return 2, "aborted"
    if isinstance(exc, click.ClickException):
        return 2, exc.format_message()
    if isinstance(exc, UsageError | UnreachableError):
        return 2, str(exc)
    if isinstance(exc, TimeoutError):
        return 1, str(exc) or "timed out"
    code = getattr(exc, "exit_code", None)
    if isinstance(code, int):
        return code, str(exc)
    if isinstance(exc, OSError) and (exc.filename or exc.strerror):
        where = f"{exc.filename}: " if exc.filename else ""
        return 2, f"{where}{exc.strerror or exc} (fix: give a path that exists and is readable/writable)"
    if isinstance(exc, UnicodeError | ValueError) and type(exc).__module__.startswith(("json", "yaml")):
        return 2, f"malformed input: {exc}"
    return INTERNAL_ERROR, f"internal error ({type(exc).__name__}): {exc}"


#: The verdict of the JSON document an error prints (``--output json``), by exit code.
ERROR_VERDICTS = {1: "failed", 2: "bad-input", INTERNAL_ERROR: "internal-error", 130: "interrupted"}


def error_document(command: str, code: int, message: str) -> dict[str, Any]:
    """The :data:`JSON_SHAPE` document of an error caught at the boundary (``--output json``): no cluster reached
    that the command could report, no rows, the verdict of ``code`` and the one-line message as ``error``."""
    return {"command": command, **json_document({}, [], ERROR_VERDICTS.get(code, "failed"), code, error=message)}


def json_requested(argv: list[str]) -> bool:
    """``--output json`` (or ``--output=json``) among the words before a ``--``: the caller reads stdout as JSON."""
    for i, word in enumerate(argv):
        if word == "--":
            return False
        if word == "--output=json" or (word == "--output" and i + 1 < len(argv) and argv[i + 1] == "json"):
            return True
    return False


def command_path(command: click.Command, argv: list[str], prog_name: str) -> str:
    """The words that name the subcommand of ``argv`` (``cutover check``), as the outcome's ``command`` says it."""
    words: list[str] = []
    cmd: Any = command
    for word in argv:
        if not isinstance(cmd, click.Group) or word.startswith("-"):
            break
        sub = cmd.commands.get(word)
        if sub is None:
            break
        words.append(word)
        cmd = sub
    return " ".join(words) or prog_name


def run_guarded(body: Callable[[], Any], on_error: Callable[[int, str], None] | None = None) -> int:
    """The one error boundary of every entry point (click or argparse): run ``body`` and map what it
    raises through :func:`error_exit_code` to one ``error: ...`` line and an exit code. Never raises,
    never prints a traceback unless MSK_MIGRATE_DEBUG=1. ``body``'s int result is the exit code.
    ``on_error(code, line)``: also called for a caught error (``--output json``: the error's JSON document)."""
    import os

    try:
        rv = body()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        if on_error is not None:
            on_error(130, "interrupted")
        return 130
    except BaseException as exc:
        if os.environ.get("MSK_MIGRATE_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        code, message = error_exit_code(exc)
        click.echo(f"error: {_one_line(message)}", err=True)
        if on_error is not None:
            on_error(code, _one_line(message))
        return code
    # click returns ctx.exit(n)'s code (--help, --version) when not in standalone mode.
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def run_cli(command: click.Command, argv: list[str] | None, prog_name: str, obj: Any = None) -> int:
    """Run a click command behind :func:`run_guarded`; returns the exit code. With ``--output json`` among the
    words, an error caught at the boundary (bad input: exit 2, and any other) also prints its JSON document
    (:func:`error_document`, the one shape) on stdout, beside the one line on stderr."""
    words = list(sys.argv[1:] if argv is None else argv)

    def document(code: int, line: str) -> None:
        emit_json(error_document(command_path(command, words, prog_name), code, line))

    return run_guarded(lambda: command.main(args=words, prog_name=prog_name, standalone_mode=False, obj=obj),
                       document if json_requested(words) else None)


class ArgumentParser(argparse.ArgumentParser):
    """argparse for the scripts beside the CLI (infra/main.py, infra/handover.py): a bad command line
    raises :class:`~msk_migrate.errors.UsageError` (one line through :func:`run_guarded`) instead of
    printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        from .errors import UsageError

        raise UsageError(self.prog, message, f"see {self.prog} --help")


def run_click(command: click.Command, argv: list[str] | None, prog_name: str, obj: Any = None) -> NoReturn:
    """Entry points: :func:`run_cli` and exit with its code."""
    sys.exit(run_cli(command, argv, prog_name, obj))
