"""Runbook commands: preflight, lag, offsets verify|sync|snapshot, cutover check, rollback plan|apply, cleanup, rehearse.

Each command declares its options, opens ONE session of its flow (``--env``, ``--config`` or ``--local``;
:func:`.flow.session_from_kwargs`, which states the clusters and worker), calls ONE operation of
``runbook/`` that returns an :class:`~msk_migrate.outcome.Outcome`, and hands it to
:func:`msk_migrate.render.render`, the one place that prints (table or ``--output json``) and exits:
0 ok / in sync / ready, 1 not yet, 2 bad input or unreachable (one line, nothing changed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..aws.preflight_task import in_vpc_options
from ..cliutil import human, output_option
from ..errors import UsageError
from ..render import progress, render, watch
from .flow import announce, flow_from_kwargs, flow_options
from .local import shape_options  # the rehearsal takes `local up`'s shape options
from .options import GROUP, READ_LOCATION, TOPIC, WRITE_FILE, WRITE_LOCATION, in_seconds
from .topology import other_flows, with_flows_options
from .waves import check_wave, nothing_in_wave, open_in_wave, session_in_wave, wave_option

if TYPE_CHECKING:
    from ..config.flow import Flow

_GROUPS = click.option("--group", "groups", multiple=True, type=GROUP, help="Only these groups (default: the migration's group regexes).")


# ---- preflight -------------------------------------------------------------------------------------
def _preflight_in_vpc(kw: dict, in_vpc_opts: dict, output: str) -> None:
    """--in-vpc: the same preflight as a one-off ECS task (the Connect service's network and task role) on the
    stack's own environment: the task takes its clusters, worker and secrets from the stack, never from here."""
    from ..aws.preflight_task import print_in_vpc

    for option, key in (("--config", "config"), ("--local", "local"), ("--target-bootstrap", "target_bootstrap"),
                        ("--connect-url", "connect_url")):
        if kw.get(key):
            raise UsageError(option, "the in-VPC preflight checks the stack's own environment",
                             f"drop {option} (the task reads the stack's clusters and worker)")
    sys.exit(print_in_vpc(human(output), output, **in_vpc_opts))


@click.command("preflight")
@flow_options
@with_flows_options
@wave_option
@output_option
@in_vpc_options
def preflight(output: str, in_vpc_opts: dict, with_envs: tuple[str, ...], with_configs: tuple[str, ...], wave: str | None,
              **kw) -> None:
    """Check the clusters before replication: reachability, topics, partitions, RF, groups; with --with-env/
    --with-config, no collision with the other migrations into the same target. Before deploy
    (no target bootstrap yet) only the source side is checked. Exit 1 on a failed check, 2 when MM2's user
    lacks a source ACL (the line names it and the grant). --wave checks that wave's topics and the groups that
    move with it. --in-vpc runs the same preflight as a one-off ECS task with the Connect service's network and
    task role."""
    from ..runbook.preflight import preflight as run
    from ..runbook.session import open_session

    if in_vpc_opts.pop("in_vpc"):
        if with_envs or with_configs:
            raise UsageError("--with-env/--with-config", "the in-VPC task reads one flow",
                             "run `msk-migrate topology check` for the migrations together")
        _preflight_in_vpc(kw, {**in_vpc_opts, "wave": wave}, output)
    flow = flow_from_kwargs(kw)
    check_wave(flow, wave)
    others = other_flows(flow, with_envs, with_configs)  # bad input in the configurations: refused before any connection
    announce(flow, output)
    s = open_session(flow, target="if given")
    with progress(output, "running preflight checks") as say:
        outcome = run(s, say, others, wave)
    render(outcome, output)


# ---- offsets -------------------------------------------------------------------------------------
def _verify(output: str, groups: tuple[str, ...], wave: str | None, kw: dict) -> None:
    from ..runbook.group_offsets import offsets_verify

    s, scope = session_in_wave(kw, output, wave)
    if scope is None:
        render(offsets_verify(s, list(groups) or None), output)
        return
    chosen = scope.narrow(groups, "--group", "group")
    render(offsets_verify(s, chosen) if chosen else nothing_in_wave("offsets verify", s, scope, "consumer group"), output)


@click.group("offsets", invoke_without_command=True)
@flow_options
@_GROUPS
@wave_option
@output_option
@click.pass_context
def offsets(ctx: click.Context, groups: tuple[str, ...], wave: str | None, output: str, **kw) -> None:
    """Consumer-group offsets on the target (`offsets` alone = `offsets verify`)."""
    if ctx.invoked_subcommand is None:
        _verify(output, groups, wave, kw)


@offsets.command("verify")
@flow_options
@_GROUPS
@wave_option
@output_option
def offsets_verify(groups: tuple[str, ...], wave: str | None, output: str, **kw) -> None:
    """Translated offsets never ahead of the source (exit 1 otherwise), with the re-delivery per partition;
    --wave: the groups that move with the wave."""
    _verify(output, groups, wave, kw)


@offsets.command("sync")
@flow_options
@click.option("--group", type=GROUP, help="The stopped consumer group to move now. Without it, --wave W moves every group "
              "of the wave: to the target those not moved yet, back to the source those the ledger has on the target.")
@click.option("--to", "to", type=click.Choice(["target", "source"]), default="target", show_default=True,
              help="target: cutover (source commits placed on the target); source: rollback after reverse replication.")
@click.option("--exact-only", is_flag=True, help="Refuse (exit 2, nothing written) unless every partition is proven exact.")
@click.option("--dry-run", is_flag=True, help="Show the placement and its proof; write nothing.")
@click.option("--force", is_flag=True, help="Also move offsets backwards where the group is already further on that cluster.")
@click.option("--certificate", "certificate", type=WRITE_LOCATION, help="Write the proof (JSON + HTML) to this path, directory or s3://bucket/prefix.")
@wave_option
@output_option
def offsets_sync(group: str | None, to: str, exact_only: bool, dry_run: bool, force: bool, certificate: str | None,
                 wave: str | None, output: str, **kw) -> None:
    """Place a stopped group on the other cluster exactly: per partition, the offset of the first record after
    its commit point, found by content (docs/design.md, exact offset translation). Unproven partitions fall
    back to MM2's checkpoint and say why (--exact-only refuses instead). The ledger records the group
    consumers-moved (--to target) or rolled-back (--to source). Exit 0 every partition exact, 1 some placed on
    the checkpoint or left, 2 bad input (nothing written)."""
    from ..ledger import ledger_for
    from ..offset_translation.request import SyncRequest
    from ..runbook.group_moves import move_groups, wave_groups_to_move
    from .sync_outcome import group_outcome, wave_outcome

    if group is None and wave is None:
        raise UsageError("--group", "no group to move", "name the stopped group (--group G), or move every group of a wave (--wave W)")
    if group is None and certificate is not None and certificate.endswith(".json"):
        raise UsageError("--certificate", f"{certificate} names one file, and every group of the wave writes its own certificate",
                         "pass a directory or s3://bucket/prefix/")
    request = SyncRequest(group or "(wave)", "source" if to == "source" else "target", exact_only, dry_run, force, certificate)
    s, scope = session_in_wave(kw, output, wave, why="offsets sync")
    ledger = ledger_for(s.flow)
    if group is not None:
        if scope is not None:
            scope.narrow([group], "--group", "group")  # the group must move with the wave
        with progress(output, f"placing {group} on the {to} by content") as say:
            (res,) = move_groups(s, ledger, [group], request, wave, say)
        o = group_outcome(res, s.talked_to())
        if not dry_run:
            o.notes.append(f"recorded in the ledger {ledger.location}: {group} {'consumers-moved' if to == 'target' else 'rolled-back'}")
        render(o, output)
        return
    assert scope is not None and wave is not None
    groups = wave_groups_to_move(ledger.read(), wave, scope.groups, request.to)
    with progress(output, f"placing {len(groups)} group(s) of wave {wave} on the {to} by content") as say:
        results = move_groups(s, ledger, groups, request, wave, say)
    render(wave_outcome(results, s.talked_to(), wave, request.to, ledger), output)


@offsets.command("snapshot")
@flow_options
@click.option("--out", "out", type=WRITE_FILE, required=True,
              help="Where to write {topic: {partition: end offset}} (the input of `validate --offsets-snapshot`).")
@click.option("--topic", "topics", multiple=True, type=TOPIC, help="Only these source topics (default: the migration's).")
@wave_option
@output_option
def offsets_snapshot(out: Path, topics: tuple[str, ...], wave: str | None, output: str, **kw) -> None:
    """Snapshot the source's last stable offsets of the migrated topics (take it after producers stopped);
    --wave: the wave's topics."""
    from ..runbook.snapshot import snapshot

    s, scope = session_in_wave(kw, output, wave, target="no")
    render(snapshot(s, out, scope.narrow(topics, "--topic", "topic") if scope else (list(topics) or None)), output)


def registry_options(f):
    """The registries "schemas in sync" compares: named on the command line (URL and basic-auth secret per role,
    as the ``schemas`` commands take them), else the flow's (``schema_registry`` of --env/--config, or the local
    registries with --local); none: not checked."""
    from .schemas import registry_endpoint_options

    return registry_endpoint_options(f)


# ---- lag -------------------------------------------------------------------------------------------
@click.command("lag")
@flow_options
@click.option("--topic", "topics", multiple=True, type=TOPIC, help="Only these source topics.")
@click.option("--max-records", default=0, show_default=True, type=click.IntRange(min=0),
              help="Records a partition may be behind and still count as in sync.")
@click.option("--max-age", type=click.FloatRange(min=0), default=None,
              help="Seconds the target's newest record may trail the source's (default: not checked).")
@registry_options
@click.option("--watch", is_flag=True, help="Refresh a live table until in sync (or --timeout).")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0.5), help="Seconds between refreshes.")
@click.option("--timeout", default=0.0, show_default=True, type=click.FloatRange(min=0), help="--watch gives up after this many seconds (0 = never).")
@wave_option
@output_option
def lag(topics, max_records, max_age, watch: bool, interval, timeout, wave, output, **kw) -> None:
    """Per topic and partition: source LSO, replicated position, records behind, newest record age; with
    registries, a "schemas in sync" line for topics carrying schema'd records; --wave: the wave's topics.
    Exit 0 when every partition is within the thresholds (in sync), 1 otherwise; 2 when the worker does not
    answer, naming why when what it left says (`worker died: OutOfMemoryError (Java heap space) at …`)."""
    from ..runbook.lag import lag as run
    from .worker_down import WorkerPlace, explained

    place = WorkerPlace.of(kw)
    flow = flow_from_kwargs(kw)
    regs = _gate_registries(flow, kw)

    def measured():
        s, scope = session_in_wave(kw, output, wave, flow, worker="yes")
        chosen = scope.narrow(topics, "--topic", "topic") if scope else (list(topics) or None)

        def measure():
            return run(s, chosen, max_records, max_age, registries=regs)

        return _watch(measure, output, interval, timeout) if watch else measure()

    render(explained("lag", place, measured), output)


_watch = watch  # the option named --watch shadows the renderer's function inside `lag`


def _gate_registries(flow: Flow, kw: dict):
    """(source, target) registry clients for "schemas in sync", or None when no registry is named anywhere: the
    options (their values popped from ``kw``), else the flow's (:func:`msk_migrate.schemas.registries.resolve_registries`:
    beside --env/--config, --local is the worker only). Resolved from the flow before any connection is opened."""
    from .schemas import registries_from_options

    named = {key: kw.pop(key) for key in ("source_url", "target_url", "source_secret", "target_secret")}
    regs = registries_from_options(named, flow=flow)
    return regs.clients() if regs is not None else None


# ---- cutover ---------------------------------------------------------------------------------------
@click.group("cutover")
def cutover() -> None:
    """Decide whether consumer groups can move to the target."""


@cutover.command("check")
@flow_options
@click.option("--group", "groups", multiple=True, type=GROUP, help="Consumer group(s) about to move (required without --producers).")
@click.option("--producers", is_flag=True, help="The producer gate of --wave instead: groups moved or abandoned, none active on the "
              "source, writes stopped (fence or detection), replicated to the fenced end, snapshot validated; writes the producer certificate.")
@wave_option
@click.option("--quiet-seconds", default=10.0, show_default=True, type=click.FloatRange(min=1, max=3600),
              help="--producers: seconds without a write on the source before writes count as stopped.")
@click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(min=1, max=86400),
              help="--producers: seconds the watch may wait for the quiet period (it ends sooner at the first write past the "
                   "fenced end offsets: the answer is then known).")
@click.option("--max-records", default=0, show_default=True, type=click.IntRange(min=0), help="Lag bound per partition.")
@click.option("--max-age", type=click.FloatRange(min=0), default=None, help="Replication latency bound in seconds.")
@click.option("--max-redelivery", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Records a moved group may see again, per partition.")
@click.option("--validation-report", "report", type=READ_LOCATION, help="report.json (or its directory / s3:// prefix) of `msk-migrate validate`.")
@click.option("--max-report-age-seconds", "max_report_age_seconds", default=None, type=click.FloatRange(min=0),
              help="Seconds since the validation finished (default: 3600).")
@click.option("--max-report-age", "max_report_age_minutes", default=None, type=click.FloatRange(min=0), hidden=True,
              help="Old spelling, in minutes (one release): --max-report-age-seconds.")
@click.option("--certificate", "certificate", type=READ_LOCATION, help="Also require the offset certificate of `offsets sync` (path, directory or s3://).")
@registry_options
@output_option
def cutover_check_cmd(groups, producers, wave, quiet_seconds, timeout, max_records, max_age, max_redelivery, report,
                      max_report_age_seconds, max_report_age_minutes, certificate, output, **kw) -> None:
    """One readiness gate: connectors and tasks RUNNING, lag within bounds, translated offsets never ahead
    and re-delivery bounded, group inactive on the target, a fresh matching validation report; with registries
    (options, the flow's schema_registry section, or --local's), "schemas in sync" for groups reading schema'd topics.
    --producers: the producer gate of --wave (docs/runbooks/migration.md, step 11); it names the producers (ids, epochs,
    last timestamp) of every partition still written.

    Rights of the source principal (the exported operator principal, MSK_MIGRATE_SOURCE_SASL_USERNAME/_PASSWORD, when
    set; else the flow's own): --producers needs DESCRIBE on the source cluster (to read the fence's ACLs),
    DescribeConfigs and READ on the wave's topics, DESCRIBE on the groups; without DESCRIBE on the cluster it names
    the partitions still written, then exits 2 naming the principal and the grant.
    Exit 0 ready, 1 not ready (with the reasons), 2 bad input."""
    from ..runbook.cutover import Gate, cutover

    max_report_age_s = in_seconds(("--max-report-age-seconds", max_report_age_seconds),
                                  ("--max-report-age", max_report_age_minutes, 60), default=3600.0)
    if producers:
        from .producers import check_producers_cmd

        check_producers_cmd(wave, quiet_seconds, timeout, certificate, output, kw, proof_mark=report, max_mark_age_s=max_report_age_s)
    if not groups:
        raise UsageError("--group", "no consumer group given", "pass --group G (repeat), or --producers --wave W for the producer gate")
    flow = flow_from_kwargs(kw)
    regs = _gate_registries(flow, kw)
    s = open_in_wave(kw, output, wave, flow, worker="yes")
    render(cutover(s, Gate(list(groups), max_records, max_age, max_redelivery, report, max_report_age_s, certificate,
                           registries=regs)), output)


# ---- rollback --------------------------------------------------------------------------------------
@click.group("rollback")
def rollback() -> None:
    """Reverse replication target -> source for topics whose producers moved."""


_TOPICS = click.option("--topic", "topics", multiple=True, type=TOPIC,
                       help="Source topic whose producers moved (repeat; default: every topic of --wave whose producers moved, from the ledger).")


@rollback.command("plan")
@flow_options
@_TOPICS
@wave_option
@output_option
def rollback_plan(topics, wave, output, **kw) -> None:
    """Show the forward exclusion and the reverse connectors for TOPIC(s); change nothing."""
    from ..runbook.rollback import rollback_plan as run
    from .producers import rollback_topics

    s = open_in_wave(kw, output, wave, why="rollback")
    render(run(s, rollback_topics(s, list(topics), wave, applying=False)[0]), output)


@rollback.command("apply")
@flow_options
@_TOPICS
@wave_option
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(min=1), help="Seconds to wait for RUNNING.")
@output_option
def rollback_apply(topics, wave, timeout, output, **kw) -> None:
    """Stop the forward flow for TOPIC(s), then replicate them target -> source from the producers' first
    record on the target, with checkpoints for the groups that move back."""
    from ..runbook.rollback import rollback_apply as run
    from .producers import rollback_topics

    s = open_in_wave(kw, output, wave, worker="yes", why="rollback")
    chosen, record = rollback_topics(s, list(topics), wave, applying=True)  # the ledger's topics; the fence comes off first
    with progress(output, "rolling back") as say:
        outcome = run(s, chosen, timeout, say)
    if outcome.ok:
        record()
    render(outcome, output)


# ---- cleanup ---------------------------------------------------------------------------------------
@click.command("cleanup")
@flow_options
@wave_option
@click.option("--include-worker-topics", is_flag=True, help="Also the Connect worker's topics and group (after the service is gone).")
@click.option("--yes", is_flag=True, help="Delete what is listed (without it: list only).")
@output_option
def cleanup(wave: str | None, include_worker_topics: bool, yes: bool, output: str, **kw) -> None:
    """List MM2/Connect topics and groups left on the target after cutover; delete them only with --yes (the
    ledger then records the moved topics and groups cleaned-up). --wave W: exit 1 until the ledger shows W moved;
    the flow's bookkeeping is kept (and --yes refused) while another wave has not moved."""
    from ..ledger import ledger_for
    from ..runbook.cleanup import cleanup as run
    from ..runbook.cleanup import migration_progress, require_worker_to_delete, wave_progress
    from ..runbook.session import open_session
    from ..runbook.waves import plan_waves

    require_worker_to_delete(yes, kw.get("connect_url") or ("--local" if kw.get("local") else None))  # before any connection
    flow = flow_from_kwargs(kw)
    check_wave(flow, wave)
    announce(flow, output)
    s = open_session(flow, worker="if given", creating=True, why="cleanup")
    ledger = ledger_for(flow)
    view = ledger.read()
    done = wave_progress(view, plan_waves(s.source, s.migration), wave) if wave is not None else migration_progress(view)
    render(run(s, include_worker_topics, yes, ledger, done), output)


# ---- rehearse --------------------------------------------------------------------------------------
@click.command("rehearse")
@click.option("--no-monitoring", is_flag=True, help="Do not start Prometheus.")
@click.option("--no-validate", is_flag=True, help="Skip the Spark validation steps.")
@click.option("--worker", type=click.Choice(["local", "image"]), default="local", show_default=True,
              help="image: run the Connect worker from the kafka-connect image built with buildah (docs/images.md).")
@click.option("--topology", type=click.Choice(["active-passive", "consolidate", "fan-out", "active-active"]),
              default="active-passive", show_default=True,
              help="consolidate: two sources into one target; fan-out: one source into two targets (both start a third "
              "cluster, the peer); active-active: both directions at once with identical names, loop-free by copy marks "
              "(docs/topologies.md). Each migration runs on its own worker.")
@shape_options
@output_option
def rehearse(no_monitoring: bool, no_validate: bool, worker: str, topology: str, source_kafka: str | None, source_brokers: int,
             target_brokers: int, source_security: str, broker_heap: str, output: str) -> None:
    """Walk the whole runbook on local clusters and their schema registries: preflight, apply, schemas copy,
    lag, validate, cutover check, move a group (decoded on the target), move producers, reverse replication,
    schemas copy to source, roll a group back (decoded on the source), validate in reverse, cleanup.
    The shape options choose the clusters (e.g. --source-kafka 2.8.2 --source-brokers 3 --target-brokers 3)."""
    from ..local.shape import make_shape
    from ..rehearsal import rehearse as run
    from ..rehearsal.report import rehearsal_outcome

    shape = make_shape(source_kafka, source_brokers, target_brokers, source_security, broker_heap)  # before anything starts
    if topology != "active-passive":
        from ..rehearsal.topology import rehearse_topology
        from ..rehearsal.topology.report import topology_outcome

        ctx = click.get_current_context()
        moved = [f"--{n.replace('_', '-')}" for n in ("source_kafka", "source_brokers", "target_brokers", "source_security",
                                                      "worker", "no_validate")
                 if ctx.get_parameter_source(n) not in (None, click.core.ParameterSource.DEFAULT)]
        if moved:
            raise UsageError(moved[0], f"--topology {topology} rehearses on one broker per cluster with the local worker",
                             f"drop {moved[0]}, or rehearse the default topology (active-passive) with it")
        with progress(output, f"rehearsal ({topology})") as say:
            res = rehearse_topology(topology, say=say, broker_heap=broker_heap)
        render(topology_outcome(topology, res), output)
        return
    with progress(output, "rehearsal") as say:
        res = run(say=say, with_monitoring=not no_monitoring, validate=not no_validate, worker=worker, shape=shape)
    render(rehearsal_outcome(res), output)
