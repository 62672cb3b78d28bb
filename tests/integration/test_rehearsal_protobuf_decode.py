"""The rehearsal's Protobuf demo (issue 45) on the local clusters, MirrorMaker 2 and two real Apicurio Registries:
keys and values written by confluent-kafka's ``ProtobufSerializer`` (classes compiled by protoc at run time) to a
topic whose value ``.proto`` imports another (keys: a ``.proto`` of their own, ``<topic>-key``), replicated by MM2,
the subjects copied with ``schemas copy``; the rehearsal's decode step
(:func:`msk_migrate.rehearsal.schema_demo.decode_parts` with :class:`msk_migrate.rehearsal.protobuf_demo.TopicDecoder`)
decodes every record's key and value on the target with ``ProtobufDeserializer`` and the TARGET registry, and fails,
naming the record, the part and the reason, on a record planted on the target whose message index names no message,
whose bytes do not decode, whose value is not the one written under its key, whose key is not one the producer
writes, or whose id the target registry does not map to that part's subject.

The full walk (demo topic ``shop.shipments`` copied, proven by ``validate``, decoded): tests/integration/test_rehearsal.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from msk_migrate.rehearsal import protobuf_demo
from msk_migrate.rehearsal.demo import PROTOBUF_TOPIC, SCHEMA_PARTS, DemoApps
from msk_migrate.rehearsal.result import StepFailed
from msk_migrate.rehearsal.schema_demo import decode_parts
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome
from msk_migrate.schemas.protobuf import imports
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import create_topic, end_offsets, produce, wait_until

RECORDS = 40


def test_the_rehearsal_names_the_subjects_its_serializers_use() -> None:
    """What the rehearsal's steps expect (SCHEMA_PARTS) is what its serializers register under."""
    assert SCHEMA_PARTS[PROTOBUF_TOPIC] == {"key": ("topic", protobuf_demo.KEY_SUBJECT), "value": ("topic", protobuf_demo.SUBJECT)}
    assert imports(protobuf_demo.FILES[protobuf_demo.KEY_PATH]) == []


@pytest.fixture(scope="module")
def shipments(local_env, mm2, registry_pair) -> dict[str, Any]:  # noqa: F811 (the fixture)
    from confluent_kafka.schema_registry import SchemaRegistryClient

    src_reg, tgt_reg = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    topic, common = f"it-shipments-{run}", f"it/common-{run}.proto"
    client = SchemaRegistryClient({"url": src_reg})
    ids: dict[str, list[int]] = {}
    protobuf_demo.register(client, lambda s, schema: ids.setdefault(s, []).append(client.register_schema(s, schema)),
                           f"{topic}-value", common)
    protobuf_demo.register_key(lambda s, schema: ids.setdefault(s, []).append(client.register_schema(s, schema)), f"{topic}-key")
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    create_topic(src, topic, partitions=2)
    ser = protobuf_demo.serializer(src_reg, topic)
    records = [ser(i) for i in range(RECORDS)]
    produce(src, topic, [(k, v, None, i % 2) for i, (k, v) in enumerate(records)])
    copied = copy_outcome(Direction(RegistryClient("source", src_reg, "--source-registry"),
                                    RegistryClient("target", tgt_reg, "--target-registry")),
                          (f"{topic}-key", f"{topic}-value"), lambda _m: None)
    # MirrorMaker 2 (the session's connectors, identity names) brings every record to the target
    wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= RECORDS, 180, f"{topic} replicated to the target")
    return {"topic": topic, "common": common, "ids": ids, "copied": copied, "records": records, "target": tgt,
            "registries": {"source": src_reg, "target": tgt_reg}}


def test_the_import_is_copied_first_keeping_both_ids(shipments) -> None:
    out = shipments["copied"]
    assert out.exit_code == 0, out.notes
    copied = [(r["subject"], r["id"]) for r in out.rows if r["action"] == "copied"]
    topic, common = shipments["topic"], shipments["common"]
    assert sorted(copied) == sorted((s, shipments["ids"][s][0]) for s in (common, f"{topic}-key", f"{topic}-value"))
    assert copied.index((common, shipments["ids"][common][0])) < copied.index((f"{topic}-value", shipments["ids"][f"{topic}-value"][0]))
    assert imports(protobuf_demo.FILES[protobuf_demo.SHIPMENTS_PATH]) == [protobuf_demo.COMMON_PATH]


def _decode(shipments, topic: str | None = None) -> tuple[int, dict]:
    """The decode step's read of ``topic`` on the target (the replicated one by default): every record's key and
    value proven under the replicated topic's subjects."""
    tgt_reg = shipments["registries"]["target"]
    return decode_parts(DemoApps(), shipments["target"], topic or shipments["topic"], tgt_reg,
                        decoder=protobuf_demo.TopicDecoder(tgt_reg, shipments["topic"]))


def test_every_replicated_record_decodes_on_the_target_key_and_value_as_written(shipments) -> None:
    n, ids = _decode(shipments)
    assert n == RECORDS
    topic = shipments["topic"]
    assert {p: dict(c) for p, c in ids.items()} == {p: {shipments["ids"][f"{topic}-{p}"][0]: RECORDS} for p in ("key", "value")}


def _planted(shipments, name: str, key: bytes, value: bytes) -> str:
    """The decode step's failure on a topic of the target holding replicated records, then ``key``/``value`` (a topic
    per case, so each failure is the planted record's own)."""
    planted = f"{shipments['topic']}-{name}"
    create_topic(shipments["target"], planted, partitions=1)
    produce(shipments["target"], planted, [(k, v, None, 0) for k, v in shipments["records"][:3]] + [(key, value, None, 0)])
    with pytest.raises(StepFailed) as caught:
        _decode(shipments, planted)
    reason = str(caught.value)
    assert f"{planted}[0]@3 " in reason, reason
    return reason


def test_a_record_whose_message_index_names_no_message_fails_the_decode_step_naming_it(shipments) -> None:
    key, good = shipments["records"][3]
    bad = good[:5] + b"\x02\x0a" + good[6:]  # message index [5]: the file has one top-level message
    assert good[5:6] == b"\x00"
    reason = _planted(shipments, "index", key, bad)
    sid = shipments["ids"][f"{shipments['topic']}-value"][0]
    assert f" value: message index [5] names no message of {shipments['topic']}-value v1 (id {sid})" in reason, reason


def test_a_key_whose_id_the_target_maps_to_no_key_version_fails_the_decode_step_naming_the_key(shipments) -> None:
    """The value's id in a key's wire prefix: the target maps that id to ``<topic>-value``, not to ``<topic>-key``."""
    topic = shipments["topic"]
    key, value = shipments["records"][6]
    value_id, key_id = shipments["ids"][f"{topic}-value"][0], shipments["ids"][f"{topic}-key"][0]
    reason = _planted(shipments, "key-id", key[:1] + value_id.to_bytes(4, "big") + key[5:], value)
    assert (f" key carries schema id {value_id}; the registry at {shipments['registries']['target']} maps {topic}-key "
            f"to id(s) {key_id}") in reason, reason


def test_each_other_wrong_record_fails_the_decoder_naming_its_part_and_reason(shipments) -> None:
    """The decoder the step uses, on the target registry, record by record."""
    decode = protobuf_demo.TopicDecoder(shipments["registries"]["target"], shipments["topic"])
    key, good = shipments["records"][4]
    other_key, _other = shipments["records"][5]
    assert decode(key, good, "good")["id"] == "4"  # int64 reads as text in protobuf's JSON mapping
    topic = shipments["topic"]
    sid, key_id = shipments["ids"][f"{topic}-value"][0], shipments["ids"][f"{topic}-key"][0]
    cases = {
        "truncated": (key, good[:6] + b"\x0a\xff\x01", "value does not decode as shop.shipments.Shipment"),
        "another value": (other_key, good, "value decoded to a value other than the one written under key id 5: field id"),
        "nested message": (key, good[:5] + b"\x04\x00\x00" + good[6:], "value decoded as shop.shipments.Shipment.Parcel; the producer wrote"),
        "unknown id": (key, good[:1] + (sid + 1000).to_bytes(4, "big") + good[5:], f"value carries schema id {sid + 1000}; the registry at"),
        "plain-text key": (b"shipment-4", good, "key is not in the Confluent wire format"),
        "no key": (None, good, "key is not in the Confluent wire format"),
        "truncated key": (key[:6] + b"\x08", good, f"key does not decode as shop.shipments.ShipmentKey (id {key_id})"),
        "a value in the key's place": (good, good, f"key carries schema id {sid}"),
        "a key in the value's place": (key, key, f"value carries schema id {key_id}"),
        "not the demo's key": (key[:6] + b"\x08" + b"\xff" * 9 + b"\x01", good, "key decoded to {'id': '-1'}: not a key the demo producer writes"),
    }
    for name, (k, value, reason) in cases.items():
        with pytest.raises(StepFailed) as caught:
            decode(k, value, name)
        assert str(caught.value).startswith(name) and reason in str(caught.value), (name, str(caught.value))
