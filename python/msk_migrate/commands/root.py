"""The ``msk-migrate`` command line. Each command group lives beside the code it drives."""

from __future__ import annotations

import click

from .. import __version__
from ..cliutil import run_click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="msk-migrate")
def cli() -> None:
    """Migrate self-managed Kafka to Amazon MSK with MirrorMaker 2 on ECS Fargate.

    Any operator command takes --in-vpc --ecs-cluster NAME [--ecs-service, --task-definition, --task-container,
    --task-timeout, --aws-region]: it then runs as a one-off ECS task of the stack's operator task definition
    inside the VPC, and its output and exit code come back here."""


def grammar(words: list[str], prefixes):
    """The operator grammar (:func:`.operator_grammar.check_request`) over this command line."""
    from .operator_grammar import check_request

    return check_request(words, prefixes, cli)


def _register() -> None:
    from .acls import acls
    from .build_images import build_images_cmd
    from .connectors import connectors
    from .identity import reset_topic
    from .local import local
    from .producers import register as register_producers
    from .runbook import cleanup, cutover, lag, offsets, preflight, rehearse, rollback
    from .schemas import schemas
    from .status import status
    from .topology import topology
    from .validate import validate

    connectors.add_command(reset_topic)  # beside apply: the fix for a recreated source topic

    for cmd in (acls, local, connectors, preflight, offsets, lag, cutover, rollback, cleanup, status, rehearse, validate,
                build_images_cmd, schemas, topology):
        cli.add_command(cmd)
    register_producers(cutover)  # cutover fence|unfence|run|confirm|abort|abandon-group


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input and unreachable endpoints become one line on stderr and exit 2.

    ``--in-vpc`` on any operator command (but preflight, which has its own) runs that command as a
    one-off ECS task inside the VPC (:mod:`msk_migrate.aws.operator_task`)."""
    import sys

    from ..aws.operator_task import wants_in_vpc

    args = list(sys.argv[1:] if argv is None else argv)
    if wants_in_vpc(args):
        from ..aws.operator_task import main_in_vpc
        from ..cliutil import command_path, emit_json, error_document, json_requested, run_guarded

        def document(code: int, line: str) -> None:  # --output json: the error's document, as run_cli prints it
            emit_json(error_document(command_path(cli, args, "msk-migrate"), code, line))

        sys.exit(run_guarded(lambda: main_in_vpc(args, grammar), document if json_requested(args) else None))
    run_click(cli, argv, "msk-migrate")


if __name__ == "__main__":
    main()
