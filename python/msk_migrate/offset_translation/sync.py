"""``msk-migrate offsets sync``: move one stopped group to the other cluster, exactly where proven.

Forward (``to="target"``): the group's commits on the source, placed on the target (MM2's checkpoints
from the flow's checkpoints topic on the target as lower bounds). Rollback (``to="source"``): its
commits on the target, placed on the source after reverse replication (the reverse checkpoint
connector's checkpoints, on the source under the reverse flow's name; :mod:`msk_migrate.kafka.names`).

Every refusal happens before anything is written: a bad request, an unknown group, members on either
cluster, an unwritable certificate location, replication not yet past a commit point
(:class:`NotReplicatedYet`), and (with ``exact_only``) any partition not proven.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..access.offsets import latest_checkpoints
from ..connectors.render import reverse_spec
from ..errors import UsageError
from ..kafka.selection import topic_selection
from ..outcome import quiet
from . import certificate as cert_mod
from .plan import apply_plans, group_commits, require_group_stopped, translate_group
from .planner import PartitionPlan, Placement
from .request import Clusters, NotReplicatedYet, SyncRequest
from .result import SyncResult


def move_group(clusters: Clusters, request: SyncRequest, progress: Callable[[str], None] = quiet) -> SyncResult[Any]:
    """``offsets sync``: :func:`sync_group`, or for a flow that marks its copies (active/active, a partition fed
    from both clusters) the two-origin translation (:mod:`.two_origin_sync`)."""
    if getattr(clusters.migration, "mark_copies", False):
        from .two_origin_sync import sync_two_origin

        return sync_two_origin(clusters, request, progress)
    return sync_group(clusters, request, progress)


def sync_group(clusters: Clusters, request: SyncRequest,
               progress: Callable[[str], None] = quiet) -> SyncResult[PartitionPlan]:
    """Place ``request.group`` on the other cluster of ``clusters`` (a ``MigrationSession``), write it unless a
    dry run, and write the certificate where asked. Refuses (UsageError, exit 2, nothing written) an unknown
    group, one with members, an unwritable certificate location, a commit point replication has not
    reached (:class:`NotReplicatedYet`) and, with ``exact_only``, any partition not proven.
    ``progress`` is told each phase (a spinner's text)."""
    migration, group = clusters.migration, request.group
    sel = topic_selection(migration)
    forward = request.to == "target"

    def to_name(t: str) -> str:
        return sel.target_name(t) if forward else sel.source_name(t)

    def topic_ok(t: str) -> bool:
        return sel.matches(t if forward else sel.source_name(t))

    source, target = clusters.source, clusters.target
    frm, dest = (source, target) if forward else (target, source)
    # the forward flow's checkpoints live on the target, the reverse flow's (its own name) on the source
    cps_on, cps_alias, cps_ns = ((target, clusters.source_alias, migration.internal_namespace) if forward
                                 else (source, clusters.target_alias, reverse_spec(migration, []).internal_namespace))
    committed = group_commits(frm, group, topic_ok)
    require_group_stopped(frm, dest, group)
    if request.certificate:
        cert_mod.check_destination(request.certificate, group)
    cps = latest_checkpoints(cps_on, cps_alias, group, cps_ns).get(group, {})
    progress(f"placing {group}'s {len(committed)} partition(s) on the {dest.role} by content")
    plans = translate_group(frm, dest, group, to_name, topic_ok, cps, force=request.force, committed=committed)
    _refuse(group, plans, request.exact_only)
    written = 0 if request.dry_run else apply_plans(dest, group, plans)
    cert = cert_mod.build(group, request.direction, str(frm.bootstrap), str(dest.bootstrap), plans,
                          written=not request.dry_run, dry_run=request.dry_run, ids=cert_mod.cluster_ids(frm, dest))
    locations = tuple(cert_mod.write(cert, request.certificate)) if request.certificate else ()
    return SyncResult(request, "one-origin", tuple(plans), written, cert, locations)


def _refuse(group: str, plans: list[PartitionPlan], exact_only: bool) -> None:
    """The refusals that depend on the plans (before anything is written)."""
    behind = [p for p in plans if p.placement is Placement.NOT_REPLICATED]
    if behind:
        p = behind[0]
        raise NotReplicatedYet("--group", f"{group} {p.topic}[{p.partition}]: replication has not reached the commit point "
                               f"{p.commit} yet ({len(behind)} partition(s))",
                               "wait until `msk-migrate lag` shows the topic in sync, then run offsets sync again")
    if exact_only:
        bad = [p for p in plans if not p.proven]
        if bad:
            p = bad[0]
            raise UsageError("--exact-only", f"{group} {p.topic}[{p.partition}] cannot be placed exactly: "
                             f"{p.reason.split(';')[0]} ({len(bad)} partition(s))",
                             "drop --exact-only to place it on MM2's checkpoint (re-delivery), or wait and re-run")
