"""One canonical form (issue 45, part 3): the same pair of registry answers gets one answer — same schema or
different — from the plan, the copy's read-back, verify, the gate's "schemas in sync" and validate's proof."""

from __future__ import annotations

import json
from typing import Any

import pytest

from msk_migrate.runbook import schema_sync
from msk_migrate.schemas import operations
from msk_migrate.schemas.model import Inventory, Reference, SchemaVersion
from msk_migrate.schemas.planner import identity_of, plan_copy
from msk_migrate.validation.schema_compare import ResolvedSchema, differences

REC = {"type": "record", "name": "Order", "namespace": "shop",
       "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}]}


def avro(node: Any, **dump: Any) -> dict[str, Any]:
    return {"schema": json.dumps(node, **dump)}


def with_fields(*fields: dict[str, Any]) -> dict[str, Any]:
    return {**REC, "fields": list(fields)}


ID, NOTE = {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}
JSON_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 0}}, "required": ["a"]}
REFS = [{"name": "shop.Item", "subject": "item-value", "version": 1}, {"name": "shop.Addr", "subject": "addr-value", "version": 2}]

#: (what it shows, source answer, target answer, the same schema?)
PAIRS: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("whitespace and indentation", avro(REC), avro(REC, indent=4), True),
    ("Avro object key order", avro(REC), {"schema": '{"fields":[{"type":"long","name":"id"},{"default":null,"type":["null",'
                                                    '"string"],"name":"note"}],"namespace":"shop","name":"Order","type":"record"}'}, True),
    ("Avro record fields reordered", avro(REC), avro(with_fields(NOTE, ID)), False),
    ("Avro union branches reordered", avro(REC), avro(with_fields(ID, {**NOTE, "type": ["string", "null"]})), False),
    ("Avro {type: T} is T", avro("string"), avro({"type": "string"}), True),
    ("Avro {type: T} is T inside a field", avro(REC), avro(with_fields({"name": "id", "type": {"type": "long"}}, NOTE)), True),
    ("Avro default added", avro(REC), avro(with_fields({**ID, "default": 0}, NOTE)), False),
    ("Avro default changed", avro(with_fields({**ID, "default": 0}, NOTE)), avro(with_fields({**ID, "default": 1}, NOTE)), False),
    ("Avro default 0 and 0.0: one JSON number", avro(with_fields({**ID, "default": 0}, NOTE)),
     avro(with_fields({**ID, "default": 0.0}, NOTE)), True),
    ("a default shaped like {type: T} is a value, not a schema",
     avro(with_fields({"name": "m", "type": {"type": "map", "values": "string"}, "default": {"type": "x"}})),
     avro(with_fields({"name": "m", "type": {"type": "map", "values": "string"}, "default": "x"})), False),
    ("JSON Schema object keys in another order", {"schemaType": "JSON", "schema": json.dumps(JSON_SCHEMA)},
     {"schemaType": "JSON", "schema": json.dumps({"required": ["a"], "properties": {"b": {"minimum": 0, "type": "integer"},
                                                                                     "a": {"type": "string"}}, "type": "object"})}, True),
    ("JSON Schema property changed", {"schemaType": "JSON", "schema": json.dumps(JSON_SCHEMA)},
     {"schemaType": "JSON", "schema": json.dumps({**JSON_SCHEMA, "required": ["a", "b"]})}, False),
    ("schemaType omitted is AVRO", avro(REC), {**avro(REC), "schemaType": "AVRO"}, True),
    ("the same text as another type", {"schemaType": "JSON", "schema": '{"type":"string"}'}, avro("string"), False),
    ("references in another order", {**avro(REC), "references": REFS}, {**avro(REC), "references": REFS[::-1]}, True),
    ("a reference to another version", {**avro(REC), "references": REFS},
     {**avro(REC), "references": [REFS[0], {**REFS[1], "version": 3}]}, False),
    ("a reference dropped", {**avro(REC), "references": REFS}, {**avro(REC), "references": REFS[:1]}, False),
    ("Protobuf blank lines, indentation and comments", {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3";\n\nmessage P {\n  int32 x = 1; // n\n}\n'},
     {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3";\nmessage P {\nint32 x = 1;\n}'}, True),
    ("Protobuf: // inside a string is text", {"schemaType": "PROTOBUF", "schema": 'option (u) = "http://a";'},
     {"schemaType": "PROTOBUF", "schema": 'option (u) = "http://b";'}, False),
]


def version_of(raw: dict[str, Any]) -> SchemaVersion:
    return SchemaVersion("orders-value", 1, 7, str(raw.get("schemaType") or "AVRO"), raw["schema"],
                         tuple(Reference.from_api(r) for r in raw.get("references") or ()))


@pytest.mark.parametrize(("source", "target", "same"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_plan_copy_verify_gate_and_validate_give_one_answer(source: dict[str, Any], target: dict[str, Any], same: bool) -> None:
    src, tgt = version_of(source), version_of(target)
    plan = plan_copy(Inventory("s", [src]), Inventory("t", [tgt]), {7: target})
    answers = {
        "plan/verify (the planner)": bool(plan.present) and not plan.conflicts,
        "copy's read-back (identity_of)": identity_of(target) == src.identity(),
        "validate (schema_compare)": differences(ResolvedSchema.of(source), ResolvedSchema.of(target)) == [],
        "the gate (make_plan's plan)": plan.in_sync,
    }
    assert answers == dict.fromkeys(answers, same)


def test_the_gate_compares_through_the_plan_of_schemas_verify() -> None:
    """runbook/schema_sync has no comparison of its own: it asks the verify command's make_plan."""
    assert schema_sync.make_plan is operations.make_plan
