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
