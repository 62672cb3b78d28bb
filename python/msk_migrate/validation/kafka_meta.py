"""Cluster metadata through confluent-kafka's AdminClient (an operator's machine): the planner's
:class:`~.cluster_meta.ClusterMetadata` over the one admin session of :mod:`msk_migrate.access.admin`."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from confluent_kafka import TopicCollection
from confluent_kafka.admin import OffsetSpec

from ..access.admin import LIBRDKAFKA_LOG, AdminSession, verbose
from .cluster_meta import (
    MM2_CONFIG_EXCLUDES,
    Listed,
    OffsetQuery,
    TopicMeta,
    at_time,
    earliest,
    latest,
    newest_timestamps,
    synced_config_differences,
    topic_id_text,
)

__all__ = ["CLIENT_LOGGER", "MM2_CONFIG_EXCLUDES", "ClusterMeta", "TopicMeta", "at_time", "earliest", "latest",
           "newest_timestamps", "synced_config_differences"]

TP = tuple[str, int]

#: librdkafka's log lines go to the one client logger (access.admin): silent unless ``validate --verbose``
#: gives it a handler.
CLIENT_LOGGER = LIBRDKAFKA_LOG.name


def client_logger() -> logging.Logger:
    return LIBRDKAFKA_LOG


def verbose_client_logs() -> bool:
    """True when ``validate --verbose`` gave the client logger a real handler."""
    return verbose()


def _spec(query: OffsetQuery) -> OffsetSpec:
    if query.kind == "time":
        return OffsetSpec.for_timestamp(query.at_ms)
    return {"earliest": OffsetSpec.earliest, "latest": OffsetSpec.latest, "max_timestamp": OffsetSpec.max_timestamp}[query.kind]()


class ClusterMeta(AdminSession):
    """One cluster's admin session (access.admin's error contract) as the planner's ClusterMetadata."""

    def __init__(self, role: str, conf: dict[str, Any], timeout: float):
        #: the settings as given (secrets resolved): the native pass's consumers read with them
        self.client_conf = dict(conf)
        super().__init__(role, conf, timeout, fix=f"check host:port, the network path and --{role}-auth")

    def describe(self, names: Iterable[str]) -> dict[str, TopicMeta]:
        return self.topic_configs(names)

    def listed(self, queries: dict[TP, OffsetQuery], isolation_level: str = "read_committed") -> dict[TP, Listed]:
        found = self.list_offsets({tp: _spec(q) for tp, q in queries.items()}, isolation_level)
        return {tp: Listed(r.offset, r.timestamp) for tp, r in found.items()}

    def topic_ids(self, names: list[str]) -> dict[str, str | None]:
        if not names:
            return {}
        try:
            futs = self.admin.describe_topics(TopicCollection(names), request_timeout=self.timeout)
            return {n: topic_id_text(str(f.result(timeout=self.timeout + 5).topic_id)) for n, f in futs.items()}
        except Exception:  # an older broker or no Describe ACL: see ClusterMetadata.topic_ids
            return dict.fromkeys(names)

    def offsets(self, tps: Iterable[TP], query: OffsetQuery, isolation_level: str = "read_committed") -> dict[TP, int]:
        """Offset per partition for ``query`` (earliest / latest / time); -1 = no such record."""
        return self.offsets_by_spec({tp: query for tp in tps}, isolation_level)

    def offsets_by_spec(self, queries: dict[TP, OffsetQuery], isolation_level: str = "read_committed") -> dict[TP, int]:
        """One ListOffsets round for a question per partition."""
        return {tp: r.offset for tp, r in self.listed(queries, isolation_level).items()}
