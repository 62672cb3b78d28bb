"""Producing many records from Python: the one retry loop for librdkafka's full local queue.

``Producer.produce`` raises :class:`BufferError` when its local queue (``queue.buffering.max.messages``)
is full; the record was not taken. Polling serves delivery callbacks and lets librdkafka drain the
queue, after which the same record is offered again. Used by the rehearsal's demo data, the fault
suite and the benchmarks (each produces more records than one queue holds).
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import Producer


def produce_waiting(producer: Producer, topic: str, poll_s: float = 0.1, **record: Any) -> None:
    """``producer.produce(topic, **record)``, polling ``poll_s`` seconds while the local queue is full."""
    while True:
        try:
            producer.produce(topic, **record)
            return
        except BufferError:  # local queue full: let librdkafka drain it
            producer.poll(poll_s)
