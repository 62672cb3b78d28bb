"""`msk-migrate local up | status | down`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ..cliutil import emit_json, human, json_document, output_option
from .harness import DEFAULT_DIR, LocalEnvironment

dir_option = click.option(
    "--dir", "base_dir", type=click.Path(path_type=Path), default=DEFAULT_DIR, show_default=True,
    help="Where cluster data, logs and the process records live.",
)


def _table(status: dict) -> Table:
    t = Table(title="local environment")
    t.add_column("component")
    t.add_column("endpoint")
    t.add_column("version")
    t.add_column("pid")
    t.add_column("state")
    rows = [
        ("source cluster", status.get("source", {}), "bootstrap_servers"),
        ("target cluster", status.get("target", {}), "bootstrap_servers"),
        ("connect (REST)", status.get("connect", {}), "url"),
        ("connect (metrics)", status.get("connect", {}), "metrics_url"),
        ("prometheus", status.get("prometheus", {}), "url"),
    ]
    for label, part, key in rows:
        if part:
            t.add_row(label, part[key], str(part.get("kafka_version") or ""), str(part["pid"]),
                      "[green]running[/]" if part["running"] else "[red]stopped[/]")
    return t


def _document(status: dict, base_dir: Path) -> dict:
    """The JSON shape's keys for a status: what runs (one row per process), exit 0 when running."""
    talked = {"dir": str(base_dir), **{k: v["bootstrap_servers"] for k, v in status.items()
                                       if isinstance(v, dict) and "bootstrap_servers" in v}}
    rows = [{"name": k, **v} for k, v in status.items() if isinstance(v, dict)]
    running = bool(status.get("running"))
    return json_document(talked, rows, "running" if running else "not-running", 0 if running else 1)


@click.group("local")
def local() -> None:
    """Local source + target Kafka clusters and a Connect/MM2 worker for rehearsals and tests."""


@local.command("up")
@dir_option
@click.option("--with-monitoring", is_flag=True, help="Also start Prometheus scraping the Connect worker.")
@output_option
def up(base_dir: Path, with_monitoring: bool, output: str) -> None:
    """Start (or keep) the local environment. Idempotent."""
    con = human(output)
    with con.status("starting local environment") as spinner:
        env = LocalEnvironment(base_dir, with_monitoring=with_monitoring, progress=lambda m: spinner.update(m))
        status = env.up()
    if output == "json":
        emit_json({**status, **_document(status, base_dir)})
    else:
        con.print(_table(status))


@local.command("status")
@dir_option
@output_option
def status_cmd(base_dir: Path, output: str) -> None:
    """Print bootstrap servers, the Connect REST URL and the metrics URL."""
    status = LocalEnvironment(base_dir).status()
    if output == "json":
        emit_json({**status, **_document(status, base_dir)})
    else:
        human(output).print(_table(status))
    if not status["running"]:
        raise SystemExit(1)


@local.command("down")
@dir_option
@click.option("--wipe", is_flag=True, help="Also delete the clusters' data.")
@output_option
def down(base_dir: Path, wipe: bool, output: str) -> None:
    """Stop only what `local up` started."""
    stopped = LocalEnvironment(base_dir).down(wipe=wipe)
    if output == "json":
        emit_json({"stopped": stopped, **json_document({"dir": str(base_dir)}, [{"stopped": n} for n in stopped], "stopped", 0)})
    else:
        human(output).print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
