"""A topology rehearsal as an :class:`~msk_migrate.outcome.Outcome`: the step table, the topics per flow
(records on its source and its target), each flow's validation verdict; exit 0 when every step passed."""

from __future__ import annotations

from ...outcome import Outcome, View, col
from ..result import RehearsalResult


def topology_outcome(topology: str, res: RehearsalResult) -> Outcome:
    doc = {**res.to_dict(), "topology": topology}
    talked = {k: (v.get("bootstrap_servers") or v.get("url")) for k, v in (res.status or {}).items() if isinstance(v, dict)}
    rows = [{"#": i, "step": s.name, "ok": s.ok, "seconds": f"{s.seconds:.1f}", "result": s.result}
            for i, s in enumerate(res.steps, 1)]
    rows.append({"#": None, "step": "total", "ok": res.ok, "seconds": f"{res.seconds.get('total', 0):.1f}",
                 "result": "[green]ok[/]" if res.ok else "[red]FAILED[/]"})
    views = [View(f"rehearsal ({topology}): step by step", [
        col("#", "#", True), col("step", "step", ok=lambda r: r["ok"]), col("seconds", "seconds", True), col("result", "result")], rows)]
    if res.topics:
        views.insert(0, View("topics per flow", [
            col("flow", "flow"), col("target cluster", "cluster"), col("source topic", "source topic"), col("target topic", "target topic"),
            col("source records", "source records", True),
            col("target records", "target records", True, ok=lambda r: r["source records"] == r["target records"])], res.topics))
    notes = [f"{flow} validation: {v.get('verdict')}, {v.get('records')} records; report {v.get('report')}"
             for flow, v in res.validation.items() if v]
    return Outcome("rehearse", "ok" if res.ok else "failed", 0 if res.ok else 1, doc["steps"], talked, extra=doc, views=views,
                   notes=[*notes, "the environment keeps running: `msk-migrate local status`, stop it with `msk-migrate local down`"])
