"""The rehearsal's keyed demo application (issue 45): ``shop.returns``, whose keys AND values are Avro, serialized
by confluent-kafka's ``AvroSerializer`` under two subject name strategies, and decoded, key and value apart, by its
``AvroDeserializer``.

- keys: ``ReturnKey {order_id: long}`` under TopicNameStrategy, subject ``shop.returns-key``;
- values: ``Return {order_id, reason, refund_cents}`` under RecordNameStrategy (serializer setting
  ``subject.name.strategy`` = ``record_subject_name_strategy``), subject ``shop.Return`` (the record's full name):
  no ``shop.returns-value`` subject exists, so the gate and ``validate`` must find the value subject from the ids
  the records carry.

:class:`Returns` names the topic and the subjects (a test gives a topic and namespace of its own, so its subjects
do not meet the rehearsal's); :func:`register` puts both schemas on a registry, :func:`serializer` writes record
``i``, and :class:`TopicDecoder` proves each record read: per part, its id is one the registry maps to that
part's subject, its bytes decode, and key and value are the ones written together.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .decoding import decode_record, first_line
from .demo import RETURNS_TOPIC
from .result import StepFailed

#: The first order id of the demo's keys (record ``i`` is order ``ORDER_BASE + i``): a key below it, or whose value
#: is not the one written for it, is not the demo producer's.
ORDER_BASE = 700_000
_REASONS = ("damaged", "wrong-size", "late", "changed-mind")
PARTS = ("key", "value")


@dataclass(frozen=True)
class Returns:
    """The keyed topic and the names its serializers use: the key subject follows the topic (TopicNameStrategy),
    the value subject is ``<namespace>.Return`` whatever the topic (RecordNameStrategy)."""

    topic: str = RETURNS_TOPIC
    namespace: str = "shop"

    @property
    def subjects(self) -> dict[str, str]:
        """part -> subject its serializer registers under."""
        return {"key": f"{self.topic}-key", "value": f"{self.namespace}.Return"}

    def key_schema(self) -> dict[str, Any]:
        return {"type": "record", "name": "ReturnKey", "namespace": self.namespace,
                "fields": [{"name": "order_id", "type": "long"}]}

    def value_schema(self) -> dict[str, Any]:
        return {"type": "record", "name": "Return", "namespace": self.namespace,
                "fields": [{"name": "order_id", "type": "long"}, {"name": "reason", "type": "string"},
                           {"name": "refund_cents", "type": "int"}]}


def key_of(i: int) -> dict[str, Any]:
    """The key of demo record ``i``."""
    return {"order_id": ORDER_BASE + i}


def value_of(i: int) -> dict[str, Any]:
    """The value written under the key of demo record ``i``."""
    return {"order_id": ORDER_BASE + i, "reason": _REASONS[i % len(_REASONS)], "refund_cents": 99 + 100 * (i % 50)}


def _avro(body: dict[str, Any]) -> Any:
    from confluent_kafka.schema_registry import Schema

    return Schema(json.dumps(body), "AVRO", [])


def register(reg: Callable[[str, Any], None], demo: Returns = Returns()) -> None:
    """Register the key schema (``<topic>-key``) and the value schema (``<namespace>.Return``) through
    ``reg(subject, schema)``."""
    reg(demo.subjects["key"], _avro(demo.key_schema()))
    reg(demo.subjects["value"], _avro(demo.value_schema()))


def serializer(client: Any, demo: Returns = Returns()) -> Callable[[int], tuple[bytes, bytes]]:
    """Record i -> (key bytes, value bytes): confluent-kafka's ``AvroSerializer`` per part, looking the schemas up
    under the subject each part's strategy names (it registers nothing: ``auto.register.schemas`` off)."""
    from confluent_kafka.schema_registry import record_subject_name_strategy, topic_subject_name_strategy
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    kser = AvroSerializer(client, json.dumps(demo.key_schema()),
                          conf={"auto.register.schemas": False, "subject.name.strategy": topic_subject_name_strategy})
    vser = AvroSerializer(client, json.dumps(demo.value_schema()),
                          conf={"auto.register.schemas": False, "subject.name.strategy": record_subject_name_strategy})
    kctx, vctx = (SerializationContext(demo.topic, f) for f in (MessageField.KEY, MessageField.VALUE))
    return lambda i: (kser(key_of(i), kctx), vser(value_of(i), vctx))


class TopicDecoder:
    """Decodes one record of the keyed topic, key and value, with confluent-kafka's ``AvroDeserializer`` and the
    registry at ``url``, proving per part that its id is one the registry maps to that part's subject (keys to
    ``<topic>-key``, values to ``<namespace>.Return``: never each other's) and that its bytes decode; then that
    the key is one the demo producer writes and the value is the one written under it. Any failure raises
    :class:`StepFailed` naming the record, the part and the reason. ``__call__`` returns the decoded value."""

    def __init__(self, url: str, demo: Returns = Returns()) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient, record_subject_name_strategy, topic_subject_name_strategy
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        self.url, self.demo = url, demo
        self._client = SchemaRegistryClient({"url": url})
        #: part -> {id: version} of every version the registry holds under the part's subject
        self.ids = {part: self._subject_ids(subject) for part, subject in demo.subjects.items()}
        # each part's deserializer names its subject the way its serializer did (the value's: from the record name
        # the writer schema gives, not <topic>-value, which does not exist)
        strategies = {"key": topic_subject_name_strategy, "value": record_subject_name_strategy}
        self._de = {p: AvroDeserializer(self._client, conf={"subject.name.strategy": strategies[p]}) for p in PARTS}
        fields = {"key": MessageField.KEY, "value": MessageField.VALUE}
        self._ctx = {p: SerializationContext(demo.topic, fields[p]) for p in PARTS}

    def _subject_ids(self, subject: str) -> dict[int, int]:
        try:
            versions = self._client.get_versions(subject)
        except Exception as exc:
            raise StepFailed(f"the registry at {self.url} has no subject {subject}: {first_line(exc)}") from None
        return {self._client.get_version(subject, v).schema_id: v for v in versions}

    def _part(self, part: str, data: bytes | None, where: str) -> dict[str, Any]:
        """One part decoded and its id proven; ``where`` names the record."""
        subject, ids = self.demo.subjects[part], self.ids[part]
        if data is None or len(data) < 6 or data[0] != 0:
            raise StepFailed(f"{where} {part} is not in the Confluent wire format (magic byte 0, 4-byte id, Avro bytes): "
                             f"the demo producer writes every {part} with AvroSerializer under {subject}")
        schema_id = int.from_bytes(data[1:5], "big")
        if schema_id not in ids:
            raise StepFailed(f"{where} {part} carries schema id {schema_id}; the registry at {self.url} maps {subject} to "
                             f"id(s) {', '.join(map(str, sorted(ids)))}")
        return decode_record(self._de[part], data, self._ctx[part], f"{where} {part}",
                             f"as {subject} v{ids[schema_id]} (id {schema_id})")

    def __call__(self, key: bytes | None, value: bytes | None, where: str) -> dict[str, Any]:
        got_key = self._part("key", key, where)
        order = got_key.get("order_id")
        if not isinstance(order, int) or order < ORDER_BASE or got_key != key_of(order - ORDER_BASE):
            raise StepFailed(f"{where} key decoded to {got_key}: not a key the demo producer writes (order_id from "
                             f"{ORDER_BASE})")
        got, written = self._part("value", value, where), value_of(order - ORDER_BASE)
        if got != written:
            field = next((f for f in sorted(set(got) | set(written)) if got.get(f) != written.get(f)), "?")
            raise StepFailed(f"{where} value decoded to a value other than the one written under key order_id {order}: "
                             f"field {field} is {got.get(field)!r}, written {written.get(field)!r}")
        return got
