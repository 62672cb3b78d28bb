"""``msk-migrate offsets sync``: move one stopped group to the other cluster, exactly where proven.

Forward (``--to target``): the group's commits on the source, placed on the target (MM2's checkpoints
from the flow's checkpoints topic on the target as lower bounds). Rollback (``--to source``):
its commits on the target, placed on the source after reverse replication (the reverse checkpoint
connector's checkpoints, on the source under the reverse flow's name; :mod:`msk_migrate.kafka.names`).

Every refusal happens before anything is written: unknown group, members on either cluster,
replication not yet past a commit point, and (with ``exact_only``) any partition not proven.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..access.admin import AdminSession
from ..access.offsets import latest_checkpoints
from ..connectors.render import reverse_spec
from ..errors import UsageError
from ..kafka.selection import topic_selection
from . import certificate as cert_mod
from .plan import PartitionProof, apply_proofs, require_group_stopped, translate_group


@dataclass
class SyncResult:
    group: str
    direction: str  #: source->target | target->source
    proofs: list[PartitionProof]
    dry_run: bool
    written: int = 0
    certificate: dict[str, Any] = field(default_factory=dict)
    locations: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return bool(self.proofs) and all(p.proven for p in self.proofs)

    def rows(self) -> list[dict[str, Any]]:
        return [{"topic": p.to_topic, "partition": p.partition, "from_topic": p.topic, "commit": p.commit,
                 "effective_commit": p.effective_commit, "current": p.current, "translated": p.target_offset,
                 "checkpoint": p.checkpoint, "method": p.method, "action": p.action, "redelivery": p.redelivery,
                 "duplicates": len(p.duplicates), "matched": len(p.matched), "reason": p.reason} for p in self.proofs]


def sync_group(migration, source: AdminSession, target: AdminSession, source_alias: str, target_alias: str,
               group: str, to: str = "target", exact_only: bool = False, dry_run: bool = False, force: bool = False,
               certificate: str | None = None) -> SyncResult:
    sel = topic_selection(migration)
    forward = to == "target"

    def to_name(t: str) -> str:
        return sel.target_name(t) if forward else sel.source_name(t)

    def topic_ok(t: str) -> bool:
        return sel.matches(t if forward else sel.source_name(t))

    frm, dest = (source, target) if forward else (target, source)
    # the forward flow's checkpoints live on the target, the reverse flow's (its own name) on the source
    cps_on, cps_alias, cps_ns = ((target, source_alias, migration.internal_namespace) if forward
                                 else (source, target_alias, reverse_spec(migration, []).internal_namespace))
    committed = {tp: o for tp, o in frm.committed(group).items() if topic_ok(tp[0])}
    if not committed:
        if group not in frm.groups():
            raise UsageError("--group", f"unknown consumer group {group!r} on the {frm.role} cluster",
                             "check the name with `kafka-consumer-groups --list` (names are case-sensitive)")
        raise UsageError("--group", f"group {group!r} has no committed offset for a topic of this migration on the "
                         f"{frm.role} cluster", "name a group that consumed the migrated topics")
    require_group_stopped(frm, dest, group)
    if certificate:
        cert_mod.check_destination(certificate)
    cps = latest_checkpoints(cps_on, cps_alias, group, cps_ns).get(group, {})
    proofs = translate_group(frm, dest, group, to_name, topic_ok, cps, force=force, committed=committed)
    behind = [p for p in proofs if p.reason.startswith("not-replicated")]
    if behind:
        p = behind[0]
        raise UsageError("--group", f"{group} {p.topic}[{p.partition}]: replication has not reached the commit point "
                         f"{p.commit} yet ({len(behind)} partition(s))",
                         "wait until `msk-migrate lag` shows the topic in sync, then run offsets sync again")
    if exact_only:
        bad = [p for p in proofs if not p.proven]
        if bad:
            p = bad[0]
            raise UsageError("--exact-only", f"{group} {p.topic}[{p.partition}] cannot be placed exactly: "
                             f"{p.reason.split(';')[0]} ({len(bad)} partition(s))",
                             "drop --exact-only to place it on MM2's checkpoint (re-delivery), or wait and re-run")
    res = SyncResult(group, "source->target" if to == "target" else "target->source", proofs, dry_run)
    if not dry_run:
        res.written = apply_proofs(dest, group, proofs)
    res.certificate = cert_mod.build(group, res.direction, str(frm.bootstrap), str(dest.bootstrap), proofs,
                                     written=not dry_run, dry_run=dry_run)
    if certificate:
        res.locations = cert_mod.write(res.certificate, certificate)
    return res
