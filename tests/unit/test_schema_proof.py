"""The pure parts of the proof per record: wire format, tallies, canonical comparison, the row's status."""

from __future__ import annotations

import json

from msk_migrate.validation.schema_compare import ResolvedSchema, canonical, differences
from msk_migrate.validation.schema_ids import IdTally, TopicIds, count_ids, ids_of, tally, wire_id
from msk_migrate.validation.schema_proof import IdProof, schema_row

AVRO = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})


def test_wire_id_reads_the_big_endian_id_after_the_magic_byte():
    assert wire_id(b"\x00\x00\x00\x01\x2c" + b"payload") == 300
    assert wire_id(b"\x00\xff\xff\xff\xff") == 2**32 - 1


def test_values_without_the_magic_byte_or_too_short_are_not_schemad():
    assert wire_id(None) is None
    assert wire_id(b"") is None
    assert wire_id(b"\x00\x00\x00\x01") is None  # four bytes: no room for an id
    assert wire_id(b"{\"json\": 1}") is None
    assert wire_id(b"\x01\x00\x00\x00\x01payload") is None


def test_count_ids_tallies_raw_id_bytes_and_ids_of_converts_them_once():
    counts: dict[bytes, int] = {}
    for v in [b"\x00\x00\x00\x00\x07a", b"\x00\x00\x00\x00\x07b", b"\x00\x00\x00\x01\x00", b"raw", None, b"\x00ab"]:
        count_ids(counts, v)
    assert ids_of(counts) == {7: 2, 256: 1}


def test_tally_merges_partitions_per_topic_and_side():
    t = tally([("source", "orders", 10, {7: 4}), ("source", "orders", 5, {7: 1, 9: 4}), ("target", "orders", 15, {7: 5, 9: 4}),
               ("source", "raw", 3, {})])
    assert t["orders"].source.ids == {7: 5, 9: 4} and t["orders"].source.values == 15
    assert t["orders"].ids == [7, 9]
    assert t["orders"].source.not_schemad == 6
    assert t["raw"].ids == []


def test_a_topic_is_schemad_when_at_least_half_of_its_values_are_in_the_wire_format():
    assert TopicIds(IdTally(10, {1: 5}), IdTally(10, {1: 5})).schemad
    assert not TopicIds(IdTally(256, {17: 1}), IdTally(256, {17: 1})).schemad  # raw bytes: 1 in 256 starts with 0x00
    assert not TopicIds(IdTally(0, {}), IdTally(0, {})).schemad


def test_canonical_text_ignores_json_whitespace_and_key_order_but_not_field_order():
    a = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"n","type":"int"}]}'
    b = '{ "name" : "Order", "type": "record",\n "fields": [{"type":"long","name":"id"},{"name":"n","type":"int"}]}'
    c = '{"type":"record","name":"Order","fields":[{"name":"n","type":"int"},{"name":"id","type":"long"}]}'
    assert canonical("AVRO", a) == canonical("AVRO", b)
    assert canonical("AVRO", a) != canonical("AVRO", c)
    assert canonical("JSON", '{"b": 1, "a": 2}') == canonical("JSON", '{"a":2,"b":1}')


def test_protobuf_compares_by_tokens_and_unparseable_text_compares_exactly():
    assert canonical("PROTOBUF", 'syntax = "proto3";\nmessage A {}') == 'syntax = "proto3" ; message A { }'
    assert canonical("PROTOBUF", "message A {}") == canonical("PROTOBUF", "message A  {} /* c */")
    assert canonical("PROTOBUF", "message A {}") != canonical("PROTOBUF", "message B {}")
    assert canonical("AVRO", "not json") == "not json"


def test_a_missing_schema_type_is_avro_as_the_confluent_api_leaves_it_out():
    assert ResolvedSchema.of({"schema": AVRO}).schema_type == "AVRO"
    assert ResolvedSchema.of({"schema": "message A {}", "schemaType": "PROTOBUF"}).schema_type == "PROTOBUF"


def test_differences_name_the_type_the_text_and_the_references():
    s = ResolvedSchema.of({"schema": AVRO, "references": [{"name": "Item", "subject": "item", "version": 1}]})
    same = ResolvedSchema.of({"schema": json.dumps(json.loads(AVRO), indent=4),
                              "references": [{"name": "Item", "subject": "item", "version": 1}]})
    assert differences(s, same) == []
    other = ResolvedSchema.of({"schema": AVRO.replace("long", "string"), "schemaType": "JSON",
                               "references": [{"name": "Item", "subject": "item", "version": 2}]})
    d = differences(s, other)
    assert d[0] == "type AVRO on the source, JSON on the target"
    assert d[1].startswith("schema text differs (at character")
    assert d[2] == "references differ (only on the source: Item -> item v1; only on the target: Item -> item v2)"


def _schemad() -> TopicIds:
    return TopicIds(IdTally(4, {3: 2, 5: 2}), IdTally(4, {3: 2, 5: 2}))


def test_a_schemad_topic_without_registries_is_not_checked_and_names_the_setting():
    row = schema_row(_schemad(), None, ignore=False)
    assert row.status == "not-checked"
    assert "schema_registry" in row.problems()[0] and "--ignore-schemas" in row.problems()[0]


def test_the_opt_out_turns_not_checked_into_skipped():
    assert schema_row(_schemad(), None, ignore=True).status == "skipped"


def test_topics_without_wire_format_values_are_bytes_only():
    assert schema_row(TopicIds(IdTally(9, {}), IdTally(9, {})), None, ignore=False).status == "not-schemad"
    assert schema_row(None, None, ignore=False).status == "not-schemad"
    raw = TopicIds(IdTally(512, {77: 2}), IdTally(512, {77: 2}))
    assert schema_row(raw, None, ignore=False).status == "not-schemad"


def _proofs(statuses: dict[int, str]):
    """Proofs with these statuses (resolving them is tested on real registries, tests/validation)."""
    return lambda i: IdProof(i, statuses[i], "AVRO", [] if statuses[i] == "identical" else ["why"])


def test_a_differing_or_missing_id_makes_the_row_a_mismatch_naming_the_id():
    row = schema_row(_schemad(), _proofs({3: "identical", 5: "missing_on_target"}), ignore=False)
    assert row.status == "mismatch"
    assert row.problems() == ["schema id 5 missing on target: why"]
    d = row.to_dict()
    assert (d["ids_seen"], d["resolved_identical"], d["missing_on_target"]) == (2, 1, [5])
    assert schema_row(_schemad(), _proofs({3: "differing", 5: "identical"}), False).status == "mismatch"
    assert schema_row(_schemad(), _proofs({3: "identical", 5: "identical"}), False).status == "match"


def test_ids_unknown_to_both_registries_fail_a_schemad_topic_but_are_raw_bytes_elsewhere():
    both = {3: "missing_on_both", 5: "missing_on_both"}
    assert schema_row(_schemad(), _proofs(both), False).status == "mismatch"
    raw = TopicIds(IdTally(512, {3: 1, 5: 1}), IdTally(512, {3: 1, 5: 1}))
    row = schema_row(raw, _proofs(both), False)
    assert row.status == "not-schemad" and row.to_dict()["unresolved_as_raw"] == 2
    # an id the source knows but the target does not still fails, schema'd or not
    assert schema_row(raw, _proofs({3: "missing_on_target", 5: "missing_on_both"}), False).status == "mismatch"


def test_registry_urls_need_a_scheme_and_carry_no_credentials():
    import pytest

    from msk_migrate.errors import UsageError
    from msk_migrate.validation.request import SchemaRegistries

    assert SchemaRegistries(source="http://r:8081/", target="https://t/apis/ccompat/v7").source == "http://r:8081"
    with pytest.raises(UsageError, match="--source-registry: 'r:8081' is not an http"):
        SchemaRegistries(source="r:8081", target="http://t")
    with pytest.raises(UsageError, match="--target-registry: the URL carries credentials"):
        SchemaRegistries(source="http://t", target="https://user:secret@t")
