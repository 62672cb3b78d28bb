"""Keys as well as values: the per-part tallies, the row's parts, and the subject name strategy told from the
subjects that hold a part's ids (pure functions: no registry, no cluster)."""

from __future__ import annotations

import json

from msk_migrate.validation.schema_ids import IdTally, PartIds, TopicIds, tally
from msk_migrate.validation.schema_proof import DIFFERING, IDENTICAL, MISSING_ON_BOTH, IdProof, schema_row
from msk_migrate.validation.subject_strategy import RECORD, TOPIC, TOPIC_RECORD, IdSubjects, PartStrategy, classify, record_name

AVRO = json.dumps({"type": "record", "name": "Order", "namespace": "com.acme", "fields": []})


def test_key_rows_tally_apart_from_value_rows_and_a_topic_with_schemad_keys_only_is_schemad():
    t = tally([("source", "o", 10, {}), ("source", "o", 10, {7: 10}, "key"), ("target", "o", 10, {7: 10}, "key")])
    assert t["o"].source.values == 10 and t["o"].source.ids == {}  # the values' tallies stay where they were
    assert t["o"].key.source.ids == {7: 10} and t["o"].key.schemad and not t["o"].value.schemad
    assert t["o"].schemad and t["o"].ids == [7] and t["o"].parts_of(7) == ["key"]


def test_the_row_lists_both_parts_and_an_id_records_per_part():
    t = TopicIds(IdTally(4, {5: 4}), IdTally(4, {5: 4}), PartIds(IdTally(4, {5: 1, 6: 3}), IdTally(4, {5: 1, 6: 3})))
    row = schema_row(t, lambda i: IdProof(i, IDENTICAL, "AVRO"), False, lambda part, ids: PartStrategy(RECORD, ("a.B",)))
    d = row.to_dict()
    assert row.status == "match" and d["ids_seen"] == 2
    five = d["ids"][0]
    assert five["parts"] == ["key", "value"] and five["records"] == {"source": 5, "target": 5}
    assert five["records_by_part"]["key"] == {"source": 1, "target": 1}
    assert d["parts"]["key"]["strategy"] == RECORD and d["parts"]["value"]["subjects"] == ["a.B"]
    assert d["source"] == {"values": 4, "wire_format": 4, "not_schemad": 0}  # values, as before keys were read


def test_raw_keys_starting_with_zero_bytes_are_not_held_against_a_topic_while_none_of_their_ids_resolves():
    long_keys = PartIds(IdTally(8, {1: 8}), IdTally(8, {1: 8}))  # big-endian longs 2^32..: ids nobody assigned
    t = TopicIds(IdTally(8, {}), IdTally(8, {}), long_keys)
    row = schema_row(t, lambda i: IdProof(i, MISSING_ON_BOTH), False)
    assert row.status != "mismatch" and row.to_dict()["unresolved_as_raw"] == 1
    # ... but in keys that are evidently schema'd (another of their ids resolves) it is a mismatch
    t.key.source.ids[2] = t.key.target.ids[2] = 8
    t.key.source.values = t.key.target.values = 16
    row = schema_row(t, lambda i: IdProof(i, MISSING_ON_BOTH if i == 1 else IDENTICAL), False)
    assert row.status == "mismatch" and [p.schema_id for p in row.failing] == [1]


def test_a_strategy_problem_fails_the_row_and_is_named_in_its_problems():
    t = TopicIds(IdTally(2, {5: 2}), IdTally(2, {5: 2}))
    bad = PartStrategy(None, ("elsewhere",), "topic o: value schema id 5 is held by elsewhere, which fits ...")
    row = schema_row(t, lambda i: IdProof(i, IDENTICAL), False, lambda part, ids: bad)
    assert row.status == "mismatch" and row.problems() == [bad.problem]
    assert schema_row(t, lambda i: IdProof(i, DIFFERING, differences=["x"]), False).status == "mismatch"


def test_record_names_of_avro_json_schema_and_protobuf():
    assert record_name("AVRO", AVRO) == "com.acme.Order"
    assert record_name("AVRO", json.dumps({"type": "record", "name": "x.y.Z", "namespace": "ignored"})) == "x.y.Z"
    assert record_name("AVRO", '"string"') is None and record_name("AVRO", '["null", "string"]') is None
    assert record_name("JSON", json.dumps({"title": "Order", "type": "object"})) == "Order"
    assert record_name("JSON", json.dumps({"type": "object"})) is None
    assert record_name("PROTOBUF", 'syntax = "proto3";\npackage com.acme;\n\nmessage Order {\n}\nmessage B {}') == "com.acme.Order"
    assert record_name("PROTOBUF", 'syntax = "proto3";\nmessage Order {}') == "Order"


def held(*subjects: str, record: str | None = "com.acme.Order") -> IdSubjects:
    return IdSubjects(subjects, record)


def test_each_strategy_is_told_from_the_subjects_holding_the_ids():
    assert classify("orders", "value", {1: held("orders-value")}) == PartStrategy(TOPIC, ("orders-value",))
    assert classify("orders", "key", {1: held("com.acme.Order"), 2: held("com.acme.Item", record="com.acme.Item")}) \
        == PartStrategy(RECORD, ("com.acme.Item", "com.acme.Order"))
    assert classify("orders", "value", {3: held("orders-com.acme.Order", "unrelated")}) \
        == PartStrategy(TOPIC_RECORD, ("orders-com.acme.Order",))
    assert classify("orders", "value", {}) == PartStrategy(None)


def test_subjects_fitting_no_strategy_are_one_line_naming_topic_subject_and_fix():
    found = classify("orders", "value", {4: held("payments-value")})
    assert found.strategy is None and found.problem is not None and "\n" not in found.problem
    assert found.problem.startswith("topic orders: value schema id 4 is held by payments-value, which fits no")
    assert "orders-value, com.acme.Order, orders-com.acme.Order" in found.problem and "subject.name.strategy" in found.problem


def test_ids_of_different_strategies_or_one_id_fitting_two_alike_cannot_be_told():
    mixed = classify("orders", "value", {1: held("orders-value"), 2: held("com.acme.Order")})
    assert mixed.strategy is None and "fit different subject name strategies" in (mixed.problem or "")
    # Apicurio's ccompat API gives the same content one id: registered under both names, both fit
    both = classify("orders", "value", {1: held("com.acme.Order", "orders-com.acme.Order")})
    assert both.strategy is None and "RecordNameStrategy and TopicRecordNameStrategy alike" in (both.problem or "")
    assert "com.acme.Order and orders-com.acme.Order" in (both.problem or "")


def test_id_0_is_read_only_from_bytes_long_enough_for_apicurios_8_byte_ids():
    from msk_migrate.validation.schema_ids import count_ids, ids_of, wire_id

    long_key = (5).to_bytes(8, "big")  # a big-endian long key below 2^32: not schema'd
    apicurio = b"\x00" + (7).to_bytes(8, "big") + b"\x02avro"  # magic, 8-byte global id 7, payload
    assert wire_id(long_key) is None and wire_id(apicurio) == 0
    counts: dict[bytes, int] = {}
    for b in (long_key, apicurio, apicurio, b"\x00\x00\x00\x00\x09abcd"):
        count_ids(counts, b)
    assert ids_of(counts) == {0: 2, 9: 1}


def test_a_part_whose_ids_all_read_as_0_is_apicurios_format_and_refused_by_name():
    t = TopicIds(IdTally(4, {0: 4}), IdTally(4, {0: 4}), PartIds(IdTally(4, {3: 4}), IdTally(4, {3: 4})))
    assert t.value.apicurio_global_ids and not t.key.apicurio_global_ids
    asked: list[int] = []

    def prove(i: int) -> IdProof:
        asked.append(i)
        return IdProof(i, IDENTICAL)

    row = schema_row(t, prove, False, lambda part, ids: PartStrategy(TOPIC, ("o-key",)), "o")
    assert asked == [3]  # the keys' 4-byte id is proven; id 0 is not asked for
    assert row.status == "not-checked" and row.reason is not None
    assert row.reason.startswith("topic o: values carry Apicurio 8-byte global ids") and "--ignore-schemas" in row.reason
    assert schema_row(t, None, True).status == "skipped"  # the opt-out (schema_rows gives no prover then)
