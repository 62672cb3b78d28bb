"""``topology check``: how several flows relate, refused when they would overwrite each other or loop.

:func:`topology_check` ``(flows, offline, progress) -> Outcome`` decides in two passes of the pure planner
(:func:`msk_migrate.topology.plan.plan_topology`): first on the configuration alone, before any connection
(a problem there is bad input: exit 2, nothing reached); then, unless ``offline``, on what the clusters hold:
each distinct source cluster's topics and consumer groups (listed once however many flows read it), and
every reached cluster's id (a cluster named by two different bootstrap strings is one cluster). A collision
found there is refused the same way: exit 2, one line naming both flows and the setting that clears it (the fix
is the flows' configuration, whatever showed it). :func:`collisions_for` is preflight's condition over the same
planner (a failing row there: preflight keeps its own exit convention).

Invariants: only the flows' own clusters are reached (their sources for topics and groups, every cluster for
its id); nothing is written anywhere; ``talked_to`` names every cluster reached with its id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..access.admin import AdminSession
from ..config.migration import ClusterEndpoint
from ..outcome import Outcome, Progress, View, col, quiet
from ..topology.plan import FlowRef, Problem, SourceInventory, TopologyPlan, plan_topology


@dataclass
class Reached:
    """The clusters a check reached, by bootstrap string: their id, and the topics/groups of sources."""

    ids: dict[str, str | None] = field(default_factory=dict)
    inventories: dict[str, SourceInventory] = field(default_factory=dict)

    def talked_to(self) -> dict[str, Any]:
        return {"clusters": [{"bootstrap": b, "cluster_id": i} for b, i in sorted(self.ids.items())]}


def reach(endpoints: Sequence[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None]], progress: Progress = quiet) -> Reached:
    """Each distinct cluster of the flows once: its id; a source's topics and groups as well."""
    out = Reached()
    sessions: dict[str, AdminSession] = {}

    def session(role: str, ep: ClusterEndpoint) -> AdminSession:
        if ep.bootstrap_servers not in sessions:
            progress(f"reaching {role} {ep.bootstrap_servers}")
            s = AdminSession.for_endpoint(role, ep)
            sessions[ep.bootstrap_servers] = s
            out.ids[ep.bootstrap_servers] = s.cluster_id()
        return sessions[ep.bootstrap_servers]

    for _, src, tgt in endpoints:
        s = session("source", src)
        if src.bootstrap_servers not in out.inventories:
            progress(f"listing topics and groups of {src.bootstrap_servers}")
            out.inventories[src.bootstrap_servers] = SourceInventory(frozenset(s.topics()), frozenset(s.groups()))
        if tgt is not None:
            session("target", tgt)
    return out


def _with_ids(flows: Sequence[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None]], reached: Reached) -> list[FlowRef]:
    return [f.with_ids(reached.ids.get(src.bootstrap_servers), reached.ids.get(tgt.bootstrap_servers) if tgt else None)
            for f, src, tgt in flows]


def _inventories(flows: Sequence[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None]], reached: Reached) -> dict[str, SourceInventory]:
    return {f.label: reached.inventories[src.bootstrap_servers] for f, src, _ in flows}


def check_flows(flows: Sequence[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None]], offline: bool,
                progress: Progress = quiet) -> tuple[TopologyPlan, Reached | None]:
    """The plan on configuration alone, then (unless ``offline`` or it already found bad input) on the clusters."""
    first = plan_topology([f for f, _, _ in flows])
    if offline or first.bad_input:
        return first, None
    reached = reach(flows, progress)
    return plan_topology(_with_ids(flows, reached), _inventories(flows, reached)), reached


def _verdict(plan: TopologyPlan) -> str:
    if any(p.stage == "config" for p in plan.problems):
        return "refused"
    if plan.problems:
        return "collisions"  # found on the clusters: refused all the same (exit 2)
    if plan.undecided:
        return "undecided offline"
    return "clean"


def plan_outcome(plan: TopologyPlan, reached: Reached | None, origins: dict[str, str]) -> Outcome:
    """The plan as the command's outcome: a row per relation, problem and undecided question."""
    rows: list[Any] = [*plan.relations, *plan.problems, *plan.undecided]
    talked = {"config": origins, **(reached.talked_to() if reached is not None else {"clusters": []}), "offline": reached is None}
    bad = plan.bad_input
    notes = []
    if reached is None and not bad:
        notes.append("offline: only exact topic and group names were compared (regex selections need the clusters: "
                     "run without --offline)")
    if not plan.relations:
        notes.append("no two flows share a cluster")
    views = [View("relations", [col("kind", "kind"), col("flows", lambda r: " / ".join(r["flows"])), col("detail", "detail")],
                  [r.to_dict() for r in plan.relations]),
             View("problems", [col("stage", "stage"), col("kind", "kind"), col("flows", lambda r: " / ".join(r["flows"])),
                               col("line", "line")], [p.to_dict() for p in plan.problems]),
             View("not decided offline", [col("flows", lambda r: " / ".join(r["flows"])), col("what", "what")],
                  [u.to_dict() for u in plan.undecided])]
    return Outcome("topology check", _verdict(plan), plan.exit_code, rows, talked,
                   extra={"flows": [f.label for f in plan.flows]}, views=[v for v in views if v.rows],
                   notes=notes, error=bad[0].line if bad else None)


def topology_check(flows: Sequence[tuple[FlowRef, ClusterEndpoint, ClusterEndpoint | None]], origins: dict[str, str],
                   offline: bool, progress: Progress = quiet) -> Outcome:
    """``msk-migrate topology check``: exit 0 clean, 1 a question offline cannot decide, 2 a problem (found in
    the configuration before any connection, or on the clusters)."""
    plan, reached = check_flows(flows, offline, progress)
    return plan_outcome(plan, reached, origins)


def collisions_for(me: FlowRef, others: Sequence[FlowRef], inventories: dict[str, SourceInventory]) -> list[Problem]:
    """Problems between ``me`` and each of ``others`` into its target (preflight's condition)."""
    plan = plan_topology([me, *others], inventories)
    return [p for p in plan.problems if me.label in p.flows]
