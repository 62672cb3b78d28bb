"""A forgotten producer: an application that keeps writing to a wave's topics on the source after its
team's producers moved. The rehearsal and the tests use it to see the fence stop it and the gate name it.

On a secured source it acts as its own SCRAM principal (``User:shop-legacy``, created by the harness admin,
granted only WRITE and DESCRIBE on the topics it writes): a super user is never bound by ACLs, so the demo
applications' principal could not show a fence. Its password lives in this process only.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from ..access.admin import quiet
from ..kafka.mm2_acls import AclNeed
from ..local.harness import LocalEnvironment
from ..local.scram import create_users

USER = "shop-legacy"


def straggler_config(env: LocalEnvironment, topics: list[str]) -> dict[str, Any]:
    """librdkafka settings of the forgotten producer on ``env``'s source (its own principal when secured)."""
    conf = dict(env.client_config("source"))
    if "sasl.username" not in conf:
        return conf
    password = secrets.token_urlsafe(24)
    create_users(AdminClient(quiet(env.admin_config("source"))), {USER: password})
    env.grant_acls("source", f"User:{USER}", [AclNeed("topic", t, op, "the forgotten producer writes it")
                                              for t in topics for op in ("WRITE", "DESCRIBE")])
    return {**conf, "sasl.username": USER, "sasl.password": password}


class Straggler:
    """Writes one keyed record every ``interval`` seconds to ``topics`` (round robin) from a thread until
    :meth:`stop`; counts what the broker acknowledged per partition and what it refused per error."""

    def __init__(self, conf: dict[str, Any], topics: list[str], interval: float = 0.05):
        self.topics = topics
        self.interval = interval
        # Not idempotent: a 2.8 broker would ask Cluster IdempotentWrite of it; a short timeout so refusals surface.
        self._producer = Producer(quiet({**conf, "enable.idempotence": False, "acks": "all", "linger.ms": 0,
                                         "message.timeout.ms": 10_000, "retries": 2}))
        self.delivered: Counter[tuple[str, int]] = Counter()
        self.refused: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="straggler", daemon=True)

    def _report(self, err: KafkaError | None, msg: Any) -> None:
        if err is None:
            self.delivered[(msg.topic(), msg.partition())] += 1
        else:
            self.refused[err.name()] += 1

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            topic = self.topics[i % len(self.topics)]
            try:
                self._producer.produce(topic, key=f"legacy-{i}".encode(), value=b"written by a forgotten producer",
                                       on_delivery=self._report)
            except BufferError:
                pass  # the queue is full: the next turn tries again
            except KafkaException as exc:  # refused before sending (the topic's metadata says not authorized)
                self.refused[exc.args[0].name()] += 1
            self._producer.poll(0)
            i += 1
            time.sleep(self.interval)
        self._producer.flush(15)

    def start(self) -> Straggler:
        self._thread.start()
        return self

    def wait_for_writes(self, timeout: float = 60.0) -> bool:
        """True once the broker acknowledged at least one record of every topic."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if {t for t, _ in self.delivered} >= set(self.topics):
                return True
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def partitions(self) -> list[tuple[str, int]]:
        return sorted(self.delivered)
