"""The ``msk-migrate`` command line. Each command group lives beside the code it drives."""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import UnreachableError, UsageError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="msk-migrate")
def cli() -> None:
    """Migrate self-managed Kafka to Amazon MSK with MirrorMaker 2 on ECS Fargate."""


def _register() -> None:
    from .build.cli import build_images_cmd
    from .connect.cli import connectors
    from .local.cli import local
    from .runbook.cli import offsets, preflight, rehearse
    from .validation.cli import validate

    for cmd in (local, connectors, preflight, offsets, rehearse, validate, build_images_cmd):
        cli.add_command(cmd)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input and unreachable endpoints become one line on stderr and exit 2."""
    try:
        cli.main(args=argv, prog_name="msk-migrate", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except (UsageError, UnreachableError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except SystemExit:
        raise
    except TimeoutError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except Exception as exc:  # errors that carry their own exit code (REST errors, failed connectors)
        code = getattr(exc, "exit_code", None)
        if code is None:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(code)
    sys.exit(0)


if __name__ == "__main__":
    main()
