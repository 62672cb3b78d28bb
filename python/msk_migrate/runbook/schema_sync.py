""""schemas in sync": the readiness condition of ``cutover check`` and the line of ``lag`` for topics whose
records carry schema ids.

A group may move only when every schema its producers may have used is on the target registry under the
same id: a consumer on the target resolves the id its record carries there. The check is the one of
``msk-migrate schemas verify`` (:func:`msk_migrate.schemas.operations.make_plan`): every version of every
subject of the source registry is on the target with the same id, version and schema (canonical text, type,
references). The whole registry, not only the topics' own subjects: a record's schema may refer to others,
and a schema registered on the source after the copy (a producer's new release) is caught whatever its subject.

Which topics carry schema'd records: those with a subject of the topic-name strategy (``<topic>-value`` or
``<topic>-key``) on the source registry. Topics written with another subject-name strategy are not detected
here; the validation report's schema rows (which read the ids of the records themselves) cover them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..outcome import quiet
from ..schemas.client import RegistryClient
from ..schemas.operations import Direction, make_plan
from ..schemas.reader import list_subjects

NAME = "schemas in sync"
#: versions named in the evidence when some are missing
LISTED = 3


@dataclass(frozen=True)
class SchemaSync:
    """The verdict: ``topics`` the schema'd ones among those asked; ``ok`` every source version on the target."""

    ok: bool
    topics: list[str]
    evidence: str


def schemad_topics(source: RegistryClient, topics: list[str]) -> list[str]:
    """The topics among ``topics`` with a topic-name-strategy subject on the ``source`` registry."""
    subjects = set(list_subjects(source))
    return [t for t in topics if f"{t}-value" in subjects or f"{t}-key" in subjects]


def schemas_in_sync(source: RegistryClient, target: RegistryClient, topics: list[str]) -> SchemaSync | None:
    """The condition for ``topics``, or None when none of them carries schema'd records (nothing to require)."""
    schemad = schemad_topics(source, topics)
    if not schemad:
        return None
    plan, origin, _ = make_plan(Direction(source, target), (), quiet)
    where = f"{', '.join(schemad)} carry schema'd records; {source.role} {source.url} -> {target.role} {target.url}: "
    if plan.in_sync:
        return SchemaSync(True, schemad, where + f"all {len(origin.versions)} version(s) on the {target.role} registry "
                          "under the same id with the same schema")
    missing = [f"{v.subject} v{v.version} (id {v.id})" for v in plan.to_copy[:LISTED]]
    more = f" and {len(plan.to_copy) - LISTED} more" if len(plan.to_copy) > LISTED else ""
    parts = []
    if plan.to_copy:
        parts.append(f"{len(plan.to_copy)} version(s) missing on the {target.role} registry: {', '.join(missing)}{more} "
                     f"(run `msk-migrate schemas copy --to {target.role}`)")
    if plan.conflicts:
        c = plan.conflicts[0]
        parts.append(f"{len(plan.conflicts)} conflicting, e.g. {c.subject} v{c.version} (id {c.id}): {c.reason}")
    if not parts:
        parts.append(f"{len(plan.compatibility) + bool(plan.global_compatibility)} compatibility setting(s) differ "
                     f"(run `msk-migrate schemas copy --to {target.role}`)")
    return SchemaSync(False, schemad, where + "; ".join(parts))
