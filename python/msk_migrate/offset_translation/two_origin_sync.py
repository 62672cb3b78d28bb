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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..kafka.selection import topic_selection
from ..outcome import Outcome, View, col
from . import certificate as cert_mod
from .plan import group_commits, require_group_stopped
from .two_origin import TwoOriginTranslation
from .two_origin_read import translate_commits

if TYPE_CHECKING:
    from .request import Clusters, SyncRequest

KIND = cert_mod.TWO_ORIGIN_KIND


@dataclass(frozen=True)
class TwoOriginPlacement:
    """One partition: the translation and what was done with it."""

    topic: str
    partition: int
    translation: TwoOriginTranslation
    current: int | None  #: the group's commit on the destination before (None: none)
    action: str  #: write | keep (already there) | backwards-refused | not-proven

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "current": self.current, "action": self.action,
                **self.translation.as_dict()}


@dataclass(frozen=True)
class TwoOriginSyncResult:
    request: SyncRequest
    placements: tuple[TwoOriginPlacement, ...]
    written: int
    certificate: dict[str, Any] = field(default_factory=dict)
    locations: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return bool(self.placements) and all(p.translation.exact for p in self.placements)

    @property
    def verdict(self) -> str:
        return str(self.certificate["verdict"])

    @property
    def exit_code(self) -> int:
        """0 every partition exact; 1 some re-deliver (declared) or were left as they were."""
        return 0 if self.exact else 1

    def rows(self) -> list[dict[str, Any]]:
        return [{"topic": p.topic, "partition": p.partition, "commit": p.translation.position, "current": p.current,
                 "translated": p.translation.offset, "method": "exact" if p.translation.exact else
                 ("two-origin" if p.translation.proven else "none"), "redelivery": p.translation.redelivered_count,
                 "action": p.action, "reason": p.translation.reason} for p in self.placements]

    def outcome(self, talked_to: dict[str, Any]) -> Outcome:
        req, tot = self.request, self.certificate["totals"]
        where = f"; certificate {', '.join(self.locations)}" if self.locations else ""
        note = (f"{'would write' if req.dry_run else 'wrote'} {tot['to_write'] if req.dry_run else self.written} partition(s); "
                f"{tot['exact']}/{tot['partitions']} exact (two-origin), {tot['redelivered']} record(s) re-delivered, "
                f"declared per origin{where}")
        if tot.get("restart_duplicates"):
            note += (f"; {tot['restart_duplicates']} MM2 restart duplicate(s) placed by identity"
                     + (f", {tot['restart_duplicates_ahead']} past the placed offsets (MM2 wrote them twice)"
                        if tot.get("restart_duplicates_ahead") else ""))
        view = View(f"offsets sync {req.group} ({req.direction}, two origins)" + (" (dry run)" if req.dry_run else ""), [
            col("topic", "topic"), col("p", "partition", numeric=True), col("commit", "commit", numeric=True),
            col("current", "current", numeric=True), col("placed", "translated", numeric=True),
            col("method", "method", ok=lambda r: r["method"] == "exact"), col("re-delivered", "redelivery", numeric=True),
            col("action", "action", ok=lambda r: r["action"] in ("write", "keep")), col("why", "reason")])
        return Outcome("offsets sync", self.verdict, self.exit_code, self.rows(), talked_to, extra={
            "group": req.group, "direction": req.direction, "dry_run": req.dry_run, "written": self.written,
            "exact": self.exact, "totals": tot, "certificate": list(self.locations), "translation": "two-origin",
            "exit": "0 every partition exact; 1 some re-deliver (declared) or were left as they were"},
            views=[view], notes=[note])


def certificate(group: str, direction: str, frm: str, to: str, placements: list[TwoOriginPlacement],
                written: bool, dry_run: bool) -> dict[str, Any]:
    """The proof of one group's two-origin placements (JSON, with a SHA-256 digest of its body)."""
    exact = sum(p.translation.exact for p in placements)
    body = {
        "kind": KIND, "group": group, "direction": direction, "from": frm, "to": to,
        "created_at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"), "dry_run": dry_run, "written": written,
        "verdict": "exact" if placements and exact == len(placements) else ("partial" if exact else "not-proven"),
        "totals": {"partitions": len(placements), "exact": exact,
                   "redelivered": sum(p.translation.redelivered_count for p in placements if p.translation.proven),
                   "not_proven": sum(not p.translation.proven for p in placements),
                   # MM2 restarts: copies written twice, placed by identity and position (never the translation's
                   # re-delivery); those past a placed offset are read again by every consumer of that side
                   "restart_duplicates": sum(sum(p.translation.duplicates.values()) for p in placements),
                   "restart_duplicates_ahead": sum(p.translation.duplicates_ahead for p in placements),
                   "to_write": sum(p.action == "write" for p in placements)},
        "partitions": [p.to_dict() for p in placements],
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return {**body, "digest": digest}


def sync_two_origin(clusters: Clusters, request: SyncRequest, progress: Callable[[str], None]) -> TwoOriginSyncResult:
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
    placements = []
    for (topic, part), t in sorted(translated.items()):
        now = current.get((topic, part))
        if not t.proven or t.offset is None:
            action = "not-proven"
        elif now == t.offset:
            action = "keep"
        elif now is not None and now > t.offset and not request.force:
            action = "backwards-refused"
        else:
            action = "write"
        placements.append(TwoOriginPlacement(topic, part, t, now, action))
    to_write = {(p.topic, p.partition): p.translation.offset for p in placements if p.action == "write"}
    written = 0
    if to_write and not request.dry_run:
        dest.alter_committed(group, {tp: o for tp, o in to_write.items() if o is not None})
        written = len(to_write)
    cert = certificate(group, request.direction, str(frm.bootstrap), str(dest.bootstrap), placements,
                       written=not request.dry_run, dry_run=request.dry_run)
    locations = tuple(cert_mod.write_json(cert, request.certificate)) if request.certificate else ()
    return TwoOriginSyncResult(request, tuple(placements), written, cert, locations)
