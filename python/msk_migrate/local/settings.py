"""The operator's switches of the local harness, read in this one place (issue 48): every ``MSK_MIGRATE_*``
environment variable ``local/`` honours is a field of :class:`LocalSettings`, read by :meth:`LocalSettings.from_env`
when the harness needs it (not at import: a test or a shell may set them between runs) and passed down as values.

- ``MSK_MIGRATE_WORKER=image``: run the Connect worker from the built kafka-connect image instead of the JVM here.
- ``MSK_MIGRATE_JMX_RULES``: the JMX exporter rules file of the local worker (default: the image's rules).
- ``MSK_MIGRATE_LOCAL_BROKER_HEAP``: the brokers' heap (e.g. ``2g`` at 10,000 partitions) unless --broker-heap says.
- ``MSK_MIGRATE_LOCAL_WORKER_HEAP``: every worker's heap unless the worker settings name one.
- ``MSK_MIGRATE_LOCAL_FLOW_PARTITIONS``: the partitions the workers are sized for when the caller does not say.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

WORKER_ENV = "MSK_MIGRATE_WORKER"
JMX_RULES_ENV = "MSK_MIGRATE_JMX_RULES"
BROKER_HEAP_ENV = "MSK_MIGRATE_LOCAL_BROKER_HEAP"
WORKER_HEAP_ENV = "MSK_MIGRATE_LOCAL_WORKER_HEAP"
FLOW_PARTITIONS_ENV = "MSK_MIGRATE_LOCAL_FLOW_PARTITIONS"


@dataclass(frozen=True)
class LocalSettings:
    """The switches, each None (or False) when unset or empty."""

    worker_from_image: bool = False
    jmx_rules: str | None = None
    broker_heap: str | None = None
    worker_heap: str | None = None
    flow_partitions: int | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LocalSettings:
        env = os.environ if environ is None else environ
        partitions = env.get(FLOW_PARTITIONS_ENV, "").strip()
        return cls(worker_from_image=env.get(WORKER_ENV) == "image",
                   jmx_rules=env.get(JMX_RULES_ENV),
                   broker_heap=env.get(BROKER_HEAP_ENV) or None,
                   worker_heap=env.get(WORKER_HEAP_ENV) or None,
                   flow_partitions=int(partitions) if partitions.isdigit() else None)
