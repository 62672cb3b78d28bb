"""``msk-migrate offsets sync`` for a flow that marks its copies (active/active, ``migration.mark_copies``): one
stopped group moved by the two-origin translation (:mod:`.two_origin`, read by :mod:`.two_origin_read`).

A partition fed from both clusters holds each origin's records in that origin's order, interleaved differently on
each side; a position there is a set of records of both origins, which MM2's one offset-sync stream cannot
translate. Each commit point is placed where the other side has covered exactly the records the group consumed
of each origin (exact), else at the largest offset that skips nothing, with every record it will read again
named per origin (docs/active-active-proof.md). Identity topic names only: a renamed topic is refused.

Every refusal happens before anything is written (as :func:`.sync.sync_group`): a renamed topic, an unknown group,
members on either cluster, an unwritable certificate location, and (``exact_only``) any partition not exact.
A partition that cannot be proven (a copy lost, reordered, duplicated or wrongly marked) is left as it was and
named; a placement behind the group's current commit on the destination is left too, unless ``force``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..kafka.selection import topic_selection
from . import certificate as cert_mod
from .plan import group_commits, require_group_stopped
from .planner import Action, action_for
from .result import SyncResult
from .two_origin import TwoOriginTranslation
from .two_origin_read import translate_commits

if TYPE_CHECKING:
    from .request import Clusters, SyncRequest

KIND = cert_mod.TWO_ORIGIN_KIND


@dataclass(frozen=True)
class TwoOriginPlacement:
    """One partition: the translation and what was done with it (in the one vocabulary, :class:`~.planner.Action`)."""

    topic: str
    partition: int
    translation: TwoOriginTranslation
    current: int | None  #: the group's commit on the destination before (None: none)
    action: Action

    @property
    def exact(self) -> bool:
        return self.translation.exact

    def row(self) -> dict[str, Any]:
        """The command's row of this partition (console and JSON)."""
        t = self.translation
        return {"topic": self.topic, "partition": self.partition, "commit": t.position, "current": self.current,
                "translated": t.offset, "method": "exact" if t.exact else ("two-origin" if t.proven else "none"),
                "redelivery": t.redelivered_count, "action": self.action.value, "reason": t.reason}

    def to_dict(self) -> dict[str, Any]:
        """The certificate's row."""
        return {"topic": self.topic, "partition": self.partition, "current": self.current, "action": self.action.value,
                **self.translation.as_dict()}


def decide(t: TwoOriginTranslation, current: int | None, force: bool) -> Action:
    """What placing ``t`` does to a commit that is ``current`` now: the one-origin rule (:func:`.planner.action_for`:
    never backwards unless ``force``), with nothing to write for a translation that is not proven."""
    return action_for(t.offset if t.proven else None, current, force)


def certificate(group: str, direction: str, frm: str, to: str, placements: list[TwoOriginPlacement],
                written: bool, dry_run: bool, ids: dict[str, str | None] | None = None) -> dict[str, Any]:
    """The proof of one group's two-origin placements (JSON, with a SHA-256 digest of its body); ``ids``: the
    clusters' (:func:`.certificate.cluster_ids`)."""
    exact = sum(p.translation.exact for p in placements)
    body = {
        "kind": KIND, "group": group, "direction": direction, "from": frm, "to": to, **(ids or {}),
        "created_at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"), "dry_run": dry_run, "written": written,
        "verdict": "exact" if placements and exact == len(placements) else ("partial" if exact else "not-proven"),
        "totals": {"partitions": len(placements), "exact": exact,
                   "redelivered": sum(p.translation.redelivered_count for p in placements if p.translation.proven),
                   "not_proven": sum(not p.translation.proven for p in placements),
                   # MM2 restarts: copies written twice, placed by identity and position (never the translation's
                   # re-delivery); those past a placed offset are read again by every consumer of that side
                   "restart_duplicates": sum(sum(p.translation.duplicates.values()) for p in placements),
                   "restart_duplicates_ahead": sum(p.translation.duplicates_ahead for p in placements),
                   "to_write": sum(p.action.writes for p in placements)},
        "partitions": [p.to_dict() for p in placements],
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return {**body, "digest": digest}


def sync_two_origin(clusters: Clusters, request: SyncRequest,
                    progress: Callable[[str], None]) -> SyncResult[TwoOriginPlacement]:
    """Move ``request.group`` by the two-origin translation (see the module docstring)."""
    migration, group = clusters.migration, request.group
    sel = topic_selection(migration)
    forward = request.to == "target"
    source, target = clusters.source, clusters.target
    frm, dest = (source, target) if forward else (target, source)
    frm_alias, dest_alias = ((clusters.source_alias, clusters.target_alias) if forward
                             else (clusters.target_alias, clusters.source_alias))
    committed = group_commits(frm, group, sel.matches)
    renamed = sorted({t for t, _ in committed if sel.target_name(t) != t})
    if renamed:
        raise UsageError("migration.topic_renames", f"{renamed[0]} is renamed on the target; a flow that marks its copies "
                         "moves groups by the two-origin translation, which compares one topic name on both clusters",
                         "drop the rename for topics that flow both ways")
    require_group_stopped(frm, dest, group)
    if request.certificate:
        cert_mod.check_destination(request.certificate, group)
    progress(f"reading both origins of {group}'s {len(committed)} partition(s) on both clusters")
    translated = translate_commits(frm, frm_alias, dest, dest_alias, committed)
    if request.exact_only:
        bad = [(tp, t) for tp, t in sorted(translated.items()) if not t.exact]
        if bad:
            (topic, part), t = bad[0]
            why = t.reason or f"{t.redelivered_count} record(s) would be re-delivered"
            raise UsageError("--exact-only", f"{group} {topic}[{part}] cannot be placed exactly: {why} ({len(bad)} partition(s))",
                             "drop --exact-only to place it where nothing is skipped (re-delivery declared), or wait "
                             "until both directions are in sync and re-run")
    current = dest.committed(group)
    placements = [TwoOriginPlacement(topic, part, t, current.get((topic, part)), decide(t, current.get((topic, part)), request.force))
                  for (topic, part), t in sorted(translated.items())]
    to_write = {(p.topic, p.partition): p.translation.offset for p in placements if p.action.writes}
    written = 0
    if to_write and not request.dry_run:
        dest.alter_committed(group, {tp: o for tp, o in to_write.items() if o is not None})
        written = len(to_write)
    cert = certificate(group, request.direction, str(frm.bootstrap), str(dest.bootstrap), placements,
                       written=not request.dry_run, dry_run=request.dry_run, ids=cert_mod.cluster_ids(frm, dest))
    locations = tuple(cert_mod.write_json(cert, request.certificate)) if request.certificate else ()
    return SyncResult(request, "two-origin", tuple(placements), written, cert, locations)
