"""What the validation planner asks of a cluster, independent of the client that asks it.

Two clients answer: confluent-kafka's AdminClient on an operator's machine (:mod:`.kafka_meta`) and the
Kafka Java admin inside the Spark job's own JVM (:mod:`.jvm_meta`), where the job has nothing but the
release's Python and pyspark. Both implement :class:`ClusterMetadata` with the same error contract: a
cluster that cannot be reached or asked is :class:`~msk_migrate.errors.UnreachableError` naming the
role and the bootstrap servers. This module is standard library only (the job imports it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..kafka.names import CONFIG_PROPERTIES_EXCLUDE_DEFAULT
from ..kafka.topic_configs import TopicConfigs

TP = tuple[str, int]
#: A topic's partition count and configs.
TopicMeta = TopicConfigs
#: MirrorSourceConnector never copies these (its ``config.properties.exclude`` default; one copy in kafka.names).
MM2_CONFIG_EXCLUDES = CONFIG_PROPERTIES_EXCLUDE_DEFAULT


@dataclass(frozen=True)
class OffsetQuery:
    """One ListOffsets question: ``earliest``, ``latest``, ``time`` (the first offset whose timestamp is at or
    after ``at_ms``) or ``max_timestamp`` (the record with the newest timestamp, KIP-734, brokers >= 3.0)."""

    kind: str
    at_ms: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("earliest", "latest", "time", "max_timestamp"):
            raise ValueError(f"unknown offset query {self.kind!r}")
        if (self.kind == "time") != (self.at_ms is not None):
            raise ValueError("a time query, and only a time query, carries at_ms")


@dataclass(frozen=True)
class Listed:
    """One ListOffsets answer: the offset (-1: no such record) and its record's timestamp (-1: unknown)."""

    offset: int
    timestamp: int = -1


def topic_id_text(text: str) -> str:
    """A topic id in Kafka's own spelling (``Uuid.toString``: URL-safe base64, no padding). confluent-kafka
    spells the same id in standard base64 (``+`` and ``/``), so a mark one client started would read as a
    recreated topic to the other."""
    return text.replace("+", "-").replace("/", "_").rstrip("=")


def earliest() -> OffsetQuery:
    return OffsetQuery("earliest")


def latest() -> OffsetQuery:
    return OffsetQuery("latest")


def at_time(ms: int) -> OffsetQuery:
    return OffsetQuery("time", ms)


def max_timestamp() -> OffsetQuery:
    return OffsetQuery("max_timestamp")


class ClusterMetadata(Protocol):
    """One cluster's metadata session, as the planner uses it."""

    role: str

    def topics(self, refresh: bool = False) -> dict[str, int]:
        """Topic -> partition count (internal topics included)."""

    def describe(self, names: Iterable[str]) -> dict[str, TopicMeta]:
        """Partition counts and configs of the existing topics among ``names``."""

    def listed(self, queries: dict[TP, OffsetQuery], isolation_level: str = "read_committed") -> dict[TP, Listed]:
        """One ListOffsets round for a question per partition."""

    def cluster_id(self) -> str | None:
        """DescribeCluster's id."""

    def topic_ids(self, names: list[str]) -> dict[str, str | None]:
        """Topic -> its id (Kafka >= 2.8, in Kafka's own base64 spelling), None where the cluster or the
        principal does not answer it (an older broker, no Describe ACL): the proof mark then relies on
        the cluster ids and the offsets alone."""


def offsets(meta: ClusterMetadata, tps: Iterable[TP], query: OffsetQuery, isolation_level: str = "read_committed") -> dict[TP, int]:
    """Offset per partition for one question (-1 = no such record)."""
    return offsets_by_query(meta, {tp: query for tp in tps}, isolation_level)


def offsets_by_query(meta: ClusterMetadata, queries: dict[TP, OffsetQuery], isolation_level: str = "read_committed") -> dict[TP, int]:
    return {tp: found.offset for tp, found in meta.listed(queries, isolation_level).items()}


def newest_timestamps(meta: ClusterMetadata, tps: list[TP], isolation_level: str) -> dict[TP, int | None]:
    """The newest record timestamp per partition; None everywhere when the broker does not answer the question
    (before Kafka 3.0): the reason a window compared nothing is then stated without the records' time."""
    from ..errors import UnreachableError

    try:
        found = meta.listed({tp: max_timestamp() for tp in tps}, isolation_level)
    except UnreachableError:
        return {tp: None for tp in tps}
    return {tp: (r.timestamp if r.offset >= 0 and r.timestamp >= 0 else None) for tp, r in found.items()}


def synced_config_differences(
    source: TopicMeta, target: TopicMeta | None, ignore: Iterable[str] = ()
) -> list[dict[str, str | None]]:
    """Configs set on the source topic that MM2 copies, whose target value differs."""
    if target is None:
        return []
    skip = MM2_CONFIG_EXCLUDES | set(ignore)
    diffs = []
    for name, value in sorted(source.overrides.items()):
        if name in skip:
            continue
        if target.configs.get(name) != value:
            diffs.append({"name": name, "source": value, "target": target.configs.get(name)})
    return diffs
