"""A renamed topic's subjects follow it: the flow's ``migration.topic_renames`` (old -> new on the target) moves the
TopicNameStrategy subjects ``<old>-key`` / ``<old>-value`` to ``<new>-key`` / ``<new>-value`` on the destination,
with every id and version kept (records on the renamed topic carry the same ids; a consumer of ``<new>`` looks
up ``<new>-value``). Pure: no I/O.

Invariants: only a subject that is exactly ``<old>-key`` or ``<old>-value`` moves (other subject-name strategies
name no topic this can see); a reference to a moved subject is moved with it (the destination has no ``<old>``
subject to point at); the rollback direction (``--to source``) maps back, new -> old; two origin subjects that
would land on one destination subject are bad input naming ``migration.topic_renames``, nothing read further.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..errors import UsageError
from .model import Inventory, Reference, SchemaVersion

SUFFIXES = ("-key", "-value")
OPTION = "migration.topic_renames"


def subject_map(topic_renames: Mapping[str, str], rollback: bool = False) -> dict[str, str]:
    """Origin subject -> destination subject for every TopicNameStrategy subject of a renamed topic."""
    pairs = {new: old for old, new in topic_renames.items()} if rollback else dict(topic_renames)
    return {f"{a}{suffix}": f"{b}{suffix}" for a, b in pairs.items() for suffix in SUFFIXES}


def rename(inv: Inventory, subjects: Mapping[str, str]) -> Inventory:
    """``inv`` with each subject of ``subjects`` under its destination name (references and settings too)."""
    if not subjects:
        return inv
    held = set(inv.subjects())
    landed: dict[str, str] = {}
    for s in sorted(held):
        dest = subjects.get(s, s)
        if dest in landed:
            a, b = sorted((landed[dest], s))
            raise UsageError(OPTION, f"{a} and {b} would both be copied to the subject {dest}",
                             f"keep one of them: drop the rename that moves one onto {dest}, or delete the other subject")
        landed[dest] = s

    def moved(v: SchemaVersion) -> SchemaVersion:
        refs = tuple(Reference(r.name, subjects.get(r.subject, r.subject), r.version) for r in v.references)
        if v.subject not in subjects and refs == v.references:
            return v
        return replace(v, subject=subjects.get(v.subject, v.subject), references=refs,
                       origin_subject=v.subject if v.subject in subjects else v.origin_subject)

    return Inventory(url=inv.url, versions=[moved(v) for v in inv.versions], compatibility=inv.compatibility, mode=inv.mode,
                     subject_compatibility={subjects.get(s, s): c for s, c in inv.subject_compatibility.items()},
                     subject_mode={subjects.get(s, s): m for s, m in inv.subject_mode.items()})
