"""`msk-migrate local up | status | down`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ..cliutil import emit_json, human, output_option
from ..clivalues import Aliased
from ..local.harness import DEFAULT_DIR, LocalEnvironment
from ..local.shape import default_heap, make_shape
from ..outcome import json_document
from .options import WRITE_DIR

dir_option = click.option(
    "--local-dir", "--dir", "base_dir", cls=Aliased, hidden_aliases=["--dir"], type=click.Path(path_type=Path),
    default=DEFAULT_DIR, show_default=True,
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
        ("peer cluster", status.get("peer", {}), "bootstrap_servers"),
        ("connect (REST)", status.get("connect", {}), "url"),
        ("connect (metrics)", status.get("connect", {}), "metrics_url"),
        *((f"flow worker {k.removeprefix('flow_worker_')} ({v['source']} -> {v['target']})", v, "url")
          for k, v in status.items() if k.startswith("flow_worker_") and isinstance(v, dict)),
        ("prometheus", status.get("prometheus", {}), "url"),
        ("source schema registry", status.get("source_registry", {}), "url"),
        ("target schema registry", status.get("target_registry", {}), "url"),
    ]
    for label, part, key in rows:
        if part:
            if "brokers" in part and label.endswith("cluster"):
                label += f" ({part['mode']}, {part['brokers']} broker(s), {part['security']})"
            t.add_row(label, part[key], str(part.get("kafka_version") or ""), str(part["pid"]),
                      "[green]running[/]" if part["running"] else "[red]stopped[/]")
    for b in status.get("brokers", []):
        what = f"  {b['name']}" + (f" (id {b['id']})" if b["id"] is not None else "")
        t.add_row(what, b["endpoint"], "", str(b["pid"]), "[green]running[/]" if b["running"] else "[red]stopped[/]")
    return t


#: The parameters of :func:`shape_options`.
SHAPE_OPTIONS = ("source_kafka", "source_brokers", "target_brokers", "source_security", "broker_heap")


def shape_options(f):
    """The clusters' shape: ``local up`` and ``rehearse`` take the same options."""
    for opt in reversed([
        click.option("--source-kafka", default=None, metavar="VERSION",
                     help="Kafka version of the source: 3.9.2 (KRaft, default), 2.8.2 or 2.4.1 (ZooKeeper 3.5.9); pinned in jvm/pom.xml."),
        click.option("--source-brokers", type=int, default=1, show_default=True, help="Brokers in the source cluster."),
        click.option("--target-brokers", type=int, default=1, show_default=True,
                     help="Brokers in the target cluster (3 = MSK's shape: replication factor 3, min.insync.replicas 2)."),
        click.option("--source-security", type=click.Choice(["auto", "plaintext", "scram-tls"]), default="auto",
                     show_default=True, help="scram-tls: SCRAM-SHA-512 over TLS with the ACL authorizer on "
                     "(auto: scram-tls for a ZooKeeper-era source from 2.7, plaintext otherwise)."),
        click.option("--broker-heap", default=default_heap, show_default="384m, or MSK_MIGRATE_LOCAL_BROKER_HEAP",
                     help="JVM heap of each broker."),
    ]):
        f = opt(f)
    return f
def _document(status: dict, base_dir: Path) -> dict:
    """The JSON shape's keys for a status: what runs (one row per process), exit 0 when running."""
    talked = {"dir": str(base_dir), **{k: v["bootstrap_servers"] for k, v in status.items()
                                       if isinstance(v, dict) and "bootstrap_servers" in v},
              **{k: v["url"] for k, v in status.items() if k.endswith("_registry") and isinstance(v, dict)}}
    rows = [{"name": k, **v} for k, v in status.items() if isinstance(v, dict)]
    running = bool(status.get("running"))
    return json_document(talked, rows, "running" if running else "not-running", 0 if running else 1)


@click.group("local")
def local() -> None:
    """Local source + target Kafka clusters and a Connect/MM2 worker for rehearsals and tests."""


@local.command("up")
@click.option("--local-dir", "--dir", "base_dir", cls=Aliased, hidden_aliases=["--dir"], type=WRITE_DIR, default=DEFAULT_DIR,
              show_default=True,
              help="Where cluster data, logs and the process records live (created when missing).")
@click.option("--with-monitoring", is_flag=True, help="Also start Prometheus scraping the Connect worker.")
@click.option("--schema-registry", "schema_registry", is_flag=True,
              help="Also start one schema registry per side (Apicurio Registry, in memory; Confluent API at /apis/ccompat/v7).")
@shape_options
@click.option("--peer-brokers", type=int, default=0, show_default=True,
              help="Brokers of a third cluster, the peer (plaintext KRaft): the topology rehearsals' second source "
              "or second target. 0 = none (an existing peer is stopped and its data removed).")
@output_option
def up(base_dir: Path, with_monitoring: bool, schema_registry: bool, source_kafka: str | None, source_brokers: int, target_brokers: int,
       source_security: str, broker_heap: str, peer_brokers: int, output: str) -> None:
    """Start (or keep) the local environment. Idempotent. Without shape options an existing environment keeps
    its shape; with them it is brought to the shape asked for (a side whose cluster changes starts over, its
    data removed; a heap change restarts the brokers; the workers and Prometheus follow)."""
    ctx = click.get_current_context()
    chosen = any(ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
                 for name in (*SHAPE_OPTIONS, "peer_brokers"))
    # checked before anything starts
    shape = make_shape(source_kafka, source_brokers, target_brokers, source_security, broker_heap, peer_brokers=peer_brokers)
    con = human(output)
    with con.status("starting local environment") as spinner:
        env = LocalEnvironment(base_dir, with_monitoring=with_monitoring, progress=lambda m: spinner.update(m),
                               shape=shape if chosen else None, with_schema_registry=schema_registry)
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
