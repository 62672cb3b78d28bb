"""Verify that consumer-group offsets were translated to the target before consumers move.

For every group and partition the check compares what a consumer would still have to read:
``source lag = source end - source committed`` and ``target lag = target end - target committed``.
A translated offset is safe when ``target lag >= source lag`` (never ahead: no record is skipped on
the target); the surplus is the number of records the group will see again (MM2 is at-least-once
and its OffsetSyncStore translates groups deep in a backlog coarsely).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from ..config.migration import ClusterEndpoint, MigrationSpec
from .admin import connect_admin


@dataclass
class OffsetRow:
    group: str
    topic: str
    partition: int
    source_committed: int
    source_end: int
    target_topic: str
    target_committed: int | None
    target_end: int | None
    redelivery: int | None
    status: str  # ok | not-translated | ahead | topic-missing

    def to_dict(self) -> dict:
        return asdict(self)


def _matches(name: str, include: list[str], exclude: list[str]) -> bool:
    return any(re.fullmatch(p, name) for p in include) and not any(re.fullmatch(p, name) for p in exclude)


def _ends(admin: AdminClient, tps: list[TopicPartition]) -> dict[tuple[str, int], int]:
    if not tps:
        return {}
    res = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps}, request_timeout=15)
    return {(tp.topic, tp.partition): f.result().offset for tp, f in res.items()}


def _committed(admin: AdminClient, group: str) -> dict[tuple[str, int], int]:
    fut = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=15)[group]
    return {(tp.topic, tp.partition): tp.offset for tp in fut.result().topic_partitions if tp.offset >= 0}


def verify_offsets(source: ClusterEndpoint, target: ClusterEndpoint, migration: MigrationSpec,
                   groups: list[str] | None = None) -> list[OffsetRow]:
    src = connect_admin("source", source)
    tgt = connect_admin("target", target)
    listed = src.list_consumer_groups(request_timeout=15).result()
    names = sorted(g.group_id for g in listed.valid)
    if groups:
        names = [g for g in names if g in groups]
    else:
        names = [g for g in names if _matches(g, migration.groups, migration.groups_exclude)]
    target_topics = set(tgt.list_topics(timeout=15).topics)
    rows: list[OffsetRow] = []
    for group in names:
        s_comm = {k: v for k, v in _committed(src, group).items()
                  if _matches(k[0], migration.topics, migration.topics_exclude)}
        if not s_comm:
            continue
        s_end = _ends(src, [TopicPartition(t, p) for t, p in s_comm])
        rename = migration.topic_renames
        t_keys = [(rename.get(t, t), p) for t, p in s_comm]
        present = [k for k in t_keys if k[0] in target_topics]
        t_end = _ends(tgt, [TopicPartition(t, p) for t, p in present])
        t_comm = _committed(tgt, group)
        for (topic, part), committed in sorted(s_comm.items()):
            ttopic = rename.get(topic, topic)
            if ttopic not in target_topics:
                rows.append(OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, None, None, None, "topic-missing"))
                continue
            tc, te = t_comm.get((ttopic, part)), t_end.get((ttopic, part))
            if tc is None:
                status, redelivery = "not-translated", None
            else:
                redelivery = (te - tc) - (s_end[(topic, part)] - committed)
                status = "ok" if redelivery >= 0 else "ahead"
            rows.append(OffsetRow(group, topic, part, committed, s_end[(topic, part)], ttopic, tc, te, redelivery, status))
    return rows
