"""Two resolved schemas, compared as a consumer would see them: type, canonical text, references.

The comparison is the one of ``msk-migrate schemas plan|copy|verify`` and the gate's "schemas in sync":
:func:`msk_migrate.schemas.canonical.schema_identity` (whitespace and JSON Schema key order never count,
Avro field order and any default do; references compared as a set of ``(name, subject, version)``), so
``validate`` cannot call "differing" what ``schemas verify`` calls "in sync". What a reference points at is
compared by :mod:`.schema_proof`, which resolves each referenced subject version on both registries.

Invariant: stdlib only (the validation job imports it; so is :mod:`msk_migrate.schemas.canonical`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schemas.canonical import DEFAULT_TYPE, canonical_text, schema_identity

__all__ = ["DEFAULT_TYPE", "Reference", "ResolvedSchema", "canonical", "differences"]

Reference = tuple[str, str, int]  #: (name, subject, version)

#: The one canonical form (the name this module always exported).
canonical = canonical_text


@dataclass(frozen=True)
class ResolvedSchema:
    """A schema as a registry returns it for an id (``GET /schemas/ids/{id}``), canonicalised."""

    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()

    @classmethod
    def of(cls, body: dict[str, Any]) -> ResolvedSchema:
        """From the Confluent API's answer (``schema``, optional ``schemaType`` and ``references``)."""
        refs = ((str(r.get("name")), str(r.get("subject")), int(r.get("version") or 0)) for r in body.get("references") or [])
        return cls(*schema_identity(body.get("schemaType"), str(body.get("schema", "")), refs))


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
