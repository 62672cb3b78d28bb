"""Runbook commands: `preflight`, `offsets`, `rehearse`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from ..aws.preflight_task import in_vpc_options
from ..cliutil import emit_json, human, output_option
from ..config.loader import load_yaml_model
from ..config.migration_file import MigrationFile

config_option = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), required=True,
    help="Migration YAML (source, target, migration); secrets come from MM2_* env vars or Secrets Manager.",
)


@click.command("preflight")
@config_option
@output_option
@in_vpc_options
def preflight(config_path: Path, output: str, in_vpc_opts: dict) -> None:
    """Check both clusters before replication: reachability, topics, partitions, RF, groups. Exit 1 on a failed check."""
    from .preflight import run_preflight

    mf = load_yaml_model(MigrationFile, config_path)
    con = human(output)
    if in_vpc_opts.pop("in_vpc"):
        from ..aws.preflight_task import print_in_vpc

        sys.exit(print_in_vpc(config_path, con, output, **in_vpc_opts))
    with con.status("running preflight checks"):
        rep = run_preflight(mf.source, mf.target, mf.migration, mf.worker)
    if output == "json":
        emit_json(rep.to_dict())
    else:
        t = Table(title="preflight")
        for c in ("check", "status", "detail"):
            t.add_column(c)
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        for c in rep.checks:
            t.add_row(c.name, f"[{colour[c.status]}]{c.status}[/]", c.detail)
        con.print(t)
    sys.exit(0 if rep.ok else 1)


def offsets_table(rows: list[dict]) -> Table:
    t = Table(title="consumer group offsets (source -> target)")
    for c in ("group", "topic", "partition", "source committed/end", "target committed/end", "re-delivery", "status"):
        t.add_column(c)
    for r in rows:
        colour = "green" if r["status"] == "ok" else "red"
        t.add_row(r["group"], r["topic"], str(r["partition"]), f"{r['source_committed']}/{r['source_end']}",
                  f"{r['target_committed']}/{r['target_end']}", str(r["redelivery"]), f"[{colour}]{r['status']}[/]")
    return t


@click.command("offsets")
@config_option
@click.option("--group", "groups", multiple=True, help="Only these groups (default: the migration's group regexes).")
@output_option
def offsets(config_path: Path, groups: tuple[str, ...], output: str) -> None:
    """Verify translated consumer-group offsets on the target: never ahead of the source. Exit 1 otherwise."""
    from .offsets import verify_offsets

    mf = load_yaml_model(MigrationFile, config_path)
    rows = [r.to_dict() for r in verify_offsets(mf.source, mf.target, mf.migration, list(groups) or None)]
    if output == "json":
        emit_json(rows)
    else:
        human(output).print(offsets_table(rows))
    sys.exit(0 if rows and all(r["status"] == "ok" for r in rows) else 1)


@click.command("rehearse")
@click.option("--no-monitoring", is_flag=True, help="Do not start Prometheus.")
@click.option("--no-validate", is_flag=True, help="Skip the Spark validation step.")
@output_option
def rehearse(no_monitoring: bool, no_validate: bool, output: str) -> None:
    """Run the local migration rehearsal end to end (clusters, MM2, offsets, validation verdict)."""
    from .rehearse import rehearse as run

    con = human(output)
    with con.status("rehearsal") as sp:
        res = run(say=sp.update, with_monitoring=not no_monitoring, validate=not no_validate)
    if output == "json":
        emit_json(res.to_dict())
        sys.exit(0 if res.ok else 1)
    t = Table(title="replicated topics")
    for c in ("source topic", "target topic", "source records", "target records", "synced configs"):
        t.add_column(c)
    for r in res.topics:
        ok = r["source_records"] == r["target_records"]
        same = r["target_topic"] == r["topic"]
        cfg = ", ".join(r["synced_configs"]) or "-"
        cfg = f"[red]differ: {r['config_differences']}[/]" if r["config_differences"] else f"[green]{cfg}[/]"
        t.add_row(r["topic"], f"[{'green' if same else 'red'}]{r['target_topic']}[/]", f"{r['source_records']:,}",
                  f"[{'green' if ok else 'red'}]{r['target_records']:,}[/]", cfg)
    con.print(t)
    con.print(offsets_table(res.offsets))
    st = res.status
    con.print(f"source  {st['source']['bootstrap_servers']} (Kafka {st['source']['kafka_version']})")
    con.print(f"target  {st['target']['bootstrap_servers']} (Kafka {st['target']['kafka_version']})")
    con.print(f"connect {st['connect']['url']}   metrics {st['connect']['metrics_url']}")
    if "prometheus" in st:
        con.print(f"prometheus {st['prometheus']['url']}")
    if res.validation:
        v = res.validation
        colour = "green" if v["verdict"] == "match" else "red"
        con.print(f"validation verdict: [{colour}]{v['verdict']}[/] ({v.get('records_compared')} records) "
                  f"report: {v.get('locations')}")
    con.print(f"timings (s): {res.seconds}")
    con.print("the environment keeps running: `msk-migrate local status`, stop it with `msk-migrate local down`")
    sys.exit(0 if res.ok else 1)
