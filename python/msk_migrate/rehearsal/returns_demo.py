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

from .decoding import PairedDecoder, RegistryPart
from .demo import RETURNS_TOPIC

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


class TopicDecoder(PairedDecoder):
    """Decodes one record of the keyed topic, key and value, with confluent-kafka's ``AvroDeserializer`` and the
    registry at ``url``, proving per part that its id is one the registry maps to that part's subject (keys to
    ``<topic>-key``, values to ``<namespace>.Return``: never each other's) and that its bytes decode; then that
    the key is one the demo producer writes and the value is the one written under it (:class:`.decoding.PairedDecoder`)."""

    def __init__(self, url: str, demo: Returns = Returns()) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient, record_subject_name_strategy, topic_subject_name_strategy
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        self.url, self.demo = url, demo
        client = SchemaRegistryClient({"url": url})
        # each part's deserializer names its subject the way its serializer did (the value's: from the record name
        # the writer schema gives, not <topic>-value, which does not exist)
        strategies = {"key": topic_subject_name_strategy, "value": record_subject_name_strategy}
        fields = {"key": MessageField.KEY, "value": MessageField.VALUE}
        parts = {p: RegistryPart(client, url, demo.subjects[p], AvroDeserializer(client, conf={"subject.name.strategy": strategies[p]}),
                                 SerializationContext(demo.topic, fields[p]), "Avro bytes") for p in PARTS}
        #: part -> {id: version} of every version the registry holds under the part's subject
        self.ids = {p: part.ids for p, part in parts.items()}
        super().__init__(parts["key"], parts["value"], _index_of, value_of)


def _index_of(key: dict[str, Any]) -> int | None:
    """The demo record whose key ``key`` is (order ``ORDER_BASE + i``); None for a key the producer never writes."""
    order = key.get("order_id")
    return order - ORDER_BASE if isinstance(order, int) and order >= ORDER_BASE and key == key_of(order - ORDER_BASE) else None
