""""schemas in sync": the readiness condition of ``cutover check`` and the line of ``lag`` for topics whose
records carry schema ids.

A group may move only when every schema its producers may have used is on the target registry under the
same id: a consumer on the target resolves the id its record carries there. The check is the one of
``msk-migrate schemas verify`` (:func:`msk_migrate.schemas.operations.make_plan`): every version of every
subject of the source registry is on the target with the same id, version and schema (canonical text, type,
references). The whole registry, not only the topics' own subjects: a record's schema may refer to others,
and a schema registered on the source after the copy (a producer's new release) is caught whatever its subject.

Which topics carry schema'd records: those whose newest records carry schema ids in their keys or values
(:func:`.record_ids.tail_ids`, the same wire format and share as ``validate``), whatever the subject name
strategy: the subjects holding those ids on the source registry tell it (:mod:`msk_migrate.validation.subject_strategy`:
``<topic>-key|value``, ``<record full name>``, ``<topic>-<record full name>``), and the evidence names them.
Topics with a topic-name subject (``<topic>-value`` or ``<topic>-key``) count as schema'd too, records or not
(an empty topic whose producers will use it), and that is all that is used when no records are given.

Protobuf: each message-index array the newest records carry (tallied with their id) must name a message of the
schema the target registry holds under that id, which is what a consumer there decodes with
(:func:`index_problems`). Records that carry no readable array, or whose arrays were not read, are not proven, and
they fail the condition too, named.

Refused (:class:`UsageError`, exit 2, before any verdict): a part whose ids' subjects fit no strategy for its
topic, or fit two alike, one line naming the topic, the subject and the fix; a part in Apicurio's 8-byte
global-id format (not resolved: :func:`msk_migrate.validation.schema_proof.wide_ids_refusal`). A value id the source registry
does not know fails the condition (the records were written with another registry); a key id does only when
another of the part's ids resolves (keys none of whose ids resolve are raw keys starting with zero bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import UsageError
from ..outcome import quiet
from ..schemas.client import RegistryClient
from ..schemas.operations import Direction, make_plan
from ..schemas.protobuf import indexes_of_prefix, message_at, show
from ..schemas.reader import list_subjects, schema_by_id
from ..schemas.renames import subject_map
from ..validation.schema_ids import NO_PREFIX, NOT_READ, PARTS, TopicIds
from ..validation.schema_proof import wide_ids_refusal
from ..validation.subject_strategy import CLASSES, IdSubjects, PartStrategy, classify, record_name

NAME = "schemas in sync"
#: versions named in the evidence when some are missing
LISTED = 3


@dataclass(frozen=True)
class SchemaSync:
    """The verdict: ``topics`` the schema'd ones among those asked; ``ok`` every source version on the target."""

    ok: bool
    topics: list[str]
    evidence: str
    #: per schema'd topic found from its records, each part's strategy and subjects
    strategies: dict[str, dict[str, PartStrategy]] = field(default_factory=dict)


@dataclass
class RecordSubjects:
    """What the records' ids say: per topic and part the strategy, and the ids the source registry lacks."""

    strategies: dict[str, dict[str, PartStrategy]] = field(default_factory=dict)
    unknown: dict[str, list[int]] = field(default_factory=dict)  #: "topic part" -> ids


def record_subjects(source: RegistryClient, record_ids: dict[str, TopicIds], topics: list[str]) -> RecordSubjects:
    """The strategy of each schema'd part of ``topics`` from the subjects holding its ids on ``source``; raises
    :class:`UsageError` when a part's strategy cannot be told (:func:`.subject_strategy.classify`)."""
    out = RecordSubjects()
    for topic in topics:
        tally = record_ids.get(topic)
        if tally is None:
            continue
        for part in PARTS:
            ids = tally.part(part)
            if not ids.schemad:
                continue
            if ids.apicurio_global_ids:
                raise UsageError(source.option, wide_ids_refusal(topic, [part]))
            held: dict[int, IdSubjects] = {}
            missing = []
            for i in ids.ids:
                body = schema_by_id(source, i)
                # soft-deleted subjects too: records written before a subject was deleted still carry its ids
                versions = source.get_or_none(f"/schemas/ids/{i}/versions", params={"deleted": "true"})
                if body is None or versions is None:
                    missing.append(i)
                    continue
                subjects = tuple(sorted({str(v["subject"]) for v in versions if isinstance(v, dict) and "subject" in v}))
                held[i] = IdSubjects(subjects, record_name(str(body.get("schemaType") or "AVRO").upper(), str(body.get("schema", ""))))
            if missing and (part == "value" or held):
                out.unknown[f"{topic} {part}"] = missing
            if not held:
                continue
            found = classify(topic, part, held)
            if found.problem is not None:
                raise UsageError(source.option, found.problem)
            out.strategies.setdefault(topic, {})[part] = found
    return out


def index_problems(target: RegistryClient, record_ids: dict[str, TopicIds], topics: list[str]) -> list[str]:
    """Per Protobuf id the records of ``topics`` carry: their message-index arrays that name no message of the
    schema ``target`` holds under the id, and records whose array is missing or was not read (not proven)."""
    out: list[str] = []
    for topic in topics:
        tally = record_ids.get(topic)
        parts = [tally.part(p) for p in PARTS] if tally is not None else []
        for part, ids in zip(PARTS, parts, strict=False):
            if not ids.schemad:
                continue
            for i, by in sorted(ids.source.prefixes.items()):
                body = schema_by_id(target, i)
                if body is None or str(body.get("schemaType") or "").upper() != "PROTOBUF":
                    continue  # an id missing on the target fails the version check; other types carry no array
                where = f"{topic} {part} schema id {i} (PROTOBUF)"
                for prefix, n in sorted(by.items()):
                    if prefix == NO_PREFIX:
                        out.append(f"{where}: {n} record(s) carry no readable message-index array after the id (not proven)")
                    elif prefix == NOT_READ:
                        out.append(f"{where}: the message indexes of {n} record(s) were not read (not proven)")
                    elif message_at(str(body.get("schema", "")), indexes_of_prefix(prefix)) is None:
                        out.append(f"{where}: message index {show(indexes_of_prefix(prefix))} of {n} record(s) names no "
                                   f"message of the schema the {target.role} registry holds under that id")
    return out


def schemad_topics(source: RegistryClient, topics: list[str], found: RecordSubjects | None = None) -> list[str]:
    """The topics among ``topics`` with a topic-name-strategy subject on the ``source`` registry, and (given
    what the registry says of the ids their records carry, :func:`record_subjects`) those whose records carry ids."""
    subjects = set(list_subjects(source))
    by_records = set(found.strategies) | {k.split(" ")[0] for k in found.unknown} if found is not None else set()
    return [t for t in topics if f"{t}-value" in subjects or f"{t}-key" in subjects or t in by_records]


def schemas_in_sync(source: RegistryClient, target: RegistryClient, topics: list[str],
                    record_ids: dict[str, TopicIds] | None = None,
                    topic_renames: Mapping[str, str] | None = None) -> SchemaSync | None:
    """The condition for ``topics``, or None when none of them carries schema'd records (nothing to require).
    ``record_ids``: the ids their newest records carry (:func:`.record_ids.tail_ids`); without them only
    topic-name subjects say which topics are schema'd. ``topic_renames``: the flow's, so a renamed topic's
    subjects are looked for under the name `schemas copy` gave them (from the target back, the other way)."""
    found = record_subjects(source, record_ids, topics) if record_ids is not None else None
    schemad = schemad_topics(source, topics, found)
    if not schemad:
        return None
    strategies = found.strategies if found is not None else {}
    named = "; ".join(f"{t} {p}: {CLASSES[s.strategy]} ({', '.join(s.subjects[:3])})"
                      for t, parts in strategies.items() for p, s in parts.items() if s.strategy is not None)
    where = (f"{', '.join(schemad)} carry schema'd records{f' ({named})' if named else ''}; "
             f"{source.role} {source.url} -> {target.role} {target.url}: ")
    if found is not None and found.unknown:
        what, ids = next(iter(found.unknown.items()))
        return SchemaSync(False, schemad, where + f"{what} schema id(s) {', '.join(map(str, ids[:LISTED]))} not on the "
                          f"{source.role} registry: the records were written with another registry (check "
                          f"{source.option})", strategies)
    renames = subject_map(topic_renames or {}, rollback=source.role == "target")
    plan, origin, _ = make_plan(Direction(source, target, renames), (), quiet)
    unproven = index_problems(target, record_ids or {}, schemad)
    if plan.in_sync and not unproven:
        return SchemaSync(True, schemad, where + f"all {len(origin.versions)} version(s) on the {target.role} registry "
                          "under the same id with the same schema", strategies)
    if plan.in_sync:
        more = f" (and {len(unproven) - 1} more)" if len(unproven) > 1 else ""
        return SchemaSync(False, schemad, where + f"all {len(origin.versions)} version(s) on the {target.role} registry, "
                          f"but Protobuf message indexes not proven: {unproven[0]}{more}", strategies)
    missing = [f"{v.subject} v{v.version} (id {v.id})" for v in plan.to_copy[:LISTED]]
    more = f" and {len(plan.to_copy) - LISTED} more" if len(plan.to_copy) > LISTED else ""
    parts = []
    if plan.to_copy:
        parts.append(f"{len(plan.to_copy)} version(s) missing on the {target.role} registry: {', '.join(missing)}{more} "
                     f"(run `msk-migrate schemas copy --to {target.role}`)")
    if plan.conflicts:
        c = plan.conflicts[0]
        parts.append(f"{len(plan.conflicts)} conflicting, e.g. {c.subject} v{c.version} (id {c.id}): {c.reason}")
    if unproven:
        parts.append(f"Protobuf message indexes not proven: {unproven[0]}")
    if not parts:
        parts.append(f"{len(plan.compatibility) + bool(plan.global_compatibility)} compatibility setting(s) differ "
                     f"(run `msk-migrate schemas copy --to {target.role}`)")
    return SchemaSync(False, schemad, where + "; ".join(parts), strategies)
