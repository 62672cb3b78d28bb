"""When two schema texts are the same schema: the text each registry returns is normalised per type, so a
registry that re-serialises (Apicurio returns ``"string"`` for ``{"type":"string"}``) is not a difference,
while any change of meaning is.

AVRO and JSON: parsed and dumped with sorted keys and no spaces; an Avro ``{"type": T}`` with nothing else is
``T``. PROTOBUF (and any other type): lines stripped of surrounding spaces, blank lines and ``//`` comments
dropped. A text that does not parse is compared as it is.
"""

from __future__ import annotations

import json
from typing import Any


def _avro(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: _avro(v) for k, v in node.items()}
        if set(node) == {"type"} and isinstance(node["type"], str):
            return node["type"]
        return node
    if isinstance(node, list):
        return [_avro(v) for v in node]
    return node


def canonical_text(schema_type: str, text: str) -> str:
    """The normal form of ``text`` as a schema of ``schema_type`` (AVRO, PROTOBUF, JSON)."""
    kind = (schema_type or "AVRO").upper()
    if kind in ("AVRO", "JSON"):
        try:
            parsed = json.loads(text)
        except ValueError:
            return text.strip()
        return json.dumps(_avro(parsed) if kind == "AVRO" else parsed, sort_keys=True, separators=(",", ":"))
    lines = (line.split("//", 1)[0].strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)
