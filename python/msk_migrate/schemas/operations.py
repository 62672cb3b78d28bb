"""``schemas plan | copy | verify`` as operations returning :class:`~msk_migrate.outcome.Outcome`.

``origin`` is the registry read and ``destination`` the one written (source -> target, or the reverse for a
rollback: ``--to source``). Nothing is written by ``plan`` and ``verify``; ``copy`` writes only after the
plan has no conflict and the destination has a way to keep ids, then reads back what it wrote.

Exit codes: 0 planned / copied / in sync; 1 not in sync (verify) or a write the destination did not keep;
2 bad input (unreachable, credentials, a filter matching nothing, a conflict, a destination that cannot
keep ids), with nothing written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..outcome import Outcome, View, col
from .client import RegistryClient
from .model import Inventory, SchemaVersion
from .planner import Plan, identity_of, plan_copy
from .reader import list_subjects, read_ids, read_inventory, read_subject, select, subject_path
from .writers import choose_writer, write_settings

Progress = Callable[[str], None]


@dataclass
class Direction:
    """Which registry is read (``origin``) and which is written (``destination``)."""

    origin: RegistryClient
    destination: RegistryClient

    def talked_to(self) -> dict[str, Any]:
        return {f"{self.origin.role}_registry": self.origin.url, f"{self.destination.role}_registry": self.destination.url,
                "direction": f"{self.origin.role} -> {self.destination.role}"}


def _with_references(origin: RegistryClient, inv: Inventory, all_subjects: set[str]) -> None:
    """Read, into ``inv``, every subject its versions refer to that the filter left out (they are copied too:
    a schema cannot be registered before what it refers to)."""
    have = set(inv.subjects())
    while True:
        missing = sorted({r.subject for v in inv.versions for r in v.references} - have)
        missing = [s for s in missing if s in all_subjects]
        if not missing:
            return
        for s in missing:
            versions, compat, _mode = read_subject(origin, s)
            inv.versions.extend(versions)
            if compat:
                inv.subject_compatibility[s] = compat
            have.add(s)


def make_plan(d: Direction, patterns: tuple[str, ...], progress: Progress) -> tuple[Plan, Inventory, Inventory]:
    """Read both registries and plan the copy. A filter matching no subject, or an empty origin, is bad input."""
    progress(f"listing the subjects of the {d.origin.role} registry")
    every = list_subjects(d.origin)
    chosen = select(every, patterns)
    if patterns and not chosen:
        raise UsageError("--subject", f"{', '.join(patterns)} matches none of the {len(every)} subjects of the {d.origin.role} registry",
                         "give a subject name or glob that exists there (see `msk-migrate schemas plan`)")
    if not chosen:
        raise UsageError(d.origin.option, f"the {d.origin.role} registry {d.origin.url} holds no subject",
                         "point it at the registry the producers use")
    origin_inv = read_inventory(d.origin, chosen, progress)
    _with_references(d.origin, origin_inv, set(every))
    progress(f"reading the {d.destination.role} registry")
    there = set(list_subjects(d.destination))
    dest_inv = read_inventory(d.destination, [s for s in origin_inv.subjects() if s in there], progress)
    taken = read_ids(d.destination, origin_inv.ids())
    return plan_copy(origin_inv, dest_inv, taken), origin_inv, dest_inv


COLUMNS = [col("subject", "subject"), col("version", "version", numeric=True), col("id", "id", numeric=True),
           col("type", "schema_type"), col("deleted", "deleted"), col("action", "action"),
           col("detail", lambda r: r.get("reason") or r.get("compatibility") or "")]


def _outcome(command: str, verdict: str, code: int, rows: list[dict[str, Any]], d: Direction, plan: Plan,
             notes: list[str]) -> Outcome:
    shown = [r for r in rows if r["action"] != "present"]
    return Outcome(command=command, verdict=verdict, exit_code=code, rows=rows, talked_to=d.talked_to(),
                   extra={"to_copy": len(plan.to_copy), "present": len(plan.present), "conflicts": len(plan.conflicts)},
                   views=[View(f"schemas {d.origin.role} -> {d.destination.role}", COLUMNS, shown)] if shown else [],
                   notes=notes)


def plan_outcome(d: Direction, patterns: tuple[str, ...], progress: Progress) -> Outcome:
    plan, _, _ = make_plan(d, patterns, progress)
    route = choose_writer(d.destination).route
    notes = [f"{len(plan.to_copy)} version(s) to copy, {len(plan.present)} already there, {len(plan.conflicts)} conflict(s); "
             f"ids kept through: {route}"]
    verdict, code = ("conflicts", 2) if plan.conflicts else ("planned", 0)
    out = _outcome("schemas plan", verdict, code, plan.rows(), d, plan, notes)
    out.extra["route"] = route
    if plan.conflicts:
        out.error = conflict_line(d, plan)
    return out


def conflict_line(d: Direction, plan: Plan) -> str:
    c = plan.conflicts[0]
    more = f" (and {len(plan.conflicts) - 1} more)" if len(plan.conflicts) > 1 else ""
    return (f"{d.destination.option}: {c.subject} version {c.version} (id {c.id}): {c.reason}{more}; nothing written "
            f"(fix: remove or rename it on the {d.destination.role} registry, or copy into a registry that does not hold it)")


def check_written(dest: RegistryClient, written: list[SchemaVersion]) -> list[dict[str, Any]]:
    """What the destination does not hold as written (a row per version: missing, other id, other schema)."""
    missing = []
    ids = read_ids(dest, sorted({v.id for v in written}))
    for v in written:
        got = ids.get(v.id)
        if got is None:
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"id {v.id} is not on the {dest.role} registry"})
        elif identity_of(got) != v.identity():
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"id {v.id} holds another schema"})
    inv = read_inventory(dest, sorted({v.subject for v in written}))
    held = inv.by_key()
    for v in written:
        h = held.get(v.key)
        if h is None or h.id != v.id or h.deleted != v.deleted:
            what = "missing" if h is None else (f"under id {h.id}" if h.id != v.id else f"soft-deleted={h.deleted}")
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"{v.subject} version {v.version} is {what}"})
    for subject in sorted({v.subject for v in written}):
        live = [v.version for v in inv.versions if v.subject == subject and not v.deleted]
        latest = dest.get_or_none(subject_path(subject) + "/versions/latest") if live else None
        if live and (latest or {}).get("version") != max(live):
            missing.append({"subject": subject, "action": "not-kept",
                            "reason": f"its latest version is {(latest or {}).get('version')}, not {max(live)}"})
    return missing


def copy_outcome(d: Direction, patterns: tuple[str, ...], progress: Progress) -> Outcome:
    writer = choose_writer(d.destination, progress)  # refused before anything is read or written
    plan, _, dest_inv = make_plan(d, patterns, progress)
    if plan.conflicts:
        raise UsageError("", conflict_line(d, plan))
    existing: dict[str, list[int]] = {}
    for v in dest_inv.versions:
        existing.setdefault(v.subject, []).append(v.version)
    progress(f"writing {len(plan.to_copy)} version(s) to the {d.destination.role} registry ({writer.route})")
    writer.write(plan.to_copy, existing)
    write_settings(d.destination, plan)
    progress("reading back what was written")
    lost = check_written(d.destination, plan.to_copy)
    rows = [{**v.to_dict(), "action": "copied"} for v in plan.to_copy] + lost
    rows += [r for r in plan.rows() if r["action"] == "set-compatibility"]
    notes = [f"copied {len(plan.to_copy)} version(s) keeping ids and versions ({writer.route}); "
             f"{len(plan.present)} already there; {len(plan.compatibility) + bool(plan.global_compatibility)} setting(s) written"]
    if lost:
        notes.append(f"{len(lost)} version(s) not kept by the {d.destination.role} registry: see the rows")
        out = _outcome("schemas copy", "not-kept", 1, rows, d, plan, notes)
    else:
        out = _outcome("schemas copy", "copied", 0, rows, d, plan, notes)
    out.extra.update({"route": writer.route, "copied": len(plan.to_copy) if not lost else 0})
    return out


def verify_outcome(d: Direction, patterns: tuple[str, ...], progress: Progress) -> Outcome:
    plan, origin, _ = make_plan(d, patterns, progress)
    ok = plan.in_sync
    notes = [f"{len(plan.present)} of {len(origin.versions)} version(s) on the {d.destination.role} registry with the same id and schema; "
             f"{len(plan.to_copy)} missing, {len(plan.conflicts)} conflicting"]
    if not ok:
        notes.append(f"next: msk-migrate schemas copy --to {d.destination.role}" if not plan.conflicts else
                     "conflicting ids must be resolved on the destination first")
    return _outcome("schemas verify", "in-sync" if ok else "not-in-sync", 0 if ok else 1, plan.rows(), d, plan, notes)
