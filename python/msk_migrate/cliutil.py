"""Shared CLI conventions: ``--output text|json``, one-line errors with exit code 2, rich progress."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console

#: Human output goes to stderr when JSON is requested, so stdout stays machine-readable.
console = Console(stderr=False)
err_console = Console(stderr=True)

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
