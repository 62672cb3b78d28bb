"""The one canonical form of a schema: when two registries' answers are the same schema. ``schemas plan``,
``copy``, ``verify``, the gate's "schemas in sync" (through the planner) and ``validate``'s proof per record
(:mod:`msk_migrate.validation.schema_compare`) all compare :func:`schema_identity`, so none can call a pair
"in sync" that another calls "differing".

The form, per type (a registry that re-serialises a schema — Apicurio returns ``"string"`` for
``{"type":"string"}`` — is no difference, while any change of meaning is):

- **whitespace** never counts (JSON texts are parsed; Protobuf texts are tokenised);
- **AVRO**: a JSON document; object keys sorted; arrays keep their order, because in Avro they mean it
  (record fields, union branches and enum symbols are positional: reordering them changes the binary
  encoding). A schema node ``{"type": T}`` with nothing else is ``T``; that rule applies to schema nodes
  only (``type``, ``items``, ``values``, ``fields[*].type`` and union branches), never inside a ``default``
  or any other value, whose JSON is compared as it is;
- **JSON** (JSON Schema): a JSON document whose object keys are unordered (sorted here); arrays keep their
  order (``required`` or ``enum`` reordered counts as a difference: reported, never hidden);
- **defaults** and every other number: an integral float is its integer (``0.0`` is ``0``: one JSON number),
  while a default added, removed or changed is a difference;
- **PROTOBUF**: the ``.proto`` text as its tokens (:func:`.protobuf.canonical`): whitespace anywhere, ``//`` and
  ``/* */`` comments never count (a ``//`` inside a quoted string is text); every token does, in order (a field
  renumbered, renamed or moved, a message or an import added, an option changed is a difference). Equality is
  of the text a registry answers, not of the compiled descriptor: a schema registered as a base64
  ``FileDescriptorProto`` (confluent-kafka's Python serializer does so; Apicurio 3.3.3 keeps it as given) is
  not equal to its ``.proto`` text;
- any other type: lines stripped, blank lines and ``//`` comments dropped;
- a JSON text that does not parse is compared stripped, as it is;
- **references**: a set of ``(name, subject, version)``; their order in the answer does not count.

Invariant: stdlib only and Python 3.9 compatible — the validation job ships and imports this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .protobuf import canonical as _proto_canonical

#: The Confluent API leaves ``schemaType`` out for Avro.
DEFAULT_TYPE = "AVRO"

RefTuple = tuple[str, str, int]  #: (name, subject, version)
Identity = tuple[str, str, tuple[RefTuple, ...]]  #: (type, canonical text, sorted distinct references)

#: Avro keys whose value is a schema (or, for ``fields``, a list of fields each with a schema in ``type``).
_AVRO_SCHEMA_KEYS = ("type", "items", "values")


def _numbers(node: Any) -> Any:
    """``node`` with each integral float as its integer (JSON has one number type)."""
    if isinstance(node, float) and node.is_integer():
        return int(node)
    if isinstance(node, dict):
        return {k: _numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_numbers(v) for v in node]
    return node


def _avro(node: Any) -> Any:
    """An Avro schema node in normal form: ``{"type": T}`` alone is ``T``; only schema positions are walked."""
    if isinstance(node, list):  # a union: branches in order
        return [_avro(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = dict(node)
    for key in _AVRO_SCHEMA_KEYS:
        if key in out:
            out[key] = _avro(out[key])
    if isinstance(out.get("fields"), list):
        out["fields"] = [_field(f) for f in out["fields"]]
    if set(out) == {"type"} and isinstance(out["type"], str):
        return out["type"]
    return out


def _field(field: Any) -> Any:
    if not isinstance(field, dict) or "type" not in field:
        return field
    return {**field, "type": _avro(field["type"])}


def _uncommented(line: str) -> str:
    """``line`` without its ``//`` comment (a ``//`` inside double or single quotes is text)."""
    quote = ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def canonical_text(schema_type: str, text: str) -> str:
    """The normal form of ``text`` as a schema of ``schema_type`` (AVRO, PROTOBUF, JSON; empty = AVRO)."""
    kind = schema_kind(schema_type)
    if kind in ("AVRO", "JSON"):
        try:
            parsed = _numbers(json.loads(text))
        except ValueError:
            return text.strip()
        return json.dumps(_avro(parsed) if kind == "AVRO" else parsed, sort_keys=True, separators=(",", ":"))
    if kind == "PROTOBUF":
        return _proto_canonical(text)
    lines = (_uncommented(line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def schema_kind(schema_type: str | None) -> str:
    """The type as compared: upper case, the Confluent API's omitted type is AVRO."""
    return (schema_type or DEFAULT_TYPE).upper()


def schema_identity(schema_type: str | None, text: str, references: Iterable[RefTuple] = ()) -> Identity:
    """What makes two registry answers the same schema: type, canonical text, the set of references."""
    kind = schema_kind(schema_type)
    refs = tuple(sorted({(str(n), str(s), int(v)) for n, s, v in references}))
    return (kind, canonical_text(kind, text), refs)
