"""The rehearsal's keyed demo topics (issue 45) on the local clusters, MirrorMaker 2 and two real Apicurio Registries.

``shop.returns``: Avro keys under TopicNameStrategy (``<topic>-key``) and Avro values under RecordNameStrategy
(``<namespace>.Return``),
written by confluent-kafka's ``AvroSerializer``, replicated by MM2, the subjects copied with ``schemas copy``; the
rehearsal's decode step (:func:`msk_migrate.rehearsal.schema_demo.decode_parts` with
:class:`msk_migrate.rehearsal.returns_demo.TopicDecoder`) decodes every record's key and value on the target with
``AvroDeserializer`` and the TARGET registry, and fails naming the record and the KEY part for a key whose id the
target maps to no ``<topic>-key`` version, whose bytes do not decode, that is not in the wire format, or that is not
the key the value was written under.

``shop.audit``: JSON Schema keys and values, each under TopicNameStrategy, written by ``JSONSerializer`` and decoded
on the target by ``JSONDeserializer`` (:class:`msk_migrate.rehearsal.schema_demo.AuditDecoder`): a planted key whose id
the target maps to ``<topic>-value`` fails the step naming the key part. (Protobuf keys:
tests/integration/test_rehearsal_protobuf_decode.py.)

The full walk (demo topic ``shop.returns`` copied, proven by ``validate``, found by the gate, decoded):
tests/integration/test_rehearsal.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from msk_migrate.rehearsal import returns_demo
from msk_migrate.rehearsal.demo import JSON_TOPIC, RETURNS_TOPIC, SCHEMA_PARTS, DemoApps
from msk_migrate.rehearsal.result import StepFailed
from msk_migrate.rehearsal.schema_demo import AuditDecoder, audit_serializer, audit_value, decode_parts, register_audit
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import create_topic, end_offsets, produce, wait_until

RECORDS = 30


def test_the_rehearsal_names_the_subjects_its_serializers_use() -> None:
    """What the rehearsal's steps expect (SCHEMA_PARTS) is what its serializers register under."""
    assert {p: s for p, (_strategy, s) in SCHEMA_PARTS[RETURNS_TOPIC].items()} == returns_demo.Returns().subjects
    assert {p: strategy for p, (strategy, _s) in SCHEMA_PARTS[RETURNS_TOPIC].items()} == {"key": "topic", "value": "record"}
    registered: list[str] = []
    register_audit(lambda s, _schema: registered.append(s))
    assert SCHEMA_PARTS[JSON_TOPIC] == {"key": ("topic", registered[0]), "value": ("topic", registered[1])}
    assert registered == [f"{JSON_TOPIC}-key", f"{JSON_TOPIC}-value"]


@pytest.fixture(scope="module")
def returns(local_env, mm2, registry_pair) -> dict[str, Any]:  # noqa: F811 (the fixture)
    from confluent_kafka.schema_registry import SchemaRegistryClient

    src_reg, tgt_reg = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    demo = returns_demo.Returns(f"it-returns-{run}", f"it_{run}")
    client = SchemaRegistryClient({"url": src_reg})
    ids: dict[str, list[int]] = {}
    returns_demo.register(lambda s, schema: ids.setdefault(s, []).append(client.register_schema(s, schema)), demo)
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    create_topic(src, demo.topic, partitions=2)
    ser = returns_demo.serializer(client, demo)
    records = [ser(i) for i in range(RECORDS)]
    produce(src, demo.topic, [(k, v, None, i % 2) for i, (k, v) in enumerate(records)])
    copied = copy_outcome(Direction(RegistryClient("source", src_reg, "--source-registry"),
                                    RegistryClient("target", tgt_reg, "--target-registry")),
                          tuple(demo.subjects.values()), lambda _m: None)
    assert copied.exit_code == 0, copied.notes
    # MirrorMaker 2 (the session's connectors, identity names) brings every record to the target
    wait_until(lambda: sum(end_offsets(tgt, demo.topic).values()) >= RECORDS, 180, f"{demo.topic} replicated to the target")
    return {"demo": demo, "ids": {p: ids[s] for p, s in demo.subjects.items()}, "records": records, "target": tgt,
            "registries": {"source": src_reg, "target": tgt_reg}}


def test_every_replicated_key_and_value_decodes_on_the_target_under_its_own_subject(returns) -> None:
    demo = returns["demo"]
    n, ids = decode_parts(DemoApps(), returns["target"], demo.topic, returns["registries"]["target"],
                          decoder=returns_demo.TopicDecoder(returns["registries"]["target"], demo))
    assert n == RECORDS
    assert {p: dict(c) for p, c in ids.items()} == {p: {returns["ids"][p][0]: RECORDS} for p in ("key", "value")}
    assert returns["ids"]["key"] != returns["ids"]["value"]


def test_a_key_whose_id_the_target_maps_to_no_key_version_fails_the_decode_step_naming_the_key(returns) -> None:
    """The value's id in a key's wire prefix: AvroDeserializer would decode some record from it, but the target maps
    that id to the value subject, not to ``<topic>-key``: the step names the record, the key part and both."""
    demo, tgt_reg = returns["demo"], returns["registries"]["target"]
    key, value = returns["records"][3]
    value_id, key_id = returns["ids"]["value"][0], returns["ids"]["key"][0]
    wrong = key[:1] + value_id.to_bytes(4, "big") + key[5:]
    produce(returns["target"], demo.topic, [(wrong, value, None, 0)])
    with pytest.raises(StepFailed) as caught:
        decode_parts(DemoApps(), returns["target"], demo.topic, tgt_reg, decoder=returns_demo.TopicDecoder(tgt_reg, demo))
    reason = str(caught.value)
    assert f"{demo.topic}[0]@" in reason and (f" key carries schema id {value_id}; the registry at {tgt_reg} maps "
                                              f"{demo.topic}-key to id(s) {key_id}") in reason, reason


def test_each_other_wrong_key_fails_the_decoder_naming_the_key(returns) -> None:
    """The decoder the step uses, on the target registry, record by record (the planted record above stays on the
    topic, so these are fed to it directly)."""
    demo = returns["demo"]
    decode = returns_demo.TopicDecoder(returns["registries"]["target"], demo)
    key, value = returns["records"][4]
    assert decode(key, value, "good") == returns_demo.value_of(4)
    other_key, _other_value = returns["records"][5]
    key_id = returns["ids"]["key"][0]
    cases = {
        "truncated": (key[:5] + b"\xff", value, f"key does not decode as {demo.topic}-key v1 (id {key_id})"),
        "plain bytes": (b"return-4", value, "key is not in the Confluent wire format"),
        "no key": (None, value, "key is not in the Confluent wire format"),
        "another key": (other_key, value, "value decoded to a value other than the one written under key order_id"),
        "not the demo's": (key[:5] + b"\x02", value, "key decoded to {'order_id': 1}: not a key the demo producer writes"),
        "a key in the value's place": (key, other_key, f"value carries schema id {key_id}"),
    }
    _each_refused(decode, cases)


@pytest.fixture(scope="module")
def audit(local_env, mm2, registry_pair) -> dict[str, Any]:  # noqa: F811 (the fixture)
    from confluent_kafka.schema_registry import SchemaRegistryClient

    src_reg, tgt_reg = (r.ccompat_url for r in registry_pair)
    topic = f"it-audit-{uuid.uuid4().hex[:6]}"
    client = SchemaRegistryClient({"url": src_reg})
    ids: dict[str, list[int]] = {}
    register_audit(lambda s, schema: ids.setdefault(s, []).append(client.register_schema(s, schema)), topic)
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    create_topic(src, topic, partitions=1)
    ser = audit_serializer(client, topic)
    records = [ser(i) for i in range(RECORDS)]
    produce(src, topic, [(k, v, None, 0) for k, v in records])
    copied = copy_outcome(Direction(RegistryClient("source", src_reg, "--source-registry"),
                                    RegistryClient("target", tgt_reg, "--target-registry")),
                          (f"{topic}-key", f"{topic}-value"), lambda _m: None)
    assert copied.exit_code == 0, copied.notes
    wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= RECORDS, 180, f"{topic} replicated to the target")
    return {"topic": topic, "ids": {p: ids[f"{topic}-{p}"] for p in ("key", "value")}, "records": records, "target": tgt,
            "registries": {"source": src_reg, "target": tgt_reg}}


def test_every_replicated_json_schema_key_and_value_decodes_on_the_target(audit) -> None:
    tgt_reg = audit["registries"]["target"]
    n, ids = decode_parts(DemoApps(), audit["target"], audit["topic"], tgt_reg, decoder=AuditDecoder(tgt_reg, audit["topic"]))
    assert n == RECORDS
    assert {p: dict(c) for p, c in ids.items()} == {p: {audit["ids"][p][0]: RECORDS} for p in ("key", "value")}
    assert audit["ids"]["key"] != audit["ids"]["value"]


def test_a_json_schema_key_whose_id_the_target_maps_to_no_key_version_fails_the_decode_step_naming_the_key(audit) -> None:
    """The value's id in a key's wire prefix: JSONDeserializer would decode the key's JSON text with it, but the target
    maps that id to ``<topic>-value``, not to ``<topic>-key``: the step names the record, the key part and both."""
    topic, tgt_reg = audit["topic"], audit["registries"]["target"]
    key, value = audit["records"][3]
    value_id, key_id = audit["ids"]["value"][0], audit["ids"]["key"][0]
    produce(audit["target"], topic, [(key[:1] + value_id.to_bytes(4, "big") + key[5:], value, None, 0)])
    with pytest.raises(StepFailed) as caught:
        decode_parts(DemoApps(), audit["target"], topic, tgt_reg, decoder=AuditDecoder(tgt_reg, topic))
    reason = str(caught.value)
    assert f"{topic}[0]@{RECORDS} key carries schema id {value_id}; the registry at {tgt_reg} maps {topic}-key to id(s) {key_id}" in reason, reason


def test_each_other_wrong_json_schema_key_fails_the_decoder_naming_the_key(audit) -> None:
    decode = AuditDecoder(audit["registries"]["target"], audit["topic"])
    key, value = audit["records"][4]
    other_key, _other_value = audit["records"][5]
    assert decode(key, value, "good") == audit_value(4)
    key_id = audit["ids"]["key"][0]
    cases = {
        "plain bytes": (b"4", value, "key is not in the Confluent wire format"),
        "no key": (None, value, "key is not in the Confluent wire format"),
        "truncated": (key[:5] + b'{"seq":', value, f"key does not decode as {audit['topic']}-key v1 (id {key_id})"),
        "not valid for the key schema": (key[:5] + b'{"seq":"4"}', value, f"key does not decode as {audit['topic']}-key"),
        "another key": (other_key, value, "value decoded to a value other than the one written under key seq 5: field actor"),
        "not the demo's": (key[:5] + b'{"seq":-1}', value, "key decoded to {'seq': -1}: not a key the demo producer writes"),
        "a key in the value's place": (key, other_key, f"value carries schema id {key_id}"),
    }
    _each_refused(decode, cases)


def _each_refused(decode, cases: dict[str, tuple[bytes | None, bytes | None, str]]) -> None:
    """Every case (name -> key, value, the reason expected) is refused by ``decode`` with one line starting with the
    record's name and giving the reason."""
    for name, (k, v, reason) in cases.items():
        with pytest.raises(StepFailed) as caught:
            decode(k, v, name)
        text = str(caught.value)
        assert text.startswith(name) and reason in text, (name, text)
