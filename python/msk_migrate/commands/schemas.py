"""``msk-migrate schemas plan | copy | verify``: the schema registry's subjects, versions and ids, copied
from the source registry to the target (or back, ``--to source``) keeping every id (docs/schemas.md).

Where the registries are (one of):
- ``--local``: the local environment's registries (``msk-migrate local up --schema-registry``);
- ``--source-registry URL --target-registry URL`` (or MSK_MIGRATE_SOURCE_REGISTRY_URL /
  MSK_MIGRATE_TARGET_REGISTRY_URL), the Confluent-compatible API of each;
- ``--env`` / ``--config``: the ``schema_registry: {source, target}`` section of the environment or flow file.
Credentials (basic auth): MSK_MIGRATE_<ROLE>_REGISTRY_USER / _PASSWORD in the environment, else the Secrets
Manager secret of ``--<role>-registry-secret-arn`` (or the section's ``<role>_secret_arn``); never in the URL.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..cliutil import human, output_option
from ..clivalues import Checked
from ..errors import UsageError
from ..render import render
from .options import ENV, READ_FILE, SECRET_ARN

if TYPE_CHECKING:
    from ..config.flow import Flow
    from ..config.schema_registry import LocalRegistries
    from ..schemas.operations import Direction
    from ..schemas.registries import Registries

SOURCE_URL = Checked("url", lambda v: _url(v, "--source-registry"), metavar="URL")
TARGET_URL = Checked("url", lambda v: _url(v, "--target-registry"), metavar="URL")


def _url(value: str, option: str) -> str:
    from ..schemas.client import check_registry_url

    return check_registry_url(value, option)


def _subject(value: str) -> str:
    if not value.strip() or any(c in value for c in "\n\r"):
        raise UsageError("--subject", f"{value!r} is not a subject name or glob", "give e.g. orders-value or 'orders-*'")
    return value.strip()


SUBJECT = Checked("subject", _subject, metavar="SUBJECT|GLOB")


def registry_endpoint_options(f):
    """The registries named on the command line: each role's Confluent-API URL and basic-auth secret (or their
    variables). One declaration for the ``schemas`` commands and the gates' "schemas in sync" (``lag``,
    ``cutover check``); values ``source_url``, ``target_url``, ``source_secret``, ``target_secret``."""
    for opt in reversed([
        click.option("--source-registry", "source_url", type=SOURCE_URL, envvar="MSK_MIGRATE_SOURCE_REGISTRY_URL",
                     help="The source registry's Confluent-compatible API URL (Apicurio: .../apis/ccompat/v7); else the "
                          "flow's schema_registry section."),
        click.option("--target-registry", "target_url", type=TARGET_URL, envvar="MSK_MIGRATE_TARGET_REGISTRY_URL",
                     help="The target registry's Confluent-compatible API URL."),
        click.option("--source-registry-secret-arn", "source_secret", envvar="MSK_MIGRATE_SOURCE_REGISTRY_SECRET_ARN", type=SECRET_ARN,
                     help="Secrets Manager secret (JSON username/password) of the source registry's basic auth."),
        click.option("--target-registry-secret-arn", "target_secret", envvar="MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN", type=SECRET_ARN,
                     help="Secrets Manager secret (JSON username/password) of the target registry's basic auth."),
    ]):
        f = opt(f)
    return f


def registry_options(f):
    for opt in reversed([
        click.option("--env", "env", type=ENV, help="Environment (infra/environments/NAME.yaml) whose schema_registry section names the registries."),
        click.option("--config", "config", type=READ_FILE, help="Flow file whose schema_registry section names the registries."),
        click.option("--local", "local", is_flag=True, help="The local environment's registries (`msk-migrate local up --schema-registry`)."),
        click.option("--local-dir", "local_dir", type=click.Path(path_type=Path), hidden=True, envvar="MSK_MIGRATE_LOCAL_ENV_DIR"),
        registry_endpoint_options,
        click.option("--subject", "subjects", type=SUBJECT, multiple=True,
                     help="Only these subjects (name or shell glob; repeatable). Subjects they refer to come along."),
        click.option("--to", "to", type=click.Choice(["target", "source"]), default="target", show_default=True,
                     help="The registry written: target (migration) or source (rollback: schemas registered on the target meanwhile)."),
        output_option,
    ]):
        f = opt(f)
    return f


def registries_from_options(options: Mapping[str, Any], required: bool = False, flow: Flow | None = None) -> Registries | None:
    """The registries of a command's options, by the one resolver (:func:`msk_migrate.schemas.registries.resolve_registries`):
    ``source_url``/``target_url`` (and ``source_secret``/``target_secret``), then the flow's own registry inputs
    (``flow``: its file's ``schema_registry`` section or its local environment's registries, read once with the
    flow); a command without a flow (``schemas``) names them by ``env``/``config`` (the file's section, read here:
    a registry command needs no cluster settings), else the ``local`` environment's (``local_dir``)."""
    from ..config.schema_registry import registry_file
    from ..schemas.registries import resolve_registries

    if flow is not None:
        file, local = flow.registry_file, flow.local_registries
    else:
        env, config = options.get("env"), options.get("config")
        file = registry_file(env, config) if env or config else None
        local = local_registries(options.get("local_dir")) if options.get("local") and file is None else None
    return resolve_registries(source_url=options.get("source_url"), target_url=options.get("target_url"),
                              source_secret=options.get("source_secret"), target_secret=options.get("target_secret"),
                              file=file, local=local, required=required, exported=exported_registry_values())


#: The variables of the registry options, by the resolver's name of the value they give.
REGISTRY_VARIABLES = {"MSK_MIGRATE_SOURCE_REGISTRY_URL": "source_url", "MSK_MIGRATE_TARGET_REGISTRY_URL": "target_url",
                      "MSK_MIGRATE_SOURCE_REGISTRY_SECRET_ARN": "source_secret",
                      "MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN": "target_secret"}


def exported_registry_values() -> dict[str, str]:
    """Which registry values of the running command came from an exported variable (resolver name -> variable),
    not from its command line: the resolver checks those against the flow's file (its rule 7)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return {}
    return {REGISTRY_VARIABLES[p.envvar]: p.envvar for p in ctx.command.params
            if isinstance(p.envvar, str) and p.envvar in REGISTRY_VARIABLES and p.name
            and ctx.get_parameter_source(p.name) == click.core.ParameterSource.ENVIRONMENT}


def local_registries(local_dir: Path | None) -> LocalRegistries:
    """The registries the local environment records (``msk-migrate local up --schema-registry``); none without one."""
    from ..local.state import StateFile
    from .flow import local_dir as resolve_local_dir
    from .flow import registries_of_state

    base = resolve_local_dir(local_dir)
    store = StateFile(base)
    if not store.exists():
        from ..config.schema_registry import LocalRegistries

        return LocalRegistries(base)
    return registries_of_state(base, store.load())


def _direction(to: str, **options: Any) -> Direction:
    """The registry read and the one written: the file's (``--env``/``--config``; one of them), else ``--local``'s
    (beside a file, ``--local`` names the local worker, as for every runbook command, and the file's registries
    are used: :func:`registries_from_options`)."""
    from ..config.flow import check_one_source
    from ..schemas.operations import Direction

    check_one_source(options.get("env"), options.get("config"))
    regs = registries_from_options(options, required=True)
    assert regs is not None  # required: bad input rather than None
    renames = subject_renames(options.get("env"), options.get("config"), rollback=to == "source")
    source, target = regs.clients()
    return Direction(target, source, renames) if to == "source" else Direction(source, target, renames)


def subject_renames(env: str | None, config: Path | None, rollback: bool) -> dict[str, str]:
    """Origin subject -> destination subject from the file's ``migration.topic_renames`` (none without a file),
    checked by the flow's own model (:class:`~msk_migrate.config.migration.MigrationSpec`) before any request."""
    if not (env or config):
        return {}
    from ..config.environment_files import environment_path
    from ..config.loader import safe_load, validate_model
    from ..config.migration import MigrationSpec
    from ..schemas.renames import subject_map

    option = "--env" if env else "--config"
    path = environment_path(env) if env else Path(str(config))
    raw = safe_load(path.read_text()) or {}  # readable YAML: the registry resolver read it first
    migration = raw.get("migration") if isinstance(raw, dict) else None
    renames = migration.get("topic_renames") if isinstance(migration, dict) else None
    if not renames:
        return {}
    spec = validate_model(MigrationSpec, {"topic_renames": renames}, prefix=f"{option}: migration.")
    return subject_map(spec.topic_renames, rollback)


def _run(op_name: str, output: str, **kw) -> None:
    from ..schemas import operations

    subjects = tuple(kw.pop("subjects"))
    d = _direction(**kw)
    op = getattr(operations, f"{op_name}_outcome")
    con = human(output)
    with con.status(f"schemas {op_name}: {d.origin.role} -> {d.destination.role}") as spinner:
        outcome = op(d, subjects, lambda m: spinner.update(m))
    render(outcome, output)


@click.group("schemas")
def schemas() -> None:
    """Schema registry migration: subjects, versions and ids copied with the ids kept (Confluent wire format)."""


@schemas.command("plan")
@registry_options
def plan(output: str, **kw) -> None:
    """What `schemas copy` would write: versions to copy, already there, conflicting; the route that keeps ids."""
    _run("plan", output, **kw)


@schemas.command("copy")
@registry_options
def copy(output: str, **kw) -> None:
    """Copy what the destination lacks, keeping every id and version, references first; refused (exit 2,
    nothing written) on a conflicting id or a destination that cannot keep ids. Idempotent."""
    _run("copy", output, **kw)


@schemas.command("verify")
@registry_options
def verify(output: str, **kw) -> None:
    """Exit 0 when every selected version is on the destination under the same id with the same schema, else 1."""
    _run("verify", output, **kw)
