"""Loads the scale benches build on the local clusters: many topics created in batches, served before use."""

from __future__ import annotations

import time

from confluent_kafka.admin import AdminClient, NewTopic


def create_topics_served(admin: AdminClient, names: list[str], partitions: int, what: str, timeout: float = 600) -> None:
    """Create ``names`` (``partitions`` each, replication factor 1), 100 topics a request so the controller
    stays responsive; existing ones are kept. Returns once every partition has a leader: CreateTopics
    answers when the controller has the topics and the broker serves them a moment later (at 10,000
    partitions, longer than a producer waits for metadata, so records produced at once would fail)."""
    for i in range(0, len(names), 100):
        futs = admin.create_topics([NewTopic(n, partitions, 1) for n in names[i:i + 100]], operation_timeout=120)
        for f in futs.values():
            try:
                f.result()
            except Exception as exc:
                if "TOPIC_ALREADY_EXISTS" not in str(exc):
                    raise
    deadline = time.time() + timeout
    while True:
        md = admin.list_topics(timeout=60).topics
        missing = [n for n in names if n not in md or len(md[n].partitions) < partitions
                   or any(p.leader < 0 for p in md[n].partitions.values())]
        if not missing:
            return
        if time.time() > deadline:
            raise RuntimeError(f"{len(missing)} topic(s) on {what} have no leader after {timeout:.0f} s ({missing[0]}, ...)")
        time.sleep(2)
