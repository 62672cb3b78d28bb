"""Which subject name strategy a topic's producers use, told from the records: the subjects that hold the
ids the records carry.

A serializer looks up (or registers) a record's schema under a subject its ``subject.name.strategy`` names,
one strategy per part (key or value):

* ``topic`` (TopicNameStrategy, the default): ``<topic>-key`` / ``<topic>-value``;
* ``record`` (RecordNameStrategy): the record's full name (Avro ``namespace.name``, JSON Schema ``title``,
  Protobuf ``package.Message``);
* ``topic-record`` (TopicRecordNameStrategy): ``<topic>-<record full name>``.

The registry says which subjects hold an id (Confluent API ``GET /schemas/ids/{id}/versions``); each such
subject is matched against the three names for the topic and part. Invariants: a part's strategy is the one
every id of the part fits (:func:`classify`); an id whose subjects fit none, ids that fit different
strategies, or ids that fit two strategies alike are a :class:`PartStrategy` with a ``problem`` (one line
naming the topic, the subject and the fix) and no strategy — never a guess. Pure functions, stdlib only
(the validation job's modules run on EMR and Glue).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TOPIC = "topic"
RECORD = "record"
TOPIC_RECORD = "topic-record"
STRATEGIES = (TOPIC, RECORD, TOPIC_RECORD)
#: The serializer setting each strategy is (Confluent's class names), for the fix in a problem's line.
CLASSES = {TOPIC: "TopicNameStrategy", RECORD: "RecordNameStrategy", TOPIC_RECORD: "TopicRecordNameStrategy"}
FIX = ("register the schema under the subject the producers' subject.name.strategy names (<topic>-key|value, "
       "<record full name> or <topic>-<record full name>), or set the serializer's subject.name.strategy to match")

_PROTO_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_PROTO_MESSAGE = re.compile(r"^\s*message\s+(\w+)", re.MULTILINE)


def record_name(schema_type: str, text: str) -> str | None:
    """The full name a RecordNameStrategy gives the schema; None when it has none (an Avro primitive or
    union, a JSON Schema without ``title``, a Protobuf file without a message, text that does not parse)."""
    if schema_type == "PROTOBUF":
        message = _PROTO_MESSAGE.search(text)
        if message is None:
            return None
        package = _PROTO_PACKAGE.search(text)
        return f"{package.group(1)}.{message.group(1)}" if package else message.group(1)
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    if schema_type == "JSON":
        title = doc.get("title")
        return title if isinstance(title, str) and title else None
    name = doc.get("name")
    if not isinstance(name, str) or not name or doc.get("type") not in ("record", "enum", "fixed"):
        return None
    namespace = doc.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


def fits(topic: str, part: str, subject: str, record: str | None) -> set[str]:
    """The strategies under which a serializer of ``topic``'s ``part`` would use ``subject``."""
    out = set()
    if subject == f"{topic}-{part}":
        out.add(TOPIC)
    if record is not None and subject == record:
        out.add(RECORD)
    if record is not None and subject == f"{topic}-{record}":
        out.add(TOPIC_RECORD)
    return out


@dataclass(frozen=True)
class PartStrategy:
    """One part of one topic: the strategy every id fits and the subjects it names, or a ``problem``."""

    strategy: str | None
    subjects: tuple[str, ...] = ()
    problem: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"strategy": self.strategy, "subjects": list(self.subjects), "problem": self.problem}


@dataclass(frozen=True)
class IdSubjects:
    """What the registry says of one id: the subjects that hold it and the schema's record full name."""

    subjects: tuple[str, ...]
    record: str | None


def classify(topic: str, part: str, ids: Mapping[int, IdSubjects]) -> PartStrategy:
    """The strategy of ``topic``'s ``part`` from the subjects of the ids its records carry."""
    if not ids:
        return PartStrategy(None)
    per_id: dict[int, dict[str, list[str]]] = {}
    for i, held in sorted(ids.items()):
        found: dict[str, list[str]] = {}
        for subject in held.subjects:
            for s in fits(topic, part, subject, held.record):
                found.setdefault(s, []).append(subject)
        if not found:
            names = ", ".join(_expected(topic, part, held.record))
            by = ", ".join(held.subjects[:5]) if held.subjects else "no subject"
            return PartStrategy(None, held.subjects, (
                f"topic {topic}: {part} schema id {i} is held by {by}, which fits no subject name strategy of this "
                f"topic ({names}): {FIX}"))
        per_id[i] = found
    common = set(STRATEGIES)
    for found in per_id.values():
        common &= set(found)
    if len(common) == 1:
        (strategy,) = common
        return PartStrategy(strategy, tuple(sorted({s for f in per_id.values() for s in f[strategy]})))
    if not common:
        seen = {i: "/".join(CLASSES[s] for s in STRATEGIES if s in f) for i, f in per_id.items()}
        listed = ", ".join(f"id {i} {s}" for i, s in list(seen.items())[:4])
        first = next(iter(per_id.values()))
        subject = next(iter(first.values()))[0]
        return PartStrategy(None, tuple(sorted({s for f in per_id.values() for v in f.values() for s in v})), (
            f"topic {topic}: {part} ids fit different subject name strategies ({listed}; e.g. subject {subject}), so "
            f"which one the producers use cannot be told from the records: {FIX}"))
    i, found = next((i, f) for i, f in per_id.items() if len(set(f) & common) > 1)
    both = sorted({s for s in common for s in found[s]})
    return PartStrategy(None, tuple(both), (
        f"topic {topic}: {part} schema id {i} is held by subjects {' and '.join(both)}, which fit "
        f"{' and '.join(CLASSES[s] for s in STRATEGIES if s in common)} alike, so which one the producers use cannot "
        f"be told from the records: keep the schema under the one subject the producers' subject.name.strategy names"))


def _expected(topic: str, part: str, record: str | None) -> Sequence[str]:
    if record is None:
        return [f"{topic}-{part}", "the record name (the schema has none)"]
    return [f"{topic}-{part}", record, f"{topic}-{record}"]
