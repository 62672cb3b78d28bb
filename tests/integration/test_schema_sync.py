"""The "schemas in sync" verdict of `cutover check` and `lag` (runbook/schema_sync.py) on two real Apicurio
registries: nothing is required for topics without schema'd records, in sync after `schemas copy`, a schema
registered on the source after the copy is caught naming its subject, version and id, and the re-run of the
copy brings it back in sync. The same verdict inside the gate, on the local clusters: the rehearsal's
"late schema caught" step (tests/integration/test_rehearsal.py)."""

from __future__ import annotations

import json

from msk_migrate.runbook.schema_sync import schemad_topics, schemas_in_sync
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (fixture)

RECORD = {"type": "record", "name": "Sync", "namespace": "test", "fields": [{"name": "a", "type": "int"}]}


def _register(url: str, subject: str, schema: dict) -> int:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    return int(SchemaRegistryClient({"url": url}).register_schema(subject, Schema(json.dumps(schema), "AVRO")))


def test_a_schema_registered_on_the_source_after_the_copy_is_caught_until_copied_again(registry_pair) -> None:  # noqa: F811
    source, target = registry_pair
    s = RegistryClient("source", source.ccompat_url, "--source-registry")
    t = RegistryClient("target", target.ccompat_url, "--target-registry")
    _register(source.ccompat_url, "sync.orders-value", RECORD)
    # a topic without a topic-name subject is not schema'd: nothing to require of it
    assert schemad_topics(s, ["sync.orders", "sync.raw"]) == ["sync.orders"]
    assert schemas_in_sync(s, t, ["sync.raw"]) is None

    before_copy = schemas_in_sync(s, t, ["sync.orders", "sync.raw"])
    assert before_copy is not None and not before_copy.ok and before_copy.topics == ["sync.orders"]
    assert "schemas copy --to target" in before_copy.evidence

    assert copy_outcome(Direction(s, t), (), lambda _m: None).exit_code == 0
    synced = schemas_in_sync(s, t, ["sync.orders"])
    assert synced is not None and synced.ok, synced
    assert "all 1 version(s)" in synced.evidence

    late = _register(source.ccompat_url, "sync.orders-value",
                     {**RECORD, "fields": [*RECORD["fields"], {"name": "b", "type": "string", "default": ""}]})
    caught = schemas_in_sync(s, t, ["sync.orders"])
    assert caught is not None and not caught.ok
    assert f"sync.orders-value v2 (id {late})" in caught.evidence, caught.evidence

    again = copy_outcome(Direction(s, t), (), lambda _m: None)
    assert again.exit_code == 0 and again.extra["copied"] == 1, again.notes
    after = schemas_in_sync(s, t, ["sync.orders"])
    assert after is not None and after.ok, after


def test_a_protobuf_message_index_naming_no_message_of_the_targets_schema_fails_the_condition(registry_pair) -> None:  # noqa: F811
    """The gate tallies each record's message-index array with its id (the tail read); an array naming no message
    of the schema the target registry holds under that id, or records whose array is missing, fail "schemas in sync"
    even with every version copied: a consumer on the target could not decode them."""
    import uuid

    from confluent_kafka.schema_registry import SchemaRegistryClient

    from msk_migrate.rehearsal import protobuf_demo
    from msk_migrate.validation.schema_ids import count_ids, ids_of, tally

    source, target = registry_pair
    s = RegistryClient("source", source.ccompat_url, "--source-registry")
    t = RegistryClient("target", target.ccompat_url, "--target-registry")
    run = uuid.uuid4().hex[:6]
    topic = f"sync.shipments-{run}"
    client = SchemaRegistryClient({"url": source.ccompat_url})
    ids: dict[str, int] = {}
    protobuf_demo.register(client, lambda subject, schema: ids.setdefault(subject, client.register_schema(subject, schema)),
                           f"{topic}-value", f"sync/common-{run}.proto")
    assert copy_outcome(Direction(s, t), (), lambda _m: None).exit_code == 0
    header = b"\x00" + ids[f"{topic}-value"].to_bytes(4, "big")

    def tail(*arrays: bytes) -> dict:
        counts: dict[bytes, int] = {}
        for a in arrays:
            count_ids(counts, header + a + b"\x08\x01")  # the array, then a Shipment (id = 1)
        return tally([("source", topic, len(arrays), ids_of(counts))])

    proven = schemas_in_sync(s, t, [topic], tail(b"\x00", b"\x02\x00"))  # [0] twice (the shortcut and written out)
    assert proven is not None and proven.ok, proven
    unnamed = schemas_in_sync(s, t, [topic], tail(b"\x00", b"\x02\x0a"))  # [5]: the file has one top-level message
    assert unnamed is not None and not unnamed.ok
    assert (f"Protobuf message indexes not proven: {topic} value schema id {ids[f'{topic}-value']} (PROTOBUF): message "
            "index [5] of 1 record(s) names no message of the schema the target registry holds") in unnamed.evidence, unnamed.evidence
    nested = schemas_in_sync(s, t, [topic], tail(b"\x04\x00\x00"))  # [0, 0]: Shipment.Parcel, a message
    assert nested is not None and nested.ok, nested
    none = schemas_in_sync(s, t, [topic], tail(b"\x00", b"\x01"))  # a negative count: no array a deserializer reads
    assert none is not None and not none.ok
    assert "1 record(s) carry no readable message-index array after the id (not proven)" in none.evidence, none.evidence
