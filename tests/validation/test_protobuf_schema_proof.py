"""Protobuf end to end (issue 45, part 1) on the harness's two Apicurio Registries and the local clusters:
records written by confluent-kafka's ``ProtobufSerializer`` (message classes compiled at run time by protoc from
grpcio-tools, as the rehearsal's Protobuf demo compiles them) whose schema imports another file; ``schemas copy``
keeps both ids (the import first); ``validate`` reads each record's message-index array and proves it in the native
and the Spark engine alike; a record whose message index differs on the target is a difference; an import that no
reference names is refused in one line."""

from __future__ import annotations

import subprocess
import sys
import uuid
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import pytest
import requests
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)
from tests.kafka_helpers import Pair, Rec, create_pairs
from validation_helpers import make_request

from msk_migrate.rehearsal.protobuf_demo import compile_files, message_class, pool_of
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.operations import Direction, copy_outcome
from msk_migrate.validation import run_validation

TIERS = ("jvm",)
BASE_TS = Rec(None, None, None).ts
ORDERS, REFUNDS = 4, 2
H = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def compile_protos(run: str) -> tuple[Any, Any]:
    """``pb<run>/common.proto`` (Money) and ``pb<run>/orders.proto`` (Order, Refund; imports common), compiled by
    grpcio-tools' protoc (the rehearsal's :func:`~msk_migrate.rehearsal.protobuf_demo.compile_files`): the classes
    of each file by message name."""
    pkg = f"pb{run}"
    files = {f"{pkg}/common.proto": f'syntax = "proto3";\npackage {pkg}.common;\n\nmessage Money {{\n'
                                    "  string currency = 1;\n  int64 units = 2;\n}\n",
             f"{pkg}/orders.proto": f'syntax = "proto3";\npackage {pkg}.orders;\n\nimport "{pkg}/common.proto";\n\n'
                                    f"message Order {{\n  string id = 1;\n  {pkg}.common.Money total = 2;\n}}\n\n"
                                    f"message Refund {{\n  string order_id = 1;\n  {pkg}.common.Money amount = 2;\n}}\n"}
    pool = pool_of(compile_files(files))

    def classes(package: str, *names: str) -> SimpleNamespace:
        return SimpleNamespace(**{n: message_class(pool.FindMessageTypeByName(f"{package}.{n}")) for n in names})

    return classes(f"{pkg}.orders", "Order", "Refund"), classes(f"{pkg}.common", "Money")


@pytest.fixture(scope="module")
def estate(clusters, registry_pair):  # noqa: F811 (the fixture)
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    src, tgt = (r.ccompat_url for r in registry_pair)
    run = uuid.uuid4().hex[:6]
    orders_pb2, common_pb2 = compile_protos(run)
    names = {k: f"pb-{k}-{run}" for k in ("same", "reindexed")}
    client = SchemaRegistryClient({"url": src})
    conf = {"use.deprecated.format": False}
    values: dict[str, list[bytes]] = {}
    for topic in names.values():
        ctx = SerializationContext(topic, MessageField.VALUE)
        order, refund = ProtobufSerializer(orders_pb2.Order, client, conf), ProtobufSerializer(orders_pb2.Refund, client, conf)
        money = common_pb2.Money(currency="EUR", units=7)
        values[topic] = ([order(orders_pb2.Order(id=f"o{i}", total=money), ctx) for i in range(ORDERS)]
                         + [refund(orders_pb2.Refund(order_id=f"o{i}", amount=money), ctx) for i in range(REFUNDS)])
    copied = copy_outcome(Direction(RegistryClient("source", src, "--source-registry"),
                                    RegistryClient("target", tgt, "--target-registry")), (f"pb-*-{run}-value",), lambda _m: None)
    pairs = {k: Pair(clusters["source"], clusters["target"], t, partitions=1) for k, t in names.items()}
    create_pairs(list(pairs.values()))
    recs = {t: [Rec(0, f"k{i}".encode(), v, (), BASE_TS + i) for i, v in enumerate(vs)] for t, vs in values.items()}
    pairs["same"].write(recs[names["same"]])
    # on the target, the first Order's bytes carry message index [1] (Refund) instead of [0]: same id, same payload
    first = recs[names["reindexed"]][0]
    assert first.value[5:6] == b"\x00"
    moved = Rec(first.partition, first.key, first.value[:5] + b"\x02\x02" + first.value[6:], first.headers, first.ts)
    pairs["reindexed"].write(recs[names["reindexed"]], [moved, *recs[names["reindexed"]][1:]])
    return {"names": names, "run": run, "copied": copied, "registries": {"source": src, "target": tgt},
            "id": int.from_bytes(values[names["same"]][0][1:5], "big"), "import_subject": f"pb{run}/common.proto"}


def _subject(url: str, subject: str) -> dict[str, Any]:
    return requests.get(f"{url}/subjects/{quote(subject, safe='')}/versions/1", timeout=10).json()


def test_a_copy_keeps_the_ids_of_a_protobuf_schema_and_of_the_file_it_imports(estate):
    out = estate["copied"]
    assert out.exit_code == 0, out.notes
    copied = [r["subject"] for r in out.rows if r["action"] == "copied"]
    assert copied.index(estate["import_subject"]) < copied.index(f"{estate['names']['same']}-value")  # imports first
    src, tgt = estate["registries"]["source"], estate["registries"]["target"]
    for subject in (estate["import_subject"], *(f"{t}-value" for t in estate["names"].values())):
        s, t = _subject(src, subject), _subject(tgt, subject)
        assert (t["id"], t.get("references")) == (s["id"], s.get("references")), subject
    assert _subject(tgt, f"{estate['names']['same']}-value")["id"] == estate["id"]


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["topic"]: t for t in report["topics"]}


def _indexes(row: dict[str, Any]) -> list[tuple[Any, Any, int, int]]:
    (entry,) = row["schemas"]["ids"]
    return sorted((tuple(m["indexes"]), m["message"], m["source"], m["target"]) for m in entry["message_indexes"])


@pytest.fixture(scope="module")
def reports(clusters, estate, spark):
    req = make_request(clusters, topics=list(estate["names"].values()), schema_registry=estate["registries"])
    native = run_validation(req).to_dict()
    import dataclasses

    on_spark = run_validation(dataclasses.replace(req, engine="spark"), spark=spark).to_dict()
    return native, on_spark


def test_validate_proves_each_records_message_index_names_a_message_in_both_engines_alike(estate, reports):
    pkg = f"pb{estate['run']}.orders"
    for report in reports:
        row = _rows(report)[estate["names"]["same"]]
        assert row["schemas"]["status"] == "match", row["schemas"]
        assert row["schemas"]["ids"][0]["schema_type"] == "PROTOBUF"
        assert _indexes(row) == [((0,), f"{pkg}.Order", ORDERS, ORDERS), ((1,), f"{pkg}.Refund", REFUNDS, REFUNDS)]
    native, on_spark = (_rows(r)[estate["names"]["same"]] for r in reports)
    assert native["schemas"] == on_spark["schemas"]
    strip = ("elapsed", "seconds", "duration")
    digests = [[{k: v for k, v in p.items() if not any(s in k for s in strip)} for p in r["partitions"]] for r in (native, on_spark)]
    assert digests[0] == digests[1]


def test_a_record_whose_message_index_differs_on_the_target_is_a_difference(estate, reports):
    pkg = f"pb{estate['run']}.orders"
    for report in reports:
        row = _rows(report)[estate["names"]["reindexed"]]
        assert row["schemas"]["status"] == "mismatch"
        assert _indexes(row) == [((0,), f"{pkg}.Order", ORDERS, ORDERS - 1), ((1,), f"{pkg}.Refund", REFUNDS, REFUNDS + 1)]
        assert any("message index [0] is carried by 4 record(s) on the source and 3 on the target" in p
                   for p in row["problems"]), row["problems"]
    assert _rows(reports[0])[estate["names"]["reindexed"]]["schemas"] == _rows(reports[1])[estate["names"]["reindexed"]]["schemas"]


def test_a_protobuf_import_no_reference_names_is_refused_in_one_line_exit_2_nothing_written(estate):
    src, tgt = estate["registries"]["source"], estate["registries"]["target"]
    subject = f"pb-noref-{estate['run']}-value"
    text = requests.get(f"{src}/subjects/{quote(estate['names']['same'] + '-value', safe='')}/versions/1", timeout=10).json()
    orders = (f'syntax = "proto3";\npackage pb{estate["run"]}.noref;\nimport "pb{estate["run"]}/common.proto";\n'
              f"message Lonely {{ pb{estate['run']}.common.Money m = 1; }}\n")
    assert text["references"]  # the serializer's own registration names its import
    r = requests.post(f"{src}/subjects/{subject}/versions", json={"schema": orders, "schemaType": "PROTOBUF"}, headers=H, timeout=10)
    assert r.status_code == 200, r.text  # Apicurio 3.3.3 takes an import without a reference
    proc = subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", "copy", "--source-registry", src,
                           "--target-registry", tgt, "--subject", subject], capture_output=True, text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert subject in lines[0] and f'imports "pb{estate["run"]}/common.proto"' in lines[0] and "fix:" in lines[0]
    assert requests.get(f"{tgt}/subjects/{subject}/versions", timeout=10).status_code == 404
