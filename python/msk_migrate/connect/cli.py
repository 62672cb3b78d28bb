"""`msk-migrate connectors render | apply | status | restart | pause | resume | delete`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.table import Table

from ..cliutil import emit_json, human, output_option
from ..errors import UsageError
from .apply import apply, status_rows
from .rest import ConnectClient, ConnectorFailed, credentials_from_secret
from .sources import from_config_file, from_dir, from_s3


def _default_url() -> str | None:
    from ..local.harness import LocalEnvironment

    st = LocalEnvironment().status()
    return st.get("connect", {}).get("url") if st.get("connect", {}).get("running") else None


_url_option = click.option(
    "--connect-url", envvar="MSK_MIGRATE_CONNECT_URL", default=None,
    help="Kafka Connect REST URL (env MSK_MIGRATE_CONNECT_URL; default: the local environment's worker).",
)


def _remember(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta[f"connect.{param.name}"] = value


def url_option(f):
    """--connect-url plus the REST credentials and CA options (kept out of each command's signature)."""
    f = click.option("--connect-ca", envvar="MSK_MIGRATE_CONNECT_CA", expose_value=False, callback=_remember,
                     help="PEM CA bundle of an HTTPS worker with a private CA (env MSK_MIGRATE_CONNECT_CA).")(f)
    f = click.option("--connect-secret-arn", envvar="MSK_MIGRATE_CONNECT_SECRET_ARN", expose_value=False,
                     callback=_remember, help="Secrets Manager secret with the REST username/password "
                     "(default: env MSK_MIGRATE_CONNECT_USER / MSK_MIGRATE_CONNECT_PASSWORD).")(f)
    return _url_option(f)


def _client(url: str | None) -> ConnectClient:
    url = url or _default_url()
    if not url:
        raise UsageError("--connect-url", "no Connect worker given and no local environment running",
                         "pass --connect-url http://HOST:8083 or run `msk-migrate local up`")
    meta = click.get_current_context().meta
    arn = meta.get("connect.connect_secret_arn")
    return ConnectClient(url, auth=credentials_from_secret(arn) if arn else None, ca=meta.get("connect.connect_ca"))


def _load(config: Path | None, directory: Path | None, s3: str | None, s3_endpoint: str | None) -> dict:
    chosen = [x for x in (config, directory, s3) if x]
    if len(chosen) != 1:
        raise UsageError("--config/--dir/--from-s3", "give exactly one source of connector configs",
                         "e.g. --from-s3 s3://BUCKET/connectors/ (the stack output connector_config_uris)")
    if config:
        return from_config_file(config)
    if directory:
        return from_dir(directory)
    return from_s3(s3, endpoint_url=s3_endpoint)


def source_options(f):
    f = click.option("--s3-endpoint-url", envvar="AWS_ENDPOINT_URL_S3", hidden=True)(f)
    f = click.option("--from-s3", "s3", help="s3://bucket/prefix/ holding the stack's rendered *.json.")(f)
    f = click.option("--dir", "directory", type=click.Path(path_type=Path), help="Directory of *.json configs.")(f)
    f = click.option("--config", "config", type=click.Path(path_type=Path), help="Migration YAML to render.")(f)
    return f


@click.group("connectors")
def connectors() -> None:
    """Render, apply and operate the MM2 connectors on a Connect worker."""


@connectors.command("render")
@source_options
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Write one <name>.json per connector.")
def render_cmd(config, directory, s3, s3_endpoint_url, out_dir) -> None:
    """Print (or write) the connector configs exactly as `apply` would send them."""
    configs = _load(config, directory, s3, s3_endpoint_url)
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, cfg in configs.items():
            (out_dir / f"{name}.json").write_text(json.dumps({"name": name, "config": cfg}, indent=2, sort_keys=True) + "\n")
    else:
        emit_json(configs)


@connectors.command("apply")
@source_options
@url_option
@click.option("--no-wait", is_flag=True, help="Do not wait for RUNNING.")
@click.option("--timeout", default=180.0, show_default=True, help="Seconds to wait for RUNNING.")
@output_option
def apply_cmd(config, directory, s3, s3_endpoint_url, connect_url, no_wait, timeout, output) -> None:
    """Validate every config with the worker, then create/update them and wait for RUNNING."""
    configs = _load(config, directory, s3, s3_endpoint_url)
    client = _client(connect_url)
    if config:  # the typed input lets us check the target before anything is applied
        from ..config.loader import load_yaml_model
        from ..config.migration_file import MigrationFile
        from ..runbook.preflight import require_replication_factors

        mf = load_yaml_model(MigrationFile, config)
        require_replication_factors(mf.target, mf.migration, mf.worker)
    con = human(output)
    try:
        with con.status("applying connectors") as sp:
            res = apply(client, configs, wait=not no_wait, timeout=timeout, progress=sp.update)
    except ConnectorFailed as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    data = {"created": res.created, "updated": res.updated, "unchanged": res.unchanged,
            "connectors": status_rows(client, list(configs))}
    if output == "json":
        emit_json(data)
    else:
        con.print(f"created: {res.created or '-'}  updated: {res.updated or '-'}  unchanged: {res.unchanged or '-'}")
        con.print(_status_table(data["connectors"]))


def _status_table(rows: list[dict]) -> Table:
    t = Table(title="connectors")
    for col in ("name", "state", "tasks", "failure"):
        t.add_column(col)
    for r in rows:
        colour = "green" if r["state"] == "RUNNING" and not r["tasks_failed"] else "red"
        t.add_row(r["name"], f"[{colour}]{r['state']}[/]", f"{r['tasks_running']}/{r['tasks']} running", r["failure"] or "")
    return t


@connectors.command("status")
@url_option
@click.argument("names", nargs=-1)
@output_option
def status_cmd(connect_url, names, output) -> None:
    """Connector and task states; exit 1 if anything is FAILED."""
    rows = status_rows(_client(connect_url), list(names) or None)
    if output == "json":
        emit_json(rows)
    else:
        human(output).print(_status_table(rows))
    if any(r["state"] == "FAILED" or r["tasks_failed"] for r in rows):
        sys.exit(1)


def _simple(action: str, help_text: str):
    @connectors.command(action, help=help_text)
    @url_option
    @click.argument("names", nargs=-1, required=True)
    @output_option
    def _cmd(connect_url, names, output) -> None:
        client = _client(connect_url)
        done = []
        for name in names:
            if action == "restart":
                client.restart(name, only_failed=True)
            else:
                getattr(client, action)(name)
            done.append(name)
        if output == "json":
            emit_json({action: done})
        else:
            human(output).print(f"{action}: {', '.join(done)}")

    return _cmd


_simple("restart", "Restart the failed connector instances and tasks only.")
_simple("pause", "Pause connectors (replication stops, offsets kept).")
_simple("resume", "Resume paused connectors.")
_simple("delete", "Delete connectors (their offsets stay in the Connect offsets topic).")
