"""Proof per record on real registries (two Apicurio Registries) and real clusters: records produced with
confluent-kafka's AvroSerializer against the source registry, the same bytes on the target cluster (what MM2
copies), and the validator resolving every id on both registries.

The registries are shared by the session and Apicurio's Confluent API assigns ids itself (it ignores a
requested id), so a schema that must have the same id on both is registered after both registries' next id
is brought level with throw-away schemas (:func:`register_same_id`); a test asserts the ids it relies on.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import Pair, Rec, create_pairs
from validation_helpers import make_request

from msk_migrate.validation import run_validation
from msk_migrate.validation.schema_ids import wire_id
from msk_migrate.validation.schema_proof import IDENTICAL, Prover, RegistryClient

#: The registries are JVM processes (Apicurio); the clusters' tier comes from the ``clusters`` fixture.
TIERS = ("jvm",)
BASE_TS = Rec(None, None, None).ts
MISSING_AHEAD = 20


def _call(url: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(url, method="GET" if body is None else "POST",
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def register(url: str, subject: str, schema: dict[str, Any], refs: list[dict[str, Any]] | None = None) -> int:
    body: dict[str, Any] = {"schema": json.dumps(schema)}
    if refs:
        body["references"] = refs
    return int(_call(f"{url}/subjects/{subject}/versions", body)["id"])


def _dummy(url: str) -> int:
    name = "pad" + uuid.uuid4().hex
    return register(url, f"pad-{name}", {"type": "record", "name": name, "fields": []})


def level(src: str, tgt: str) -> None:
    """Bring both registries' next id level (throw-away schemas on the one behind)."""
    s, t = _dummy(src), _dummy(tgt)
    while s != t:
        if s < t:
            s = _dummy(src)
        else:
            t = _dummy(tgt)


def register_same_id(src: str, tgt: str, subject: str, schema: dict[str, Any], target_schema: dict[str, Any] | None = None,
                     refs: list[dict[str, Any]] | None = None) -> int:
    """``schema`` on the source and ``target_schema`` (default: the same) on the target, under one id."""
    level(src, tgt)
    sid = register(src, subject, schema, refs)
    tid = register(tgt, subject, target_schema or schema, refs)
    assert sid == tid, f"the registries gave {subject} ids {sid} and {tid}: the levelling did not hold"
    return sid


def order_schema(run: str, field: str = "amount") -> dict[str, Any]:
    return {"type": "record", "name": f"Order{run}", "namespace": "proof",
            "fields": [{"name": "id", "type": "long"}, {"name": field, "type": "double"}]}


def avro_records(registry_url: str, topic: str, schema: dict[str, Any], n: int, ts0: int = BASE_TS) -> list[Rec]:
    """``n`` records serialised by confluent-kafka's AvroSerializer (subject ``<topic>-value``; the schema is
    registered, or found registered, on ``registry_url``)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": registry_url})
    ser = AvroSerializer(client, json.dumps(schema))
    ctx = SerializationContext(topic, MessageField.VALUE)
    field = schema["fields"][1]["name"]
    return [Rec(0, f"k{i}".encode(), ser({"id": i, field: i * 1.5}, ctx), (), ts0 + i) for i in range(n)]


@pytest.fixture(scope="module")
def topics(clusters, registry_pair):  # noqa: F811 (the fixture)
    """Four topics, the same bytes on both clusters: ``match`` (two versions, both copied), ``missing`` (a version
    registered on the source only), ``differing`` (another schema under the same id on the target), ``raw``."""
    src, tgt = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    names = {k: f"proof-{k}-{run}" for k in ("match", "missing", "differing")}
    pairs = [Pair(clusters["source"], clusters["target"], t, partitions=1) for t in names.values()]
    create_pairs(pairs)
    ids: dict[str, Any] = {}

    v1, v2 = order_schema(run), order_schema(run) | {"fields": [*order_schema(run)["fields"],
                                                                  {"name": "note", "type": "string", "default": ""}]}
    subject = f"{names['match']}-value"
    ids["match"] = [register_same_id(src, tgt, subject, v1), register_same_id(src, tgt, subject, v2)]
    recs = avro_records(src, names["match"], v1, 5) + avro_records(src, names["match"], v2, 5, BASE_TS + 100)
    pairs[0].write(recs)

    differing = order_schema(run + "d")
    ids["differing"] = register_same_id(src, tgt, f"{names['differing']}-value", differing,
                                        target_schema=order_schema(run + "d", field="total"))
    pairs[2].write(avro_records(src, names["differing"], differing, 3))

    # registered on the source only, MISSING_AHEAD ids ahead of the target's next one (so that levelling by
    # later tests of the session does not give the id to a throw-away schema on the target first)
    level(src, tgt)
    for _ in range(MISSING_AHEAD):
        _dummy(src)
    recs = avro_records(src, names["missing"], order_schema(run + "m"), 4)
    ids["missing"] = wire_id(recs[0].value)
    pairs[1].write(recs)
    return {"names": names, "ids": ids, "registries": {"source": src, "target": tgt}}


def _validate(clusters, topic: str, **kw: Any):
    return run_validation(make_request(clusters, topics=[topic], **kw))


def test_records_whose_ids_resolve_identically_on_both_registries_match_with_a_schema_row(clusters, topics):
    report = _validate(clusters, topics["names"]["match"], schema_registry=topics["registries"])
    assert report.verdict == "match", report.verdict_reason()
    row = report.to_dict()["topics"][0]["schemas"]
    assert row["status"] == "match" and row["schemad"]
    assert (row["ids_seen"], row["resolved_identical"]) == (2, 2)
    assert [i["id"] for i in row["ids"]] == sorted(topics["ids"]["match"])
    assert [i["records"] for i in row["ids"]] == [{"source": 5, "target": 5}] * 2
    assert row["source"] == {"values": 10, "wire_format": 10, "not_schemad": 0}
    assert report.to_dict()["schema_registry"] == topics["registries"]
    assert report.talked_to()["target_schema_registry"] == topics["registries"]["target"]


def test_a_record_whose_id_is_missing_on_the_target_registry_is_a_mismatch_naming_the_id(clusters, topics):
    report = _validate(clusters, topics["names"]["missing"], schema_registry=topics["registries"])
    missing = topics["ids"]["missing"]
    assert RegistryClient("target", topics["registries"]["target"]).schema(missing) is None, "precondition"
    assert report.verdict == "mismatch" and report.exit_code == 1
    row = report.to_dict()["topics"][0]["schemas"]
    assert row["status"] == "mismatch" and row["missing_on_target"] == [missing]
    assert f"schema id {missing} missing on target" in " ".join(report.topics[0].problems)
    assert f": {missing}" in report.verdict_reason()
    # the records themselves are the same bytes on both clusters: only the schema proof fails
    assert all(p.status == "match" for p in report.topics[0].partitions)


def test_a_different_schema_under_the_same_id_on_the_target_is_a_mismatch_naming_the_id(clusters, topics):
    report = _validate(clusters, topics["names"]["differing"], schema_registry=topics["registries"])
    sid = topics["ids"]["differing"]
    assert report.verdict == "mismatch"
    row = report.to_dict()["topics"][0]["schemas"]
    assert row["differing"] == [sid] and row["resolved_identical"] == 0
    assert row["ids"][0]["differences"][0].startswith("schema text differs")
    assert f"schema id {sid} differing" in " ".join(report.topics[0].problems)


def test_schemad_records_without_registries_are_not_a_pass_unless_the_run_opts_out(clusters, topics):
    report = _validate(clusters, topics["names"]["match"])
    assert report.verdict == "schemas-not-checked" and report.exit_code == 1
    assert "no schema registries were given" in report.verdict_reason()
    skipped = _validate(clusters, topics["names"]["match"], ignore_schemas=True)
    assert skipped.verdict == "match" and skipped.to_dict()["topics"][0]["schemas"]["status"] == "skipped"


def test_an_unreachable_registry_is_one_line_naming_the_side(clusters, topics):
    from msk_migrate.errors import UnreachableError

    regs = {**topics["registries"], "target": "http://127.0.0.1:9/apis/ccompat/v7"}
    with pytest.raises(UnreachableError, match=r"^target schema registry http://127\.0\.0\.1:9/apis/ccompat/v7: "):
        _validate(clusters, topics["names"]["match"], schema_registry=regs)


def test_the_spark_engine_reads_the_ids_with_an_aggregate_and_proves_them_the_same_way(clusters, spark, topics):
    names = topics["names"]
    req = make_request(clusters, topics=[names["match"], names["missing"]], engine="spark",
                       schema_registry=topics["registries"])
    report = run_validation(req, spark=spark)
    assert report.verdict == "mismatch"
    rows = {t["topic"]: t["schemas"] for t in report.to_dict()["topics"]}
    assert rows[names["match"]]["status"] == "match" and rows[names["match"]]["resolved_identical"] == 2
    assert rows[names["match"]]["source"] == {"values": 10, "wire_format": 10, "not_schemad": 0}
    assert rows[names["missing"]]["missing_on_target"] == [topics["ids"]["missing"]]


# Last in the module: its levelling pads the target registry up to the source's next id, which gives the
# id of the 'missing' topic to a throw-away schema on the target (the tests above rely on it being absent).
def test_a_reference_whose_schema_differs_under_the_same_subject_version_makes_the_id_differ(registry_pair):  # noqa: F811
    src, tgt = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    item = f"proof-item-{run}"
    item_s = {"type": "record", "name": f"Item{run}", "namespace": "proof", "fields": [{"name": "sku", "type": "string"}]}
    item_t = {**item_s, "fields": [{"name": "sku", "type": "long"}]}
    register(src, item, item_s)
    register(tgt, item, item_t)
    order = {"type": "record", "name": f"Order{run}", "namespace": "proof",
             "fields": [{"name": "item", "type": f"proof.Item{run}"}]}
    refs = [{"name": f"proof.Item{run}", "subject": item, "version": 1}]
    sid = register_same_id(src, tgt, f"proof-order-{run}", order, refs=refs)
    prover = Prover(RegistryClient("source", src), RegistryClient("target", tgt))
    proof = prover.prove(sid)
    assert proof.status == "differing"
    assert proof.differences[0].startswith(f"reference proof.Item{run} (subject {item} version 1): schema text differs")

    same_item = f"proof-item-same-{run}"
    register(src, same_item, item_s | {"name": f"Same{run}"})
    register(tgt, same_item, item_s | {"name": f"Same{run}"})
    refs = [{"name": f"proof.Same{run}", "subject": same_item, "version": 1}]
    ok = register_same_id(src, tgt, f"proof-order-same-{run}", order | {"fields": [{"name": "item", "type": f"proof.Same{run}"}]},
                          refs=refs)
    assert prover.prove(ok).status == IDENTICAL
    with pytest.raises(urllib.error.HTTPError):  # the registry answers 404 for an unknown id: our client says None
        _call(f"{src}/schemas/ids/{2**31 - 1}")
    assert RegistryClient("source", src).schema(2**31 - 1) is None
