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

from pathlib import Path

import click

from ..cliutil import human, output_option
from ..clivalues import Checked
from ..errors import UsageError
from ..render import render
from .options import ENV, READ_FILE, SECRET_ARN

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


def registry_options(f):
    for opt in reversed([
        click.option("--env", "env", type=ENV, help="Environment (infra/environments/NAME.yaml) whose schema_registry section names the registries."),
        click.option("--config", "config", type=READ_FILE, help="Flow file whose schema_registry section names the registries."),
        click.option("--local", "local", is_flag=True, help="The local environment's registries (`msk-migrate local up --schema-registry`)."),
        click.option("--local-dir", "local_dir", type=click.Path(path_type=Path), hidden=True, envvar="MSK_MIGRATE_LOCAL_ENV_DIR"),
        click.option("--source-registry", "source_url", type=SOURCE_URL, envvar="MSK_MIGRATE_SOURCE_REGISTRY_URL",
                     help="The source registry's Confluent-compatible API URL (Apicurio: .../apis/ccompat/v7)."),
        click.option("--target-registry", "target_url", type=TARGET_URL, envvar="MSK_MIGRATE_TARGET_REGISTRY_URL",
                     help="The target registry's Confluent-compatible API URL."),
        click.option("--source-registry-secret-arn", "source_secret", envvar="MSK_MIGRATE_SOURCE_REGISTRY_SECRET_ARN", type=SECRET_ARN,
                     help="Secrets Manager secret (JSON username/password) of the source registry's basic auth."),
        click.option("--target-registry-secret-arn", "target_secret", envvar="MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN", type=SECRET_ARN,
                     help="Secrets Manager secret (JSON username/password) of the target registry's basic auth."),
        click.option("--subject", "subjects", type=SUBJECT, multiple=True,
                     help="Only these subjects (name or shell glob; repeatable). Subjects they refer to come along."),
        click.option("--to", "to", type=click.Choice(["target", "source"]), default="target", show_default=True,
                     help="The registry written: target (migration) or source (rollback: schemas registered on the target meanwhile)."),
        output_option,
    ]):
        f = opt(f)
    return f


def registry_direction(env: str | None, config: Path | None, local: bool, local_dir: Path | None, source_url: str | None,
               target_url: str | None, to: str, source_secret: str | None = None, target_secret: str | None = None):
    from ..schemas.client import RegistryClient, check_registry_url, credentials, env_tls
    from ..schemas.operations import Direction
    from .flow import local_dir as resolve_local_dir

    given = [name for name, v in (("--env", env), ("--config", config), ("--local", local)) if v]
    if len(given) > 1:
        raise UsageError("/".join(given), "give one of them", "keep one of --env, --config, --local")
    urls: dict[str, str | None] = {"source": source_url, "target": target_url}
    secrets: dict[str, tuple[str | None, str]] = {"source": (source_secret, "--source-registry-secret-arn"),
                                                  "target": (target_secret, "--target-registry-secret-arn")}
    options = {"source": "--source-registry", "target": "--target-registry"}
    if local:
        from ..local.state import StateFile

        base = resolve_local_dir(local_dir)
        found = StateFile(base).load().registries if StateFile(base).exists() else {}
        if not found:
            raise UsageError("--local", f"the local environment under {base} runs no schema registry",
                             "run `msk-migrate local up --schema-registry`")
        for role in ("source", "target"):
            if not urls[role]:
                urls[role] = found[role].url
                options[role] = "--local"
    elif env or config:
        from ..config.schema_registry import registry_section

        section = registry_section(env, config)
        where = "--env" if env else "--config"
        for role in ("source", "target"):
            if not urls[role]:
                urls[role] = check_registry_url(getattr(section, role), f"{where} (schema_registry.{role})")
                options[role] = f"{where} (schema_registry.{role})"
            if not secrets[role][0] and getattr(section, f"{role}_secret_arn"):
                secrets[role] = (getattr(section, f"{role}_secret_arn"), f"{where} (schema_registry.{role}_secret_arn)")
    for role in ("source", "target"):
        if not urls[role]:
            raise UsageError(options[role], f"no {role} registry given",
                             f"pass {options[role]} URL, --local, or --env/--config with a schema_registry section")
    tls = {role: env_tls(role) for role in ("source", "target")}
    clients = {role: RegistryClient(role, str(urls[role]), options[role], auth=credentials(role, *secrets[role]),
                                    cert=tls[role].cert, verify=tls[role].verify)
               for role in ("source", "target")}
    return Direction(clients["target"], clients["source"]) if to == "source" else Direction(clients["source"], clients["target"])


def _run(op_name: str, output: str, **kw) -> None:
    from ..schemas import operations

    subjects = tuple(kw.pop("subjects"))
    d = registry_direction(**kw)
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
