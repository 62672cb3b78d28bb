"""``connectors apply`` on a shared target: refuse a flow that collides with another migration into it.

API: :func:`refuse_collisions` ``(flow, client, ...) -> list[str]`` raises :class:`~msk_migrate.errors.UsageError`
(one line naming both migrations and the setting that clears it, exit 2) before any connector is created, else
returns the notes the outcome prints: which other migrations were compared, or that none is known.

Where the other migrations into the flow's target are known from (each read, never written):

- the ones given (``--with-env`` / ``--with-config``, as for preflight);
- the environments recorded on the same target (``config/recorded.py``: an ``--env`` flow's neighbours, read
  from their environment YAML);
- the MM2 connectors of other migrations on the worker this apply talks to, and on the other workers the
  caller names (the local harness's; :func:`msk_migrate.topology.known.flows_from_connectors`): a migration
  running elsewhere with this flow's name is another migration with the same name.

Invariants: the decision is the pure planner's (:func:`msk_migrate.topology.plan.plan_topology`): first on the
configurations alone, then on the sources' listed topics and groups (this flow's source always; another's when
it is the same cluster or the caller can reach it); every problem naming this flow is a refusal, exit 2, whichever
stage found it. What cannot be decided (a regex selection of a source not listed) or known (no other migration)
is said in a note, never a silent pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..access.admin import AdminSession
from ..config.flow import Flow, read_flow
from ..config.migration import ClusterEndpoint
from ..config.recorded import all_records
from ..connect_api.rest import MM2_CONNECTOR_PREFIX, ConnectClient
from ..errors import UsageError
from ..topology.known import flows_from_connectors
from ..topology.plan import ClusterRef, FlowRef, SourceInventory, flow_ref, plan_topology

Other = tuple[FlowRef, ClusterEndpoint | None]


def _worker_flows(client: ConnectClient, but: str | None) -> tuple[list[FlowRef], list[str]]:
    configs = {}
    for name in client.connectors():
        cfg = client.config(name) or {}
        if str(cfg.get("connector.class", "")).startswith(MM2_CONNECTOR_PREFIX):
            configs[name] = cfg
    return flows_from_connectors(configs, client.url, but)


def _recorded(flow: Flow, me: FlowRef) -> tuple[list[Other], list[str]]:
    """The environments recorded on ``flow``'s target (an ``--env`` flow only), read from their YAML."""
    out: list[Other] = []
    notes: list[str] = []
    if not flow.env_name:
        return out, notes
    for env, rec in sorted(all_records().items()):
        if env == flow.env_name:
            continue
        ref = ClusterRef.of(rec.get("target_bootstrap"), rec.get("target_cluster_id"))
        if not ref.same(me.target):
            continue
        try:
            other = read_flow(env, None, rec.get("target_bootstrap"))
        except (UsageError, OSError, ValueError) as exc:
            notes.append(f"environment {env} is recorded on this target but its YAML could not be read ({exc})")
            continue
        if other is not None:
            out.append((flow_ref(other).with_ids(rec.get("source_cluster_id"), rec.get("target_cluster_id")), other.source))
    return out, notes


def _inventory(ep: ClusterEndpoint) -> SourceInventory:
    s = AdminSession.for_endpoint("source", ep)
    return SourceInventory(frozenset(s.topics()), frozenset(s.groups()))


def refuse_collisions(flow: Flow, client: ConnectClient, given: Sequence[Other] = (),
                      other_workers: Sequence[ConnectClient] = (),
                      endpoints: Sequence[ClusterEndpoint] = ()) -> list[str]:
    """Refuse ``flow`` (exit 2, nothing applied) when it collides with another migration known to write into its
    target; else the notes saying what it was compared with. ``other_workers``: more workers whose migrations
    count (the local harness's); ``endpoints``: clusters the caller can reach as a source, by bootstrap."""
    if flow.migration is None or flow.target is None:
        return []
    me = flow_ref(flow).with_ids(flow.found.source_cluster_id, flow.found.target_cluster_id)
    others: list[Other] = list(given)
    recorded, notes = _recorded(flow, me)
    others += recorded
    for c in (client, *other_workers):
        try:
            found, unread = _worker_flows(c, flow.migration.name if c is client else None)
        except Exception as exc:  # only another migration's worker gets here: a note, not our failure
            if c is client:
                raise
            notes.append(f"the worker {c.url} did not answer; its migrations were not compared ({str(exc).splitlines()[0]})")
            continue
        notes += [f"not read: {u}" for u in unread]
        named = {o.migration.name for o, _ in others}
        for ref in found:
            if ref.migration.name not in named:
                ep = next((e for e in endpoints if ClusterRef.of(e.bootstrap_servers).same(ref.source)), None)
                others.append((ref, ep))
    into = [(o, ep) for o, ep in others if o.target.same(me.target) and o.label != me.label]
    where = flow.target.bootstrap_servers
    if not into:
        notes.append(f"no other migration into the target {where} is known to this apply (none given with "
                     "--with-env/--with-config, none recorded on it, none on the worker(s) reached): a collision with one "
                     "it cannot see is not checked here (`msk-migrate topology check` compares flows you name)")
        return notes
    refs = [o for o, _ in into]
    first = [p for p in plan_topology([me, *refs]).problems if me.label in p.flows]
    if first:
        raise UsageError(first[0].field, first[0].detail, first[0].fix)
    mine = _inventory(flow.source)
    inventories = {me.label: mine}
    for o, ep in into:
        if o.source.same(me.source):
            inventories[o.label] = mine
        elif ep is not None:
            try:
                inventories[o.label] = _inventory(ep)
            except Exception as exc:  # another migration's source: its answer is a note
                notes.append(f"the source of {o.label} ({ep.bootstrap_servers}) was not listed: {str(exc).splitlines()[0]}")
    plan = plan_topology([me, *refs], inventories)
    listed = [p for p in plan.problems if me.label in p.flows]
    if listed:
        raise UsageError(listed[0].field, listed[0].detail, listed[0].fix)
    open_questions = [u.what for u in plan.undecided if me.label in u.flows]
    notes += [f"not decided: {q}" for q in open_questions]
    notes.append(f"compared with {len(refs)} other migration(s) into the target {where}: "
                 f"{', '.join(r.label for r in refs)}; no collision" + (" decided" if not open_questions else " found"))
    return notes
