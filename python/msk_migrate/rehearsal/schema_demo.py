"""The rehearsal's schema'd demo applications: subjects registered on the SOURCE registry the way producers
leave them after a few releases, records written with confluent-kafka's serializers, and the consumers
that decode them with a registry of either side.

What the source registry holds after :func:`register_demo_schemas` (all of it is what ``schemas copy`` must keep):

- ``shop.ledger-value`` (Avro): three compatible versions (a field with a default added, then a field whose
  type is a referenced record), compatibility ``BACKWARD_TRANSITIVE`` on the subject;
- ``shop.customer-ref`` (Avro): the record version 3 of ``shop.ledger-value`` refers to;
- ``shop.drafts-value`` (Avro): two versions, the first soft-deleted;
- ``shop.audit-key`` and ``shop.audit-value`` (JSON Schema, TopicNameStrategy): one version each, for a second wire
  format;
- ``shop.shipments-value`` (Protobuf): ``shop/shipments.proto``, which imports ``shop/common.proto`` (subject
  ``shop/common.proto``, its reference), and ``shop.shipments-key`` (Protobuf, ``shop/shipment_key.proto``):
  :mod:`.protobuf_demo`;
- ``shop.returns-key`` (Avro, TopicNameStrategy) and ``shop.Return`` (Avro, RecordNameStrategy): the keys and the
  values of ``shop.returns``, :mod:`.returns_demo`;
- ids that are not contiguous: throwaway subjects registered between them and deleted permanently.

Records (a few hundred: CI size) go to ``shop.ledger`` (every Avro version in turn; plain-bytes keys),
``shop.audit`` (JSON Schema keys and values), ``shop.shipments`` (Protobuf keys and values: confluent-kafka's
``ProtobufSerializer``, classes compiled by protoc at run time) and ``shop.returns`` (Avro keys and values): every
format on keys as on values (:data:`.demo.SCHEMA_PARTS`). :func:`topic_decoder` is the proof of each record a
consumer reads, both parts where both are schema'd.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from ..validation.schema_ids import wire_id
from . import protobuf_demo, returns_demo
from .decoding import PairedDecoder, RegistryPart, decode_record
from .demo import AVRO_TOPIC, JSON_TOPIC, PROTOBUF_TOPIC, RETURNS_TOPIC, SCHEMA_TOPICS, DemoApps, commit, produce, retrying
from .result import StepFailed

#: The subject whose compatibility is set per subject, and the setting.
SUBJECT_COMPATIBILITY = ("shop.ledger-value", "BACKWARD_TRANSITIVE")
#: The subject the moved producers register on the TARGET registry while producers run there (rollback case).
TARGET_ONLY_SUBJECT = "shop.orders-value"

_LEDGER_V1 = {"type": "record", "name": "Ledger", "namespace": "shop",
              "fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "int"}]}
_LEDGER_V2 = {**_LEDGER_V1, "fields": [*_LEDGER_V1["fields"], {"name": "currency", "type": "string", "default": "EUR"}]}
_CUSTOMER = {"type": "record", "name": "Customer", "namespace": "shop",
             "fields": [{"name": "customer_id", "type": "int"}, {"name": "tier", "type": "string"}]}
_LEDGER_V3 = {**_LEDGER_V2, "fields": [*_LEDGER_V2["fields"], {"name": "customer", "type": ["null", "shop.Customer"],
                                                                 "default": None}]}
_DRAFT_V1 = {"type": "record", "name": "Draft", "namespace": "shop", "fields": [{"name": "note", "type": "string"}]}
_DRAFT_V2 = {**_DRAFT_V1, "fields": [*_DRAFT_V1["fields"], {"name": "rev", "type": "int", "default": 0}]}
_AUDIT = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Audit", "type": "object",
          "properties": {"seq": {"type": "integer"}, "actor": {"type": "string"}}, "required": ["seq", "actor"]}
#: The keys of shop.audit (TopicNameStrategy: ``shop.audit-key``): record i's key is ``{"seq": i}``.
_AUDIT_KEY = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "AuditKey", "type": "object",
              "properties": {"seq": {"type": "integer"}}, "required": ["seq"]}
_MOVED = {"type": "record", "name": "MovedOrder", "namespace": "shop", "fields": [{"name": "moved", "type": "int"}]}


def registry_client(url: str) -> Any:
    """confluent-kafka's registry client of a demo application (what the serializers use)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient({"url": url})


def _schema(body: dict[str, Any], kind: str = "AVRO", refs: list[Any] | None = None) -> Any:
    from confluent_kafka.schema_registry import Schema

    return Schema(json.dumps(body), kind, refs or [])


def _gap(client: Any, tag: str, n: int) -> None:
    """``n`` ids used and given back: throwaway subjects registered, then deleted permanently."""
    for i in range(n):
        subject = f"rehearsal-throwaway-{tag}-{i}"
        client.register_schema(subject, _schema({"type": "record", "name": f"T{tag}{i}", "fields": [
            {"name": "x", "type": "int"}]}))
        client.delete_subject(subject)
        client.delete_subject(subject, permanent=True)


def register_demo_schemas(url: str) -> dict[str, Any]:
    """Register the demo subjects on the registry at ``url`` (the source's); returns what was registered:
    subject -> ids, in version order, and the gaps made."""
    from confluent_kafka.schema_registry import SchemaReference

    c = registry_client(url)
    ids: dict[str, list[int]] = {}

    def reg(subject: str, schema: Any) -> None:
        ids.setdefault(subject, []).append(c.register_schema(subject, schema))

    reg("shop.ledger-value", _schema(_LEDGER_V1))
    c.set_compatibility(SUBJECT_COMPATIBILITY[0], SUBJECT_COMPATIBILITY[1])
    _gap(c, "a", 2)
    reg("shop.ledger-value", _schema(_LEDGER_V2))
    reg("shop.customer-ref", _schema(_CUSTOMER))
    _gap(c, "b", 3)
    ref = SchemaReference("shop.Customer", "shop.customer-ref", 1)
    reg("shop.ledger-value", _schema(_LEDGER_V3, refs=[ref]))
    reg("shop.drafts-value", _schema(_DRAFT_V1))
    reg("shop.drafts-value", _schema(_DRAFT_V2))
    c.delete_version("shop.drafts-value", 1)  # soft: the id stays readable, the version is listed as deleted
    register_audit(reg)
    protobuf_demo.register(c, reg)
    protobuf_demo.register_key(reg)
    returns_demo.register(reg)
    every = sorted(i for v in ids.values() for i in v)
    gaps = sum(b - a - 1 for a, b in itertools.pairwise(every))
    if gaps <= 0:
        raise StepFailed(f"the demo ids {every} are contiguous: the throwaway subjects made no gap")
    return {"ids": ids, "gaps": gaps}


def register_late_version(url: str) -> int:
    """A producer's new release after ``schemas copy``: version 4 of ``shop.ledger-value`` (a field with a
    default added: compatible) on the registry at ``url``. Returns its id."""
    from confluent_kafka.schema_registry import SchemaReference

    late = {**_LEDGER_V3, "fields": [*_LEDGER_V3["fields"], {"name": "note", "type": "string", "default": ""}]}
    ref = SchemaReference("shop.Customer", "shop.customer-ref", 1)
    return int(registry_client(url).register_schema("shop.ledger-value", _schema(late, refs=[ref])))


def _ledger_versions(url: str) -> list[tuple[Any, Callable[[int], dict[str, Any]]]]:
    """(schema, record of index i) per version of shop.ledger-value, oldest first."""
    from confluent_kafka.schema_registry import SchemaReference

    ref = SchemaReference("shop.Customer", "shop.customer-ref", 1)
    return [(_schema(_LEDGER_V1), lambda i: {"id": i, "amount": i % 1000}),
            (_schema(_LEDGER_V2), lambda i: {"id": i, "amount": i % 1000, "currency": "USD"}),
            (_schema(_LEDGER_V3, refs=[ref]), lambda i: {"id": i, "amount": i % 1000, "currency": "EUR",
                                                         "customer": {"customer_id": i % 50, "tier": "gold"}})]


def register_audit(reg: Callable[[str, Any], None], topic: str = JSON_TOPIC) -> None:
    """Register shop.audit's key and value schemas (JSON Schema) through ``reg(subject, schema)``, under
    ``<topic>-key`` and ``<topic>-value`` (TopicNameStrategy)."""
    reg(f"{topic}-key", _schema(_AUDIT_KEY, "JSON"))
    reg(f"{topic}-value", _schema(_AUDIT, "JSON"))


def audit_key(i: int) -> dict[str, Any]:
    """The key of shop.audit's record ``i``."""
    return {"seq": i}


def audit_value(i: int) -> dict[str, Any]:
    """The value shop.audit's producer writes under the key of record ``i``."""
    return {"seq": i, "actor": f"user-{i % 7}"}


def audit_serializer(client: Any, topic: str = JSON_TOPIC) -> Callable[[int], tuple[bytes, bytes]]:
    """Record i -> (key bytes, value bytes): confluent-kafka's ``JSONSerializer`` per part, each under its
    TopicNameStrategy subject (``<topic>-key``, ``<topic>-value``), looked up, never registered."""
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    conf = {"auto.register.schemas": False}
    kser, vser = (JSONSerializer(json.dumps(body), client, conf=conf) for body in (_AUDIT_KEY, _AUDIT))
    kctx, vctx = (SerializationContext(topic, f) for f in (MessageField.KEY, MessageField.VALUE))
    return lambda i: (kser(audit_key(i), kctx), vser(audit_value(i), vctx))


class AuditDecoder(PairedDecoder):
    """Decodes one record of shop.audit, key and value, with confluent-kafka's ``JSONDeserializer`` and the registry
    at ``url``: each part's id one the registry maps to its subject (``<topic>-key``, ``<topic>-value``), its bytes
    decoding, the key one the producer writes and the value the one written under it (:class:`.decoding.PairedDecoder`)."""

    def __init__(self, url: str, topic: str = JSON_TOPIC) -> None:
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        client = registry_client(url)
        key, value = (RegistryPart(client, url, f"{topic}-{p}", JSONDeserializer(None, schema_registry_client=client),
                                   SerializationContext(topic, f), "JSON text")
                      for p, f in (("key", MessageField.KEY), ("value", MessageField.VALUE)))
        #: part -> {id: version} of every version the registry holds under the part's subject
        self.ids = {"key": key.ids, "value": value.ids}

        def index_of(got: dict[str, Any]) -> int | None:
            seq = got.get("seq")
            return seq if isinstance(seq, int) and seq >= 0 and got == audit_key(seq) else None

        super().__init__(key, value, index_of, audit_value)


def produce_schema_demo(apps: DemoApps, bootstrap: str, url: str, say: Callable[[str], None]) -> dict[str, int]:
    """Write the schema'd records with confluent-kafka's serializers against the registry at ``url``; the
    schemas must be registered (the serializers look them up: no registration on the way). Returns the
    records written per topic."""
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = registry_client(url)
    conf = {"auto.register.schemas": False}
    failed: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(err.str())

    p = Producer(apps.config(bootstrap, **{"linger.ms": 5}))
    versions = _ledger_versions(url)
    n_avro, n_json, n_proto, n_returns = (SCHEMA_TOPICS[t][1] for t in (AVRO_TOPIC, JSON_TOPIC, PROTOBUF_TOPIC, RETURNS_TOPIC))
    say(f"producing {n_avro} Avro records ({len(versions)} versions of shop.ledger-value), {n_json} records with JSON "
        f"Schema keys and values, {n_proto} with Protobuf keys and values and {n_returns} with Avro keys and values")
    avro_ctx = SerializationContext(AVRO_TOPIC, MessageField.VALUE)
    for v, (schema, record) in enumerate(versions):
        ser = AvroSerializer(client, schema, conf=conf)
        for i in range(v, n_avro, len(versions)):
            produce(p, AVRO_TOPIC, f"ledger-{i}".encode(), ser(record(i), avro_ctx), None, delivered)
    # the topics whose keys are schema'd too: one serializer per part, (key, value) per record
    keyed = ((JSON_TOPIC, n_json, audit_serializer(client)), (PROTOBUF_TOPIC, n_proto, protobuf_demo.serializer(url, PROTOBUF_TOPIC)),
             (RETURNS_TOPIC, n_returns, returns_demo.serializer(client)))
    for topic, n, write in keyed:
        for i in range(n):
            key, value = write(i)
            produce(p, topic, key, value, None, delivered)
    left = p.flush(60)
    if failed or left:
        raise StepFailed(f"schema'd demo records: {len(failed) + left} not delivered" + (f" ({failed[0]})" if failed else ""))
    return {AVRO_TOPIC: n_avro, JSON_TOPIC: n_json, PROTOBUF_TOPIC: n_proto, RETURNS_TOPIC: n_returns}


def write_moved_avro(apps: DemoApps, bootstrap: str, topic: str, records: int, url: str) -> int:
    """The moved producers: ``records`` Avro records to ``topic``, registering their schema on the registry at
    ``url`` (the TARGET's: a subject the source registry has never seen). Returns the schema's id."""
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = registry_client(url)
    ser = AvroSerializer(client, _schema(_MOVED))
    ctx = SerializationContext(topic, MessageField.VALUE)
    p = Producer(apps.config(bootstrap, **{"linger.ms": 5}))
    for i in range(records):
        produce(p, topic, f"moved-{i % 500}".encode(), ser({"moved": i}, ctx), None)
    if p.flush(30):
        raise StepFailed(f"the moved producers' records to {topic} were not all delivered within 30 s")
    return int(client.get_latest_version(TARGET_ONLY_SUBJECT).schema_id)


def _value_type(client: Any, topic: str) -> str:
    """The type of ``topic``'s value subject (TopicNameStrategy) on the registry; AVRO when it has none."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    try:
        return str(client.get_latest_version(f"{topic}-value").schema.schema_type or "AVRO").upper()
    except SchemaRegistryError:
        return "AVRO"


def topic_decoder(topic: str, target_topic: str, url: str) -> Decoder | None:
    """The proof of each record of the schema'd demo topic ``topic`` (read as ``target_topic``) with the registry at
    ``url``: key and value for the topics whose keys are schema'd (:data:`.demo.SCHEMA_PARTS`), None for a topic
    whose values only are (:func:`decode_parts` then decodes the values by their subject's type)."""
    if topic == JSON_TOPIC:
        return AuditDecoder(url, target_topic)
    if topic == PROTOBUF_TOPIC:
        return protobuf_demo.TopicDecoder(url, target_topic)
    if topic == RETURNS_TOPIC:
        return returns_demo.TopicDecoder(url, returns_demo.Returns(target_topic))
    return None


def _value_decoder(topic: str, url: str) -> Callable[[bytes | None, bytes, str], Any]:
    """(key, value, where) -> the decoded value, with confluent-kafka's deserializer for the type of ``topic``'s value
    subject on the registry at ``url``; a record that does not decode raises :class:`StepFailed` naming ``where``.
    A Protobuf topic is the Protobuf demo's, whose keys are Protobuf too: both parts proven
    (:class:`.protobuf_demo.TopicDecoder`)."""
    client = registry_client(url)
    kind = _value_type(client, topic)
    if kind == "PROTOBUF":
        return protobuf_demo.TopicDecoder(url, topic)
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    de = JSONDeserializer(None, schema_registry_client=client) if kind == "JSON" else AvroDeserializer(client)
    sctx = SerializationContext(topic, MessageField.VALUE)

    def decode(_key: bytes | None, value: bytes, where: str) -> Any:
        return decode_record(de, value, sctx, where, f"with the registry at {url}")

    return decode


#: (key, value, where) -> the decoded value; raises :class:`StepFailed` naming ``where`` for a record it cannot prove.
Decoder = Callable[[bytes | None, bytes, str], Any]


def decode_all(apps: DemoApps, bootstrap: str, topic: str, url: str, only_schemad: bool = False,
               timeout: float = 60.0, decoder: Decoder | None = None) -> tuple[int, Counter[int]]:
    """Read ``topic`` from its beginning to its current end on ``bootstrap`` and decode every value with
    confluent-kafka's deserializer for its format, resolving ids on the registry at ``url``. Returns
    (records decoded, the values' schema ids seen); a record that does not decode fails the step naming it.
    ``only_schemad``: values not in the wire format (no magic byte) are skipped, not decoded. ``decoder``: the
    proof of each record (key and value) when the value subject's type does not say it (:func:`decode_parts`)."""
    n, ids = decode_parts(apps, bootstrap, topic, url, only_schemad, timeout, decoder)
    return n, ids["value"]


def decode_parts(apps: DemoApps, bootstrap: str, topic: str, url: str, only_schemad: bool = False,
                 timeout: float = 60.0, decoder: Decoder | None = None) -> tuple[int, dict[str, Counter[int]]]:
    """:func:`decode_all`, returning the schema ids seen per part (``key``, ``value``): a key is tallied when it is
    in the wire format, which the demo's plain-bytes keys never are. Keys are decoded and proven only by a
    ``decoder`` that does so (:func:`topic_decoder`: a :class:`.decoding.PairedDecoder`)."""
    decode = decoder or _value_decoder(topic, url)
    c = Consumer(apps.config(bootstrap, **{"group.id": f"rehearsal-decoder-{time.time_ns()}", "enable.auto.commit": False,
                                           "isolation.level": "read_committed"}))
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in parts}
    c.assign([TopicPartition(topic, p, lo) for p, (lo, _hi) in ends.items()])
    todo = {p for p, (lo, hi) in ends.items() if hi > lo}
    decoded, ids = 0, {"key": Counter[int](), "value": Counter[int]()}
    deadline = time.time() + timeout
    try:
        while todo and time.time() < deadline:
            for m in c.consume(500, timeout=0.5):
                if m.error() is not None:
                    continue
                value = m.value() or b""
                if only_schemad and not value.startswith(b"\x00"):
                    continue
                decode(m.key(), value, f"{topic}[{m.partition()}]@{m.offset()}")
                decoded += 1
                for part, data in (("key", m.key()), ("value", value)):
                    found = wire_id(data)
                    if found is not None:
                        ids[part][found] += 1
            for p in list(todo):
                if c.position([TopicPartition(topic, p)])[0].offset >= ends[p][1]:
                    todo.discard(p)
    finally:
        c.close()
    if todo:
        raise StepFailed(f"{topic}: partitions {sorted(todo)} not read to their end within {timeout:.0f} s")
    return decoded, ids


def create_schema_topics(apps: DemoApps, bootstrap: str, replication_factor: int) -> None:
    """The schema'd demo topics (created before their producers write: the harness does not auto-create)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(apps.config(bootstrap))

    def create() -> None:
        for f in admin.create_topics([NewTopic(t, p, replication_factor) for t, (p, _n) in SCHEMA_TOPICS.items()]).values():
            try:
                f.result(timeout=30)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

    retrying("create the schema'd demo topics", create)


def commit_schema_group(apps: DemoApps, bootstrap: str, group: str) -> None:
    """``group`` (the moved one) has read every schema'd demo topic to its end."""
    with closing(Consumer(apps.config(bootstrap, **{"group.id": group, "enable.auto.commit": False}))) as c:
        offsets = []
        for topic in SCHEMA_TOPICS:
            for p in c.list_topics(topic, timeout=10).topics[topic].partitions:
                _lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                offsets.append(TopicPartition(topic, p, hi))
        commit(c, offsets)
