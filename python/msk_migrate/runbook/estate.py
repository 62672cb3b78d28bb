"""The whole estate at a glance: every topic and group of the migration (or of one wave), where it stands
according to the ledger, since when, by whom, and what proves it. What ``msk-migrate status`` prints.

API: :func:`estate_rows` ``(view, plan, wave) -> list[EstateRow]`` and :func:`status_outcome`, which wraps them
in the one :class:`~msk_migrate.outcome.Outcome` shape (table, ``--output json``, HTML page).

Sources, and what a row says when one of them is silent:

- the **ledger** (:mod:`msk_migrate.ledger`): the recorded state; no record = ``unrecorded`` for a topic (no
  state-changing command has recorded it yet), ``on-source`` for a group (nothing moved it);
- the **source** (optional, :mod:`.waves`): the migration's selected topics with their waves, and the groups
  that committed offsets on them. A record whose topic is no longer on the source says so (``note``).

Invariant: status writes nothing to the ledger; it is exit 0 when it shows something, 1 when there is
nothing at all to show (no selected topic on the source and no record): a status of nothing is no status.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from ..ledger.records import LedgerView, Record
from ..outcome import Outcome, View, col
from .waves import NO_WAVE, WavePlan

#: States that are an end of the road for a topic or group (coloured as done).
DONE = ("producers-moved", "consumers-moved", "cleaned-up", "abandoned")


@dataclass
class EstateRow:
    kind: str  #: topic | group
    name: str
    wave: str | None
    state: str
    since: str | None  #: when the state was recorded
    by: str | None
    command: str | None
    evidence: str | None
    version: int | None  #: the ledger version that set it
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _row(kind: str, name: str, wave: str | None, rec: Record | None, note: str = "") -> EstateRow:
    if rec is None:
        return EstateRow(kind, name, wave, "unrecorded" if kind == "topic" else "on-source", None, None, None, None, None, note)
    return EstateRow(kind, name, wave or rec.wave, rec.state, rec.at, rec.by, rec.command, rec.evidence, rec.version, note)


def estate_rows(view: LedgerView, plan: WavePlan | None, wave: str | None) -> list[EstateRow]:
    """Topics then groups, by name; with ``wave``, only that wave's (by the plan, or by the ledger's record)."""
    rows: list[EstateRow] = []
    for kind in ("topic", "group"):
        seen: set[str] = set()
        if plan is not None:
            names = ({t: plan.topic_wave[t] for t in plan.topics_of(wave)} if kind == "topic"
                     else {g: plan.groups[g].wave for g in plan.groups_of(wave)})
            for name, w in sorted(names.items()):
                note = ""
                if kind == "group" and plan.groups[name].spans:
                    note = f"reads waves {', '.join(plan.groups[name].waves)}: moves with {w}, the later"
                rows.append(_row(kind, name, w, view.get(kind, name), note))
                seen.add(name)
        for rec in view.of_kind(kind):
            if rec.name in seen or (wave is not None and rec.wave != wave):
                continue
            gone = "not on the source now" if plan is not None and kind == "topic" else ""
            rows.append(_row(kind, rec.name, rec.wave, rec, gone))
    return rows


def summary(rows: list[EstateRow]) -> str:
    parts = []
    for kind in ("topic", "group"):
        counts = Counter(r.state for r in rows if r.kind == kind)
        if counts:
            n = sum(counts.values())
            parts.append(f"{n} {kind}(s): " + ", ".join(f"{c} {s}" for s, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))
    return "; ".join(parts) or "nothing to show"


def status_outcome(view: LedgerView, plan: WavePlan | None, wave: str | None, talked_to: dict[str, Any]) -> Outcome:
    rows = estate_rows(view, plan, wave)
    scope = f"wave {wave}" if wave else "the whole migration"
    shown = bool(rows)
    verdict = summary(rows) if shown else (f"nothing to show for {scope}: no selected topic on the source and no ledger record"
                                           if plan is not None else f"nothing to show for {scope}: the ledger has no record")
    cols = [col("kind", "kind"), col("name", "name"), col("wave", lambda r: r.wave or NO_WAVE),
            col("state", "state", ok=lambda r: r.state in DONE), col("since", "since"), col("by", "by"),
            col("evidence", "evidence"), col("note", "note")]
    notes = [f"ledger {view.location}: version {view.version}" + (f", last written {view.updated_at}" if view.updated_at else ", empty"),
             verdict]
    return Outcome("status", verdict, 0 if shown else 1, rows=list(rows), talked_to=talked_to,
                   extra={"wave": wave, "ledger": view.location, "ledger_version": view.version,
                          "waves": plan.order if plan is not None else None},
                   views=[View(f"status: {scope}", cols)], notes=notes)
