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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..outcome import Outcome, View, col
from .client import RegistryClient
from .export import read_export
from .model import Inventory, SchemaVersion
from .planner import Plan, identity_of, plan_copy, unresolved_references
from .reader import PARALLEL, list_subjects, read_ids, read_inventory, read_subject, select, subject_path
from .renames import rename
from .writers import choose_writer, unsupported_type, write_settings

Progress = Callable[[str], None]


@dataclass
class Direction:
    """Which registry is read (``origin``) and which is written (``destination``); ``renames``: origin subject ->
    destination subject, the flow's topic renames in this direction (:func:`.renames.subject_map`)."""

    origin: RegistryClient
    destination: RegistryClient
    renames: dict[str, str] = field(default_factory=dict)

    def talked_to(self) -> dict[str, Any]:
        return {f"{self.origin.role}_registry": self.origin.url, f"{self.destination.role}_registry": self.destination.url,
                "direction": f"{self.origin.role} -> {self.destination.role}"}


def _with_references(origin: RegistryClient, inv: Inventory, all_subjects: set[str], whole: Inventory | None = None) -> None:
    """Read, into ``inv``, every subject its versions refer to that the filter left out (they are copied too:
    a schema cannot be registered before what it refers to). ``whole``: the registry already read in full."""
    have = set(inv.subjects())
    while True:
        missing = sorted({r.subject for v in inv.versions for r in v.references} - have)
        missing = [s for s in missing if s in all_subjects]
        if not missing:
            return
        for s in missing:
            if whole is not None:
                inv.versions.extend(v for v in whole.versions if v.subject == s)
                compat = whole.subject_compatibility.get(s)
            else:
                versions, compat, _mode = read_subject(origin, s)
                inv.versions.extend(versions)
            if compat:
                inv.subject_compatibility[s] = compat
            have.add(s)


def _subset(whole: Inventory, subjects: set[str]) -> Inventory:
    """The part of ``whole`` about ``subjects`` (global settings kept)."""
    return Inventory(url=whole.url, versions=[v for v in whole.versions if v.subject in subjects],
                     compatibility=whole.compatibility, mode=whole.mode,
                     subject_compatibility={s: c for s, c in whole.subject_compatibility.items() if s in subjects},
                     subject_mode={s: m for s, m in whole.subject_mode.items() if s in subjects})


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
    progress(f"reading the {d.origin.role} registry")
    origin_exp = read_export(d.origin)
    whole = origin_exp.inventory if origin_exp is not None else None
    origin_inv = _subset(whole, set(chosen)) if whole is not None else read_inventory(d.origin, chosen, progress)
    _with_references(d.origin, origin_inv, set(every), whole)
    broken = unresolved_references(origin_inv)
    if broken:
        v, why = broken[0]
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise UsageError(d.origin.option, f"{v.subject} version {v.version} (id {v.id}) on the {d.origin.role} registry: {why}{more}; "
                         "nothing written", f"register the imported schema on the {d.origin.role} registry and the version again with "
                         "a reference naming it (name = the import path), or leave the subject out with --subject")
    origin_inv = rename(origin_inv, d.renames)
    progress(f"reading the {d.destination.role} registry")
    dest_exp = read_export(d.destination)
    if dest_exp is not None:
        dest_inv = _subset(dest_exp.inventory, set(origin_inv.subjects()))
        taken = {i: dest_exp.contents.get(i) for i in origin_inv.ids()}
    else:
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
                   extra={"to_copy": len(plan.to_copy), "present": len(plan.present), "conflicts": len(plan.conflicts),
                          "renamed": {v.origin_subject: v.subject for v in plan.to_copy + plan.present if v.origin_subject}},
                   views=[View(f"schemas {d.origin.role} -> {d.destination.role}", COLUMNS, shown)] if shown else [],
                   notes=notes)


def plan_outcome(d: Direction, patterns: tuple[str, ...], progress: Progress) -> Outcome:
    plan, _, dest_inv = make_plan(d, patterns, progress)
    writer = choose_writer(d.destination)
    unsupported_type(d.destination, plan.to_copy)
    refused = writer.unkeepable(plan.to_copy, _existing(dest_inv))
    notes = [f"{len(plan.to_copy)} version(s) to copy, {len(plan.present)} already there, {len(plan.conflicts)} conflict(s); "
             f"ids kept through: {writer.route}"]
    rows = plan.rows()
    if refused:
        notes.append(f"{len(refused)} version(s) cannot keep their version number on the {d.destination.role} registry: see the rows")
        rows += [{**v.to_dict(), "action": "cannot-keep-version", "reason": reason} for v, reason in refused]
    verdict, code = ("conflicts", 2) if plan.conflicts else ("cannot-keep-versions", 2) if refused else ("planned", 0)
    out = _outcome("schemas plan", verdict, code, rows, d, plan, notes)
    out.extra["route"] = writer.route
    if plan.conflicts:
        out.error = conflict_line(d, plan)
    elif refused:
        out.error = unkeepable_line(d, refused)
    return out


def conflict_line(d: Direction, plan: Plan) -> str:
    c = plan.conflicts[0]
    more = f" (and {len(plan.conflicts) - 1} more)" if len(plan.conflicts) > 1 else ""
    return (f"{d.destination.option}: {c.subject} version {c.version} (id {c.id}): {c.reason}{more}; nothing written "
            f"(fix: remove or rename it on the {d.destination.role} registry, or copy into a registry that does not hold it)")


def _existing(dest: Inventory) -> dict[str, list[int]]:
    existing: dict[str, list[int]] = {}
    for v in dest.versions:
        existing.setdefault(v.subject, []).append(v.version)
    return existing


def unkeepable_line(d: Direction, refused: list[tuple[SchemaVersion, str]]) -> str:
    v, reason = refused[0]
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    return (f"{d.destination.option}: {v.subject} version {v.version} (id {v.id}) cannot keep its version number on the "
            f"{d.destination.role} registry: {reason}{more}; nothing written (fix: delete {v.subject} on the "
            f"{d.destination.role} registry and copy it again whole, or copy into a registry with Confluent IMPORT mode)")


def check_written(dest: RegistryClient, written: list[SchemaVersion]) -> list[dict[str, Any]]:
    """What the destination does not hold as written (a row per version: missing, other id, other schema, and per
    subject a ``latest`` that is not its highest live version). Read from one export on Apicurio, else through
    the Confluent API."""
    if not written:
        return []
    subjects = sorted({v.subject for v in written})
    exp = read_export(dest)
    if exp is not None:
        ids: dict[int, dict[str, Any] | None] = {i: exp.contents.get(i) for i in {v.id for v in written}}
        inv = _subset(exp.inventory, set(subjects))
    else:
        ids = read_ids(dest, sorted({v.id for v in written}))
        inv = read_inventory(dest, subjects)
    missing = []
    for v in written:
        got = ids.get(v.id)
        if got is None:
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"id {v.id} is not on the {dest.role} registry"})
        elif identity_of(got) != v.identity():
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"id {v.id} holds another schema"})
    held = inv.by_key()
    for v in written:
        h = held.get(v.key)
        if h is None or h.id != v.id or h.deleted != v.deleted:
            what = "missing" if h is None else (f"under id {h.id}" if h.id != v.id else f"soft-deleted={h.deleted}")
            missing.append({**v.to_dict(), "action": "not-kept", "reason": f"{v.subject} version {v.version} is {what}"})
    live: dict[str, int] = {}
    for h in inv.versions:
        if not h.deleted:
            live[h.subject] = max(live.get(h.subject, 0), h.version)
    if exp is not None:
        latest: dict[str, int | None] = {s: exp.latest.get(s) for s in subjects if s in live}
    else:
        def one(s: str) -> int | None:
            return (dest.get_or_none(subject_path(s) + "/versions/latest") or {}).get("version")
        with ThreadPoolExecutor(PARALLEL) as pool:
            chosen = [s for s in subjects if s in live]
            latest = dict(zip(chosen, pool.map(one, chosen), strict=True))
    for subject, version in sorted(latest.items()):
        if version != live[subject]:
            missing.append({"subject": subject, "action": "not-kept", "reason": f"its latest version is {version}, not {live[subject]}"})
    return missing


def copy_outcome(d: Direction, patterns: tuple[str, ...], progress: Progress) -> Outcome:
    writer = choose_writer(d.destination, progress)  # refused before anything is read or written
    plan, _, dest_inv = make_plan(d, patterns, progress)
    unsupported_type(d.destination, plan.to_copy)
    if plan.conflicts:
        raise UsageError("", conflict_line(d, plan))
    existing = _existing(dest_inv)
    refused = writer.unkeepable(plan.to_copy, existing)
    if refused:
        raise UsageError("", unkeepable_line(d, refused))
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
