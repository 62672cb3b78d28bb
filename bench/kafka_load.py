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


def list_offsets_floor(bootstraps: list[str], names: list[str], partitions: int, per_call: int = 250) -> dict[str, int]:
    """The cluster's metadata, then one ListOffsets round (latest, read_uncommitted) over every partition of
    ``names`` on each cluster, the rounds in flight together: the least any command that asks where every partition ends can do
    (the floor the scale bench reports beside the commands). Asked as msk-migrate asks it, with
    confluent-kafka alone: calls of ``per_call`` partitions, all in flight, one future each
    (``msk_migrate.access.admin._list_offsets_round``). Returns the partitions answered per cluster."""
    from concurrent.futures import Future

    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.cimpl import _AdminClientImpl

    rounds = []
    tps = [TopicPartition(n, p, -1) for n in names for p in range(partitions)]
    for bootstrap in bootstraps:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        # the cluster's metadata first, as every command has it before its first round (a cold client's calls
        # wait for leader lookups of their own: measured, some of them 3 s)
        admin.list_topics(timeout=30)
        futs = []
        for i in range(0, len(tps), per_call):
            fut: Future = Future()
            fut.set_running_or_notify_cancel()
            _AdminClientImpl.list_offsets(admin, tps[i:i + per_call], fut,
                                          isolation_level_value=IsolationLevel.READ_UNCOMMITTED.value, request_timeout=60)
            futs.append(fut)
        rounds.append((bootstrap, admin, futs))  # each round keeps its client: a destroyed AdminClient never answers
    return {b: sum(getattr(r, "offset", -1) >= 0 for f in futs for r in f.result(timeout=120).values())
            for b, _admin, futs in rounds}

if __name__ == "__main__":  # the floor as its own process: Python start-up and confluent-kafka only
    import sys

    _bootstraps, _prefix, _topics, _partitions = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    _answered = list_offsets_floor(_bootstraps, [f"{_prefix}{i:04d}" for i in range(_topics)], _partitions)
    print(_answered)
    sys.exit(0 if all(n == _topics * _partitions for n in _answered.values()) else 1)
