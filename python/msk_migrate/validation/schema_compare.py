"""Two resolved schemas, compared as a consumer would see them: canonical text, type, references.

Canonical text: Avro and JSON Schema are JSON documents, so they are parsed and dumped with sorted keys
and no whitespace (a registry that re-serialises a schema — Apicurio does — still compares equal, while
any change of a name, field, default or order of fields does not: JSON arrays keep their order).
Protobuf is compared exactly as text (two registries that store the same ``.proto`` return the same
text; a normaliser of Protobuf syntax is out of scope). A schema whose text does not parse as JSON is
compared exactly too.

References: ``(name, subject, version)`` each, compared as a set; what a reference points at is compared
by :mod:`.schema_proof`, which resolves each referenced subject version on both registries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: The Confluent API leaves ``schemaType`` out for Avro.
DEFAULT_TYPE = "AVRO"
JSON_TYPES = {"AVRO", "JSON"}

Reference = tuple[str, str, int]  #: (name, subject, version)


def canonical(schema_type: str, text: str) -> str:
    """The text two registries must agree on (see the module's docstring)."""
    if schema_type.upper() in JSON_TYPES:
        try:
            return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            return text
    return text


@dataclass(frozen=True)
class ResolvedSchema:
    """A schema as a registry returns it for an id (``GET /schemas/ids/{id}``), canonicalised."""

    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()

    @classmethod
    def of(cls, body: dict[str, Any]) -> ResolvedSchema:
        """From the Confluent API's answer (``schema``, optional ``schemaType`` and ``references``)."""
        schema_type = str(body.get("schemaType") or DEFAULT_TYPE).upper()
        refs = tuple(sorted(
            (str(r.get("name")), str(r.get("subject")), int(r.get("version") or 0))
            for r in body.get("references") or []
        ))
        return cls(schema_type, canonical(schema_type, str(body.get("schema", ""))), refs)


def differences(source: ResolvedSchema, target: ResolvedSchema) -> list[str]:
    """What differs between the two, one phrase each; empty = identical."""
    out = []
    if source.schema_type != target.schema_type:
        out.append(f"type {source.schema_type} on the source, {target.schema_type} on the target")
    if source.text != target.text:
        out.append(f"schema text differs ({_first_difference(source.text, target.text)})")
    if source.references != target.references:
        only_s = sorted(set(source.references) - set(target.references))
        only_t = sorted(set(target.references) - set(source.references))
        parts = []
        if only_s:
            parts.append("only on the source: " + ", ".join(_ref(r) for r in only_s))
        if only_t:
            parts.append("only on the target: " + ", ".join(_ref(r) for r in only_t))
        out.append("references differ (" + "; ".join(parts) + ")")
    return out


def _ref(r: Reference) -> str:
    return f"{r[0]} -> {r[1]} v{r[2]}"


def _first_difference(a: str, b: str, context: int = 24) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))  # noqa: B905 - the Spark job runs on 3.9
    lo = max(0, i - context)
    return f"at character {i}: source …{a[lo:i + context]!r}…, target …{b[lo:i + context]!r}…"
