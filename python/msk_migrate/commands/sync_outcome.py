"""The outcome of ``offsets sync`` (console and JSON) from the move's domain result: one group
(:func:`group_outcome`) or every group of a wave (:func:`wave_outcome`).

The operations (``runbook.group_moves``, ``offset_translation``) return :class:`SyncResult` values; only this
module turns them into what the operator reads, so both translations print in one shape and one vocabulary.
"""

from __future__ import annotations

from typing import Any

from ..ledger import Ledger
from ..offset_translation.planner import Action
from ..offset_translation.result import EXIT_MEANING, SyncResult
from ..outcome import Outcome, View, col
from ..runbook.group_moves import RECORDED

#: An action the operator need not look at: written, or already where it belongs.
_SETTLED = (Action.WRITE.value, Action.BACKWARDS_FORCED.value, Action.UNCHANGED.value)


def group_outcome(res: SyncResult[Any], talked_to: dict[str, Any]) -> Outcome:
    """One group's move (``talked_to``: the session's, ``MigrationSession.talked_to()``)."""
    req, tot = res.request, res.certificate["totals"]
    two = res.translation == "two-origin"
    where = f"; certificate {', '.join(res.locations)}" if res.locations else ""
    note = (f"{'would write' if req.dry_run else 'wrote'} {res.to_write if req.dry_run else res.written} partition(s); "
            + (f"{tot['exact']}/{tot['partitions']} exact (two-origin), {tot['redelivered']} record(s) re-delivered, "
               f"declared per origin" if two else
               f"{tot['exact']}/{tot['partitions']} exact, {tot['redelivered']} record(s) re-delivered by identity")
            + where)
    if tot.get("restart_duplicates"):
        note += (f"; {tot['restart_duplicates']} MM2 restart duplicate(s) placed by identity"
                 + (f", {tot['restart_duplicates_ahead']} past the placed offsets (MM2 wrote them twice)"
                    if tot.get("restart_duplicates_ahead") else ""))
    view = View(f"offsets sync {req.group} ({req.direction}{', two origins' if two else ''})"
                + (" (dry run)" if req.dry_run else ""), [
        col("topic", "topic"), col("p", "partition", numeric=True), col("commit", "commit", numeric=True),
        col("current", "current", numeric=True), col("placed", "translated", numeric=True),
        col("method", "method", ok=lambda r: r["method"] == "exact"),
        col("re-delivered", "redelivery", numeric=True),
        col("action", "action", ok=lambda r: r["action"] in _SETTLED),
        col("why", "reason")])
    extra = {"group": req.group, "direction": req.direction, "dry_run": req.dry_run, "written": res.written,
             "exact": res.exact, "totals": tot, "certificate": list(res.locations),
             **({"translation": "two-origin"} if two else {}), "exit": EXIT_MEANING[res.translation]}
    return Outcome("offsets sync", res.verdict, res.exit_code, res.rows(), talked_to, extra=extra, views=[view], notes=[note])


def wave_outcome(results: list[SyncResult[Any]], talked_to: dict[str, Any], wave: str, to: str, ledger: Ledger) -> Outcome:
    """One outcome for the groups of a wave: exact when every group is, the worst exit code of them."""
    if not results:
        where = "not moved yet" if to == "target" else "on the target (consumers-moved)"
        return Outcome("offsets sync", "nothing-in-wave", 1, talked_to=talked_to, extra={"wave": wave, "groups": []},
                       notes=[f"wave {wave}: no group of it is {where} in the ledger {ledger.location}; nothing moved"])
    rows = [{"group": r.request.group, **row} for r in results for row in r.rows()]
    dry = results[0].request.dry_run
    groups = [{"group": r.request.group, "verdict": r.verdict, "written": r.written, "exact": r.exact,
               "certificate": list(r.locations)} for r in results]
    exact = all(r.exact for r in results)
    notes = [f"{r.request.group}: {r.verdict}" + ("" if dry else f", wrote {r.written} partition(s)")
             + (f"; certificate {', '.join(r.locations)}" if r.locations else "") for r in results]
    if not dry:
        notes.append(f"recorded in the ledger {ledger.location}: {len(results)} group(s) {RECORDED[to]}")
    view = View(f"offsets sync of wave {wave} ({results[0].request.direction})" + (" (dry run)" if dry else ""), [
        col("group", "group"), col("topic", "topic"), col("p", "partition", numeric=True), col("commit", "commit", numeric=True),
        col("placed", "translated", numeric=True), col("method", "method", ok=lambda r: r["method"] == "exact"),
        col("re-delivered", "redelivery", numeric=True), col("action", "action"), col("why", "reason")])
    return Outcome("offsets sync", "exact" if exact else "partial", max(r.exit_code for r in results), rows, talked_to,
                   extra={"wave": wave, "direction": results[0].request.direction, "dry_run": dry, "groups": groups,
                          "exact": exact},
                   views=[view], notes=notes)
