"""What a copy must do, from the two inventories alone (no I/O): which versions the target lacks, which it
already holds, and which cannot be copied without changing an id.

A source version is
- **present** when the target holds the same subject and version under the same id and the same schema
  (:meth:`SchemaVersion.identity`);
- a **conflict** when the target holds that subject and version as something else, or its id is taken on
  the target by a different schema (any subject): copying it would renumber or rewrite, so nothing is written;
- else **to copy**. Versions to copy are ordered references first (a schema after every version it refers
  to), then by id, so a registry that checks references accepts each one as it comes.

Compatibility set on a source subject and not equal on the target is a setting to copy; so is the global
one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .canonical import Identity, schema_identity
from .model import Inventory, Reference, SchemaVersion
from .protobuf import missing_imports


@dataclass(frozen=True)
class Conflict:
    subject: str
    version: int
    id: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "version": self.version, "id": self.id, "reason": self.reason}


@dataclass
class Plan:
    to_copy: list[SchemaVersion] = field(default_factory=list)
    present: list[SchemaVersion] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    compatibility: dict[str, str] = field(default_factory=dict)  #: subject -> level to set on the target
    global_compatibility: str | None = None  #: to set on the target, when it differs

    @property
    def in_sync(self) -> bool:
        return not (self.to_copy or self.conflicts or self.compatibility or self.global_compatibility)

    def rows(self) -> list[dict[str, Any]]:
        """One row per source version (action: copy, present, conflict) and per setting to copy."""
        rows = [{**v.to_dict(), "action": "copy"} for v in self.to_copy]
        rows += [{**c.to_dict(), "action": "conflict"} for c in self.conflicts]
        rows += [{**v.to_dict(), "action": "present"} for v in self.present]
        rows += [{"subject": s, "action": "set-compatibility", "compatibility": level} for s, level in sorted(self.compatibility.items())]
        if self.global_compatibility:
            rows.append({"subject": "(global)", "action": "set-compatibility", "compatibility": self.global_compatibility})
        return rows


def identity_of(raw: dict[str, Any]) -> Identity:
    """The identity of what ``/schemas/ids/{id}`` returned."""
    return schema_identity(raw.get("schemaType"), str(raw["schema"]),
                           ((r.name, r.subject, r.version) for r in map(Reference.from_api, raw.get("references") or ())))


def references_first(versions: list[SchemaVersion]) -> list[SchemaVersion]:
    """``versions`` ordered so that each comes after the versions (of this list) it refers to; ties by id.
    A reference cycle cannot be registered anywhere: its members keep id order at the end."""
    pending = sorted(versions, key=lambda v: (v.id, v.subject, v.version))
    keys = {v.key for v in pending}
    placed: set[tuple[str, int]] = set()
    ordered: list[SchemaVersion] = []
    while pending:
        ready = [v for v in pending if all((r.subject, r.version) in placed or (r.subject, r.version) not in keys for r in v.references)]
        if not ready:
            ordered.extend(pending)
            break
        for v in ready:
            ordered.append(v)
            placed.add(v.key)
        pending = [v for v in pending if v.key not in placed]
    return ordered


def plan_copy(source: Inventory, target: Inventory, target_ids: dict[int, dict[str, Any] | None]) -> Plan:
    """The plan of copying ``source`` to ``target`` (``target_ids``: what the target holds under each source
    id, None when the id is free)."""
    plan = Plan()
    on_target = target.by_key()
    to_copy = []
    for v in sorted(source.versions, key=lambda x: (x.subject, x.version)):
        there = on_target.get(v.key)
        if there is not None:
            if there.id == v.id and there.identity() == v.identity():
                plan.present.append(v)
            elif there.id != v.id:
                plan.conflicts.append(Conflict(v.subject, v.version, v.id,
                                               f"the target holds {v.subject} version {v.version} under id {there.id}"))
            else:
                plan.conflicts.append(Conflict(v.subject, v.version, v.id,
                                               f"the target holds {v.subject} version {v.version} as a different schema"))
            continue
        taken = target_ids.get(v.id)
        if taken is not None and identity_of(taken) != v.identity():
            plan.conflicts.append(Conflict(v.subject, v.version, v.id,
                                           f"id {v.id} is taken on the target by a different schema"))
            continue
        to_copy.append(v)
    plan.to_copy = references_first(to_copy)
    for subject, level in source.subject_compatibility.items():
        if target.subject_compatibility.get(subject) != level:
            plan.compatibility[subject] = level
    if source.compatibility and source.compatibility != target.compatibility:
        plan.global_compatibility = source.compatibility
    return plan


def unresolved_references(origin: Inventory) -> list[tuple[SchemaVersion, str]]:
    """The versions of ``origin`` that cannot be registered anywhere as they are, each with what is missing: a
    reference to a subject version ``origin`` does not hold (read with every subject referred to), or a Protobuf
    ``import`` that no reference names (a registry would keep the text, a consumer could not compile it)."""
    held = {v.key for v in origin.versions}
    out = []
    for v in sorted(origin.versions, key=lambda x: x.key):
        lost = [r for r in v.references if (r.subject, r.version) not in held]
        if lost:
            r = lost[0]
            out.append((v, f"its reference {r.name} names {r.subject} version {r.version}, which the registry does not hold"))
            continue
        if v.schema_type.upper() == "PROTOBUF":
            unnamed = missing_imports(v.schema, [r.name for r in v.references])
            if unnamed:
                out.append((v, f'it imports "{unnamed[0]}", which none of its references names'))
    return out
