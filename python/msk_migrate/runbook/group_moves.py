"""``offsets sync`` with the ledger: one consumer group, or every group of a wave, placed on the other cluster by
content (:func:`msk_migrate.offset_translation.sync.move_group`) and recorded.

Invariants:

- A group written to the target is recorded ``consumers-moved``, one written back to the source ``rolled-back``,
  each with its certificate's location (when one was written) and its wave; a dry run records nothing.
- Several groups (``--wave`` without ``--group``) are all planned first as dry runs: a group with live members,
  one replication has not reached or one ``--exact-only`` refuses stops the command before any group is
  written (exit 2, nothing written, nothing recorded).
- Which groups a wave moves comes from the source's committed offsets (the wave plan) and the ledger: to the
  target those not yet moved (neither moved, abandoned nor cleaned up); back to the source those the ledger has
  on the target (``consumers-moved``) — a consumers-only wave rolls back without its producers ever moving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..ledger import Change, Ledger
from ..ledger.records import GROUP_MOVED, LedgerView
from ..offset_translation.request import SyncRequest
from ..offset_translation.result import SyncResult
from ..offset_translation.sync import move_group
from .session import MigrationSession

Result = SyncResult[Any]

#: The ledger state a written move records, by the cluster the group moved to.
RECORDED = {"target": "consumers-moved", "source": "rolled-back"}


def wave_groups_to_move(view: LedgerView, wave: str, wave_groups: list[str], to: str) -> list[str]:
    """The groups ``offsets sync --wave W`` (no ``--group``) moves: see the module docstring."""
    if to == "target":
        return sorted(g for g in wave_groups if view.state_of("group", g) not in GROUP_MOVED)
    recorded = {r.name for r in view.of_kind("group") if r.wave == wave}
    return sorted(g for g in set(wave_groups) | recorded if view.state_of("group", g) == "consumers-moved")


def record_move(ledger: Ledger, result: Result, wave: str | None) -> None:
    """The written move of one group, in the ledger (nothing for a dry run)."""
    req = result.request
    if req.dry_run:
        return
    view = ledger.read()
    rec = view.get("group", req.group)
    ledger.append(view, [Change("group", req.group, RECORDED[req.to], evidence=result.locations[0] if result.locations else None,
                                wave=wave or (rec.wave if rec else None),
                                detail=f"offsets sync {req.direction}: {result.verdict}, {result.written} partition(s) written")],
                  "offsets sync")


def move_groups(s: MigrationSession, ledger: Ledger, groups: list[str], request: SyncRequest, wave: str | None,
                progress: Callable[[str], None]) -> list[Result]:
    """Move each of ``groups`` as ``request`` says (its group replaced), recording each written move; several
    groups are planned as dry runs first (see the module docstring)."""
    if len(groups) > 1 and not request.dry_run:
        for g in groups:
            progress(f"planning {g} (nothing is written until every group of the wave can move)")
            move_group(s, replace(request, group=g, dry_run=True, certificate=None), progress)
    out = []
    for g in groups:
        res = move_group(s, replace(request, group=g), progress)
        record_move(ledger, res, wave)
        out.append(res)
    return out
