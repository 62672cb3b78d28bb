"""What one registry holds, as read through the Confluent API: schema versions (subject, version, id, type,
text, references, soft-deleted or not), compatibility and mode, global and per subject.

Invariants: a :class:`SchemaVersion` is immutable; two versions are the same schema when their
:meth:`SchemaVersion.identity` (type, canonical text, references) is equal, whatever their subject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .canonical import Identity, schema_identity


@dataclass(frozen=True, order=True)
class Reference:
    """A schema's reference to ``subject`` version ``version``, under the import name ``name``."""

    name: str
    subject: str
    version: int

    @classmethod
    def from_api(cls, raw: dict[str, Any]) -> Reference:
        return cls(name=str(raw["name"]), subject=str(raw["subject"]), version=int(raw["version"]))

    def to_api(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class SchemaVersion:
    subject: str
    version: int
    id: int
    schema_type: str  #: AVRO, PROTOBUF or JSON (the API omits AVRO)
    schema: str
    references: tuple[Reference, ...] = ()
    deleted: bool = False  #: soft-deleted on its registry (listed only with ?deleted=true)
    origin_subject: str | None = None  #: the subject it has on the registry read, when a topic rename moves it (:mod:`.renames`)

    @property
    def key(self) -> tuple[str, int]:
        return (self.subject, self.version)

    def identity(self) -> Identity:
        """What makes two versions the same schema: type, canonical text, references (:mod:`.canonical`)."""
        return schema_identity(self.schema_type, self.schema, ((r.name, r.subject, r.version) for r in self.references))

    def to_dict(self) -> dict[str, Any]:
        out = {"subject": self.subject, "version": self.version, "id": self.id, "schema_type": self.schema_type,
               "references": [r.to_api() for r in self.references], "deleted": self.deleted}
        if self.origin_subject is not None:
            out["origin_subject"] = self.origin_subject
        return out


@dataclass
class Inventory:
    """One registry's content (or the part of it a subject filter selects)."""

    url: str
    versions: list[SchemaVersion] = field(default_factory=list)
    compatibility: str | None = None  #: global
    subject_compatibility: dict[str, str] = field(default_factory=dict)  #: set on the subject itself
    mode: str | None = None  #: global
    subject_mode: dict[str, str] = field(default_factory=dict)

    def subjects(self) -> list[str]:
        return sorted({v.subject for v in self.versions})

    def by_key(self) -> dict[tuple[str, int], SchemaVersion]:
        return {v.key: v for v in self.versions}

    def ids(self) -> list[int]:
        return sorted({v.id for v in self.versions})
