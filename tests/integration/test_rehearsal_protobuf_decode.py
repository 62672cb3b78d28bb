"""The rehearsal's Protobuf demo (issue 45) on the local clusters, MirrorMaker 2 and two real Apicurio Registries:
records written by confluent-kafka's ``ProtobufSerializer`` (classes compiled by protoc at run time) to a topic whose
``.proto`` imports another, replicated by MM2, the subjects copied with ``schemas copy``; the rehearsal's decode
step (:func:`msk_migrate.rehearsal.schema_demo.decode_all`) decodes every record on the target with
``ProtobufDeserializer`` and the TARGET registry, and fails, naming the record and the reason, on a record planted
on the target whose message index names no message, whose bytes do not decode, whose value is not the one written
or whose id the target registry does not map to the subject.

The full walk (demo topic ``shop.shipments`` copied, proven by ``validate``, decoded): tests/integration/test_rehearsal.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from msk_migrate.rehearsal import protobuf_demo
from msk_migrate.rehearsal.demo import DemoApps
from msk_migrate.rehearsal.result import StepFailed
from msk_migrate.rehearsal.schema_demo import decode_all
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome
from msk_migrate.schemas.protobuf import imports
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import create_topic, end_offsets, produce, wait_until

RECORDS = 40


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
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    create_topic(src, topic, partitions=2)
    ser = protobuf_demo.serializer(src_reg, topic)
    values = [ser(i) for i in range(RECORDS)]
    produce(src, topic, [(protobuf_demo.record_key(i), v, None, i % 2) for i, v in enumerate(values)])
    copied = copy_outcome(Direction(RegistryClient("source", src_reg, "--source-registry"),
                                    RegistryClient("target", tgt_reg, "--target-registry")), (f"{topic}-value",), lambda _m: None)
    # MirrorMaker 2 (the session's connectors, identity names) brings every record to the target
    wait_until(lambda: sum(end_offsets(tgt, topic).values()) >= RECORDS, 180, f"{topic} replicated to the target")
    return {"topic": topic, "common": common, "ids": ids, "copied": copied, "values": values, "target": tgt,
            "registries": {"source": src_reg, "target": tgt_reg}}


def test_the_import_is_copied_first_keeping_both_ids(shipments) -> None:
    out = shipments["copied"]
    assert out.exit_code == 0, out.notes
    copied = [(r["subject"], r["id"]) for r in out.rows if r["action"] == "copied"]
    topic, common = shipments["topic"], shipments["common"]
    assert copied == [(common, shipments["ids"][common][0]), (f"{topic}-value", shipments["ids"][f"{topic}-value"][0])]
    assert imports(protobuf_demo.FILES[protobuf_demo.SHIPMENTS_PATH]) == [protobuf_demo.COMMON_PATH]


def test_every_replicated_record_decodes_on_the_target_to_the_value_written(shipments) -> None:
    n, ids = decode_all(DemoApps(), shipments["target"], shipments["topic"], shipments["registries"]["target"])
    assert n == RECORDS
    assert dict(ids) == {shipments["ids"][f"{shipments['topic']}-value"][0]: RECORDS}


def _planted(shipments, value: bytes, key: bytes) -> str:
    """The decode step's failure once ``value`` (under ``key``) is on the target topic after the replicated records."""
    produce(shipments["target"], shipments["topic"], [(key, value, None, 0)])
    with pytest.raises(StepFailed) as caught:
        decode_all(DemoApps(), shipments["target"], shipments["topic"], shipments["registries"]["target"])
    return str(caught.value)


def test_a_record_whose_message_index_names_no_message_fails_the_decode_step_naming_it(shipments) -> None:
    good = shipments["values"][3]
    bad = good[:5] + b"\x02\x0a" + good[6:]  # message index [5]: the file has one top-level message
    assert good[5:6] == b"\x00"
    reason = _planted(shipments, bad, protobuf_demo.record_key(3))
    sid = shipments["ids"][f"{shipments['topic']}-value"][0]
    assert f"{shipments['topic']}[0]@" in reason and f"message index [5] names no message of {shipments['topic']}-value v1 (id {sid})" in reason, reason


def test_each_other_wrong_record_fails_the_decoder_for_its_own_reason(shipments) -> None:
    """The decoder the step uses, on the target registry, record by record (the planted record above stays on the
    topic, so these are fed to it directly)."""
    decode = protobuf_demo.TopicDecoder(shipments["registries"]["target"], shipments["topic"])
    good, key = shipments["values"][4], protobuf_demo.record_key(4)
    assert decode(key, good, "good").id == 4
    sid = shipments["ids"][f"{shipments['topic']}-value"][0]
    cases = {
        "truncated": (key, good[:6] + b"\x0a\xff\x01", "does not decode as shop.shipments.Shipment"),
        "another value": (protobuf_demo.record_key(5), good, "decoded to a value other than the one written: field id"),
        "nested message": (key, good[:5] + b"\x04\x00\x00" + good[6:], "decoded as shop.shipments.Shipment.Parcel; the producer wrote"),
        "unknown id": (key, good[:1] + (sid + 1000).to_bytes(4, "big") + good[5:], f"carries schema id {sid + 1000}; the registry at"),
    }
    for name, (k, value, reason) in cases.items():
        with pytest.raises(StepFailed) as caught:
            decode(k, value, name)
        assert str(caught.value).startswith(name) and reason in str(caught.value), (name, str(caught.value))
