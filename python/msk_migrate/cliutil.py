"""Shared CLI conventions: ``--output text|json``, one-line errors with exit code 2, rich progress."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console

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


def fail(message: str, code: int = 2) -> "NoReturn":  # noqa: F821
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def run_click(command: click.Command, argv: list[str] | None, prog_name: str) -> "NoReturn":  # noqa: F821
    """Run a click command with the project's error contract: one line on stderr; exit 2 for bad
    input, unreachable endpoints and REST errors, 1 for timeouts, otherwise the error's exit_code."""
    from .errors import UnreachableError, UsageError

    try:
        command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Abort:
        fail("aborted")
    except click.ClickException as exc:
        fail(exc.format_message())
    except (UsageError, UnreachableError) as exc:
        fail(str(exc))
    except SystemExit:
        raise
    except TimeoutError as exc:
        fail(str(exc), 1)
    except Exception as exc:  # errors that carry their own exit code (REST errors, failed connectors)
        code = getattr(exc, "exit_code", None)
        if code is None:
            raise
        fail(str(exc), code)
    sys.exit(0)
