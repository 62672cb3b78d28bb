"""``msk-migrate topology check --env A --env B ... | --config F --config G ... [--offline]``: how several
migrations relate (consolidation, fan-out, active/active, forwarding) and what would make them overwrite each
other or loop (docs/topologies.md).

Each flow is read as every command reads one (:func:`msk_migrate.config.flow.read_flow`); an environment's
target is its recorded one (``connectors apply`` records it) when its YAML holds none. The operation is
:func:`msk_migrate.runbook.topology_check.topology_check`: exit 0 clean, 1 (offline) a regex overlap it cannot
decide, 2 a problem: found in the configuration before any connection (a fan-out to itself, renames onto one
name, a loop without marks, shared names) or on the clusters' actual topics or groups (a collision), one line
naming both flows and the setting that clears it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..cliutil import output_option
from ..config.flow import Flow, read_flow
from ..config.migration import ClusterEndpoint
from ..config.recorded import load_record
from ..errors import UsageError
from ..render import banner, progress, render
from ..topology.plan import FlowRef, flow_label, flow_ref
from .options import ENV, READ_FILE


def read_flows(envs: tuple[str, ...], configs: tuple[str | Path, ...], option: str = "--env/--config",
               at_least: int = 2) -> list[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None, Flow]]:
    """Every flow named, each with its planner view and endpoints; an environment without a target in its YAML
    takes its recorded one. At least ``at_least`` flows, each named once."""
    flows: list[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None, Flow]] = []
    for env in envs:
        flow = read_flow(env, None)
        assert flow is not None
        recorded = (load_record(flow.env_name) or {}).get("target_bootstrap") if flow.env_name else None
        if flow.target is None and recorded:
            flow = read_flow(env, None, recorded)
            assert flow is not None
        if flow.target is None and "target" not in flow.msk_cluster_arns:
            raise UsageError(option, f"environment {flow.env_name} names no target cluster yet (the stack creates it and "
                             "its first `connectors apply` records it)", "apply it first, or give its flow as --config FILE")
        flows.append((flow_ref(flow), flow.source, flow.target, flow))
    for cfg in configs:
        flow = read_flow(None, Path(cfg))
        assert flow is not None
        if flow.target is None:
            raise UsageError(option, f"flow file {cfg} has no target section", "add target.bootstrap_servers")
        flows.append((flow_ref(flow), flow.source, flow.target, flow))
    labels = [f.label for f, *_ in flows]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise UsageError(option, f"flow {twice[0]} is given twice", "name each migration once")
    if len(flows) < at_least:
        raise UsageError(option, f"{len(flows)} flow(s) given; the check compares flows",
                         f"give at least {at_least}: --env A --env B, or --config F --config G")
    return flows


@click.group("topology")
def topology() -> None:
    """Several migrations at once: consolidation, fan-out, active/active, forwarding (docs/topologies.md)."""


@topology.command("check")
@click.option("--env", "envs", multiple=True, type=ENV, help="An environment (name or YAML path); repeat for each flow.")
@click.option("--config", "configs", multiple=True, type=READ_FILE, help="A flow file; repeat for each flow.")
@click.option("--offline", is_flag=True, help="Compare the configuration only (exact names; no cluster is reached).")
@output_option
def topology_check_cmd(envs: tuple[str, ...], configs: tuple[str, ...], offline: bool, output: str) -> None:
    """How the flows relate (consolidation, fan-out, active/active, forwarding) and whether they collide: a topic
    or consumer group two sources both send to one target, shared connector names, Connect group or topics, MM2
    topics, renames onto one name, a target that is its own source, a topic flowing both ways without
    migration.mark_copies. Exit 0 clean, 1 a regex overlap --offline cannot decide, 2 a problem (in the
    configuration, or a collision found on the clusters), one line naming both flows and the setting to change."""
    from ..runbook.topology_check import topology_check

    flows = read_flows(envs, configs)
    for _, _, _, flow in flows:
        banner(f"{flow_label(flow)}: {flow.describe()}", output)
    origins = {ref.label: flow.origin for ref, _, _, flow in flows}
    with progress(output, "checking the topology") as say:
        outcome = topology_check([(ref, src, tgt) for ref, src, tgt, _ in flows], origins, offline, say)
    render(outcome, output)


#: ``preflight`` / ``connectors apply`` ``--with-env NAME / --with-config FILE``: the other migrations into the same target.
def with_flows_options(f):
    """``--with-env`` / ``--with-config`` (repeatable): other migrations preflight and apply compare this flow against."""
    f = click.option("--with-config", "with_configs", multiple=True, type=READ_FILE,
                     help="Another migration's flow file into the same target (repeatable): preflight fails, and "
                          "connectors apply refuses (exit 2), on a topic or consumer group both sources send there.")(f)
    f = click.option("--with-env", "with_envs", multiple=True, type=ENV,
                     help="Another migration's environment into the same target (repeatable); see --with-config.")(f)
    return f


def other_flows(flow: Flow, with_envs: tuple[str, ...], with_configs: tuple[str, ...]) -> list[tuple[FlowRef, ClusterEndpoint]]:
    """The other migrations preflight (and ``connectors apply``) compares ``flow`` against, refused as bad input
    (one line, before any connection) when the configuration alone shows a collision with ``flow`` (shared names,
    one exact topic or group from both sources, renames onto one name, a loop without marks)."""
    if not with_envs and not with_configs:
        return []
    from ..topology.plan import plan_topology

    others = read_flows(with_envs, with_configs, "--with-env/--with-config", at_least=1)
    me = flow_ref(flow)
    if any(ref.label == me.label for ref, *_ in others):
        raise UsageError("--with-env/--with-config", f"flow {me.label} is the one under preflight", "name the other migrations only")
    bad = [p for p in plan_topology([me, *(ref for ref, *_ in others)]).bad_input if me.label in p.flows]
    if bad:
        raise UsageError(bad[0].field, bad[0].detail, bad[0].fix)
    return [(ref, src) for ref, src, _, _ in others]
