"""Cluster metadata through confluent-kafka's AdminClient: reachability, topics and partition counts,
topic configs (the ones MM2 syncs), and offsets by time / earliest / latest for the read ranges."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from confluent_kafka.admin import OffsetSpec

from ..access.admin import LIBRDKAFKA_LOG, AdminSession, TopicConfigs, verbose
from ..kafka.names import CONFIG_PROPERTIES_EXCLUDE_DEFAULT

#: MirrorSourceConnector never copies these (its ``config.properties.exclude`` default; one copy in kafka.names).
MM2_CONFIG_EXCLUDES = CONFIG_PROPERTIES_EXCLUDE_DEFAULT

TP = tuple[str, int]

#: librdkafka's log lines go to the one client logger (access.admin): silent unless ``validate --verbose``
#: gives it a handler.
CLIENT_LOGGER = LIBRDKAFKA_LOG.name
#: A topic's partition count and configs (the admin session's record of them).
TopicMeta = TopicConfigs


def client_logger() -> logging.Logger:
    return LIBRDKAFKA_LOG


def verbose_client_logs() -> bool:
    """True when ``validate --verbose`` gave the client logger a real handler."""
    return verbose()


class ClusterMeta(AdminSession):
    """One cluster's admin session (access.admin's error contract) with the validation job's vocabulary."""

    def __init__(self, role: str, conf: dict[str, Any], timeout: float):
        super().__init__(role, conf, timeout, fix=f"check host:port, the network path and --{role}-auth")

    def describe(self, names: Iterable[str]) -> dict[str, TopicMeta]:
        return self.topic_configs(names)

    def offsets(self, tps: Iterable[TP], spec: OffsetSpec, isolation_level: str = "read_committed") -> dict[TP, int]:
        """Offset per partition for ``spec`` (earliest / latest / for_timestamp); -1 = no such record."""
        return self.offsets_by_spec({tp: spec for tp in tps}, isolation_level)

    def offsets_by_spec(self, specs: dict[TP, OffsetSpec], isolation_level: str = "read_committed") -> dict[TP, int]:
        """One ListOffsets round for a spec per partition."""
        return {tp: result.offset for tp, result in self.list_offsets(specs, isolation_level).items()}


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


def earliest() -> OffsetSpec:
    return OffsetSpec.earliest()


def latest() -> OffsetSpec:
    return OffsetSpec.latest()


def at_time(ms: int) -> OffsetSpec:
    return OffsetSpec.for_timestamp(ms)


def newest_timestamps(meta: AdminSession, tps: list[TP], isolation_level: str) -> dict[TP, int | None]:
    """The newest record timestamp per partition (ListOffsets MAX_TIMESTAMP, KIP-734, brokers >= 3.0);
    None everywhere when the broker does not answer it: the reason a window compared nothing is then
    stated without the records' time."""
    from ..errors import UnreachableError

    try:
        found = meta.list_offsets({tp: OffsetSpec.max_timestamp() for tp in tps}, isolation_level)
    except UnreachableError:
        return {tp: None for tp in tps}
    return {tp: (r.timestamp if r.offset >= 0 and r.timestamp >= 0 else None) for tp, r in found.items()}
