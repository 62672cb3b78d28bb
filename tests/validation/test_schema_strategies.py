"""Keys and values, every subject name strategy, on real registries (two Apicurio Registries) and real clusters:
records whose keys and values confluent-kafka's AvroSerializer wrote under RecordNameStrategy and
TopicRecordNameStrategy subjects are read, proven and their strategy told from the subjects holding their ids
(`validate`), the gate's "schemas in sync" covers those topics from their records, a different schema under
the same id on the target is caught, and a subject that fits no strategy is named.

The registries are the session's (:mod:`tests.integration.registry_fixtures`); ids are kept equal on both sides
the way tests/validation/test_schema_proof_registries.py does (levelling, then registering on both).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import Pair, Rec, create_pairs
from tests.validation.test_schema_proof_registries import register_same_id
from validation_helpers import make_request

from msk_migrate.validation import run_validation

#: The registries are JVM processes (Apicurio); the clusters' tier comes from the ``clusters`` fixture.
TIERS = ("jvm",)
BASE_TS = Rec(None, None, None).ts
N = 4


def record(name: str, field: str = "amount") -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": "strat", "fields": [{"name": "id", "type": "long"},
                                                                          {"name": field, "type": "double"}]}


def serializer(url: str, schema: dict[str, Any], strategy: Any) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer

    return AvroSerializer(SchemaRegistryClient({"url": url}), json.dumps(schema), conf={"subject.name.strategy": strategy})


def records(url: str, topic: str, key: tuple[dict[str, Any], Any] | None, value: tuple[dict[str, Any], Any]) -> list[Rec]:
    """``N`` records, the key (if given) and the value each serialised with its schema and strategy."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    kser = serializer(url, key[0], key[1]) if key else None
    vser = serializer(url, value[0], value[1])
    kctx, vctx = SerializationContext(topic, MessageField.KEY), SerializationContext(topic, MessageField.VALUE)
    return [Rec(0, kser({"id": i, "amount": 0.0}, kctx) if kser else f"k{i}".encode(),
                vser({"id": i, "amount": i * 1.5}, vctx), (), BASE_TS + i) for i in range(N)]


@pytest.fixture(scope="module")
def estate(clusters, registry_pair):  # noqa: F811 (the fixture)
    """``both``: keys under RecordNameStrategy, values under TopicRecordNameStrategy, the same schemas under the same
    ids on the target; ``differing``: values under RecordNameStrategy, another schema under that id on the target;
    ``odd``: values under a subject no strategy names; ``wide``: values in Apicurio's 8-byte global-id format
    (magic byte, the global id as 8 bytes, the Avro payload; Apicurio's Java serdes' default, built by hand here)."""
    from confluent_kafka.schema_registry import record_subject_name_strategy, topic_record_subject_name_strategy

    src, tgt = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    names = {k: f"strat-{k}-{run}" for k in ("both", "differing", "odd", "wide")}
    pairs = {k: Pair(clusters["source"], clusters["target"], t, partitions=1) for k, t in names.items()}
    create_pairs(list(pairs.values()))
    key_s, order_s = record(f"Key{run}"), record(f"Order{run}")
    ids = {"key": register_same_id(src, tgt, f"strat.Key{run}", key_s),
           "value": register_same_id(src, tgt, f"{names['both']}-strat.Order{run}", order_s)}
    pairs["both"].write(records(src, names["both"], (key_s, record_subject_name_strategy),
                                (order_s, topic_record_subject_name_strategy)))

    diff_s = record(f"Diff{run}")
    ids["differing"] = register_same_id(src, tgt, f"strat.Diff{run}", diff_s, target_schema=record(f"Diff{run}", "total"))
    pairs["differing"].write(records(src, names["differing"], None, (diff_s, record_subject_name_strategy)))

    odd_s, odd_subject = record(f"Odd{run}"), f"odd-subject-{run}"
    ids["odd"] = register_same_id(src, tgt, odd_subject, odd_s)
    pairs["odd"].write(records(src, names["odd"], None, (odd_s, lambda _ctx, _name: odd_subject)))
    wide = serializer(src, record(f"Wide{run}"), record_subject_name_strategy)
    from confluent_kafka.serialization import MessageField, SerializationContext

    payload = wide({"id": 1, "amount": 1.0}, SerializationContext(names["wide"], MessageField.VALUE))[5:]
    pairs["wide"].write([Rec(0, f"k{i}".encode(), b"\x00" + (i + 1).to_bytes(8, "big") + payload, (), BASE_TS + i)
                         for i in range(N)])
    return {"names": names, "ids": ids, "run": run, "odd_subject": odd_subject,
            "registries": {"source": src, "target": tgt}}


@pytest.fixture(scope="module")
def report(clusters, estate):
    return run_validation(make_request(clusters, topics=list(estate["names"].values()),
                                       schema_registry=estate["registries"])).to_dict()


def _row(report: dict[str, Any], topic: str) -> dict[str, Any]:
    return next(t for t in report["topics"] if t["topic"] == topic)


def test_keys_and_values_under_record_and_topic_record_subjects_are_proven_and_their_strategies_named(estate, report):
    t = _row(report, estate["names"]["both"])
    row, run = t["schemas"], estate["run"]
    assert t["status"] == "match" and row["status"] == "match", t["problems"]
    assert sorted(i["id"] for i in row["ids"]) == sorted([estate["ids"]["key"], estate["ids"]["value"]])
    assert row["resolved_identical"] == 2
    key, value = row["parts"]["key"], row["parts"]["value"]
    assert (key["strategy"], key["subjects"]) == ("record", [f"strat.Key{run}"])
    assert (value["strategy"], value["subjects"]) == ("topic-record", [f"{estate['names']['both']}-strat.Order{run}"])
    assert key["source"] == {"values": N, "wire_format": N, "not_schemad": 0} and key["target"] == key["source"]
    by_id = {i["id"]: i for i in row["ids"]}
    assert by_id[estate["ids"]["key"]]["parts"] == ["key"] and by_id[estate["ids"]["value"]]["parts"] == ["value"]


def test_another_schema_under_the_same_id_on_the_target_is_caught_under_record_name_strategy(estate, report):
    t = _row(report, estate["names"]["differing"])
    row = t["schemas"]
    assert t["status"] == "mismatch" and row["differing"] == [estate["ids"]["differing"]]
    assert row["parts"]["value"]["strategy"] == "record"
    assert report["verdict"] == "mismatch"


def test_a_subject_no_strategy_names_is_a_problem_naming_topic_and_subject_never_a_pass(estate, report):
    t = _row(report, estate["names"]["odd"])
    assert t["status"] == "mismatch" and t["schemas"]["status"] == "mismatch"
    assert t["schemas"]["resolved_identical"] == 1  # the id itself resolves identically: the strategy is the problem
    problem = t["schemas"]["parts"]["value"]["problem"]
    assert problem.startswith(f"topic {estate['names']['odd']}: value schema id {estate['ids']['odd']} is held by "
                              f"{estate['odd_subject']}, which fits no subject name strategy"), problem
    assert problem in t["problems"] and problem in report["verdict_reason"]


def test_the_gate_finds_the_topics_from_their_records_names_the_strategies_and_catches_the_differing_schema(clusters, estate):
    from msk_migrate.access.admin import AdminSession
    from msk_migrate.runbook.record_ids import tail_ids
    from msk_migrate.runbook.schema_sync import schemad_topics, schemas_in_sync
    from msk_migrate.schemas.client import RegistryClient as SchemasClient

    names, run = estate["names"], estate["run"]
    s = SchemasClient("source", estate["registries"]["source"], "--source-registry")
    t = SchemasClient("target", estate["registries"]["target"], "--target-registry")
    tail = tail_ids(AdminSession("source", {"bootstrap.servers": clusters["source"]}), list(names.values()))
    assert tail.complete and tail.records == 4 * N
    # by topic-name subjects alone (the gate before it read records) none of them is schema'd
    assert schemad_topics(s, [names["both"], names["differing"]]) == []

    both = schemas_in_sync(s, t, [names["both"]], tail.topics)
    assert both is not None and both.topics == [names["both"]]
    assert {p: (x.strategy, x.subjects) for p, x in both.strategies[names["both"]].items()} == {
        "key": ("record", (f"strat.Key{run}",)), "value": ("topic-record", (f"{names['both']}-strat.Order{run}",))}
    assert f"RecordNameStrategy (strat.Key{run})" in both.evidence, both.evidence

    differing = schemas_in_sync(s, t, [names["differing"]], tail.topics)
    assert differing is not None and differing.topics == [names["differing"]] and not differing.ok
    assert differing.strategies[names["differing"]]["value"].subjects == (f"strat.Diff{run}",)


def test_the_gate_refuses_a_subject_no_strategy_names_in_one_line_exit_2(clusters, estate):
    from msk_migrate.access.admin import AdminSession
    from msk_migrate.errors import UsageError
    from msk_migrate.runbook.record_ids import tail_ids
    from msk_migrate.runbook.schema_sync import schemas_in_sync
    from msk_migrate.schemas.client import RegistryClient as SchemasClient

    odd = estate["names"]["odd"]
    s = SchemasClient("source", estate["registries"]["source"], "--source-registry")
    t = SchemasClient("target", estate["registries"]["target"], "--target-registry")
    tail = tail_ids(AdminSession("source", {"bootstrap.servers": clusters["source"]}), [odd])
    with pytest.raises(UsageError) as caught:
        schemas_in_sync(s, t, [odd], tail.topics)
    line = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in line
    assert line.startswith(f"--source-registry: topic {odd}: value schema id {estate['ids']['odd']} is held by "
                           f"{estate['odd_subject']}, which fits no subject name strategy"), line
    assert "subject.name.strategy" in line


def test_values_in_apicurios_8_byte_format_are_refused_by_name_in_the_report_and_the_gate(clusters, estate, report):
    from msk_migrate.access.admin import AdminSession
    from msk_migrate.errors import UsageError
    from msk_migrate.runbook.record_ids import tail_ids
    from msk_migrate.runbook.schema_sync import schemas_in_sync
    from msk_migrate.schemas.client import RegistryClient as SchemasClient

    wide = estate["names"]["wide"]
    t = _row(report, wide)
    assert t["status"] == "schemas-not-checked" and t["schemas"]["status"] == "not-checked"
    assert t["schemas"]["reason"].startswith(f"topic {wide}: values carry Apicurio 8-byte global ids"), t["schemas"]
    assert t["schemas"]["ids"] == []  # id 0 is not resolved as if it were a Confluent id
    s = SchemasClient("source", estate["registries"]["source"], "--source-registry")
    tgt = SchemasClient("target", estate["registries"]["target"], "--target-registry")
    tail = tail_ids(AdminSession("source", {"bootstrap.servers": clusters["source"]}), [wide])
    with pytest.raises(UsageError, match=rf"^--source-registry: topic {wide}: values carry Apicurio 8-byte global ids"):
        schemas_in_sync(s, tgt, [wide], tail.topics)
