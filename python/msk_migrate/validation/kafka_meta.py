"""Cluster metadata through confluent-kafka's AdminClient: reachability, topics and partition counts,
topic configs (the ones MM2 syncs), and offsets by time / earliest / latest for the read ranges."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec

from ..errors import UnreachableError

#: MirrorSourceConnector never copies these (its ``config.properties.exclude`` default, Kafka 3.x/4.x).
MM2_CONFIG_EXCLUDES = frozenset(
    {
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "unclean.leader.election.enable",
        "min.insync.replicas",
    }
)

TP = tuple[str, int]

#: librdkafka's log lines go to this logger: silent unless ``validate --verbose`` gives it a handler.
CLIENT_LOGGER = "msk_migrate.validation.librdkafka"


def client_logger() -> logging.Logger:
    log = logging.getLogger(CLIENT_LOGGER)
    if not log.handlers:
        log.addHandler(logging.NullHandler())
        log.propagate = False
    return log


def verbose_client_logs() -> bool:
    """True when ``validate --verbose`` gave the client logger a real handler."""
    return any(not isinstance(h, logging.NullHandler) for h in client_logger().handlers)


@dataclass
class TopicMeta:
    name: str
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)  #: every config value
    overrides: dict[str, str] = field(default_factory=dict)  #: configs set on the topic itself

    @property
    def log_append_time(self) -> bool:
        return self.configs.get("message.timestamp.type", "CreateTime") == "LogAppendTime"

    @property
    def compacted(self) -> bool:
        return "compact" in self.configs.get("cleanup.policy", "delete")


class ClusterMeta:
    """One cluster's AdminClient, with every failure turned into :class:`UnreachableError`."""

    def __init__(self, role: str, conf: dict[str, Any], timeout: float):
        self.role = role
        self.timeout = timeout
        self.bootstrap = conf.get("bootstrap.servers")
        errors: list[str] = []
        conf = dict(conf)
        conf.setdefault("error_cb", lambda err: errors.append(str(err)))
        conf.setdefault("socket.connection.setup.timeout.ms", int(min(timeout, 30) * 1000))
        if not verbose_client_logs():  # librdkafka's own stderr lines only with --verbose
            conf.setdefault("logger", client_logger())
        self._errors = errors
        self.admin = AdminClient(conf)
        self._topics: dict[str, int] | None = None

    def _fail(self, what: str, exc: BaseException | None = None) -> UnreachableError:
        detail = str(exc.args[0]) if isinstance(exc, KafkaException) and exc.args else str(exc or "")
        if self._errors:
            detail = self._errors[-1]
        return UnreachableError(
            f"{self.role}.bootstrap_servers ({self.bootstrap}): {what}: {detail or 'no response'} "
            f"(fix: check host:port, the network path and --{self.role}-auth)"
        )

    def topics(self) -> dict[str, int]:
        """Topic -> partition count. Raises UnreachableError when the cluster does not answer."""
        if self._topics is None:
            try:
                md = self.admin.list_topics(timeout=self.timeout)
            except KafkaException as exc:
                raise self._fail(f"cluster unreachable within {self.timeout:.0f}s", exc) from None
            if not md.brokers:
                raise self._fail("no broker answered")
            self._topics = {name: len(t.partitions) for name, t in md.topics.items() if t.error is None}
        return self._topics

    def describe(self, names: Iterable[str]) -> dict[str, TopicMeta]:
        names = [n for n in names if n in self.topics()]
        out: dict[str, TopicMeta] = {}
        if not names:
            return out
        futures = self.admin.describe_configs(
            [ConfigResource(ConfigResource.Type.TOPIC, n) for n in names], request_timeout=self.timeout
        )
        for res, fut in futures.items():
            try:
                entries = fut.result()
            except KafkaException as exc:
                raise self._fail(f"describe configs of {res.name} failed", exc) from None
            meta = TopicMeta(res.name, self.topics()[res.name])
            for name, entry in entries.items():
                value = entry.value if entry.value is not None else ""
                meta.configs[name] = value
                if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value or entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG:
                    meta.overrides[name] = value
            out[res.name] = meta
        return out

    def offsets(self, tps: Iterable[TP], spec: OffsetSpec, isolation_level: str = "read_committed") -> dict[TP, int]:
        """Offset per partition for ``spec`` (earliest / latest / for_timestamp); -1 = no such record."""
        return self.offsets_by_spec({tp: spec for tp in tps}, isolation_level)

    def offsets_by_spec(self, specs: dict[TP, OffsetSpec], isolation_level: str = "read_committed") -> dict[TP, int]:
        """One ListOffsets round for a spec per partition."""
        if not specs:
            return {}
        iso = IsolationLevel.READ_COMMITTED if isolation_level == "read_committed" else IsolationLevel.READ_UNCOMMITTED
        req = {TopicPartition(t, p): spec for (t, p), spec in specs.items()}
        try:
            futures = self.admin.list_offsets(req, isolation_level=iso, request_timeout=self.timeout)
            return {(tp.topic, tp.partition): fut.result().offset for tp, fut in futures.items()}
        except KafkaException as exc:
            raise self._fail("listing offsets failed", exc) from None


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
