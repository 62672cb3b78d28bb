"""What is migrated and by which Connect workers. Defaults are documented on each field,
in the manner of Kafka's MirrorSourceConfig."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..bucket_layout import ALIAS
from ..kafka.names import DEFAULT_GROUPS_EXCLUDE, DEFAULT_TOPICS_EXCLUDE
from ..kafka.selection import check_mm2_regexes
from .auth import AuthConfig
from .overrides import check_overrides
from .waves import check_wave_entries, check_waves_against_selection

#: An override value as YAML gives it; rendered as Connect's string.
OverrideValue = bool | int | float | str

_ALIAS = ALIAS
_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_HOSTPORT = re.compile(r"^[A-Za-z0-9._-]+:\d{1,5}$")


def check_regexes(values: list[str], field: str) -> list[str]:
    """Raise ValueError naming ``field`` and the entry when one of ``values`` is not a regex MM2 can take
    (invalid, or containing a comma, which MM2 reads as a list separator)."""
    return check_mm2_regexes(values, field)


class ClusterEndpoint(BaseModel):
    """One Kafka cluster as a client sees it."""

    model_config = ConfigDict(extra="forbid")

    alias: str = Field(description="MM2 cluster alias (letters, digits, _ and -), e.g. 'source'.")
    bootstrap_servers: str = Field(description="Comma-separated host:port list.")
    auth: AuthConfig = Field(default_factory=AuthConfig)
    msk_broker_type: str | None = Field(
        None, description="MSK broker instance type (e.g. kafka.m7g.large) when this is an MSK cluster; preflight "
        "checks partitions per broker against AWS's limit for it.",
    )

    @field_validator("msk_broker_type")
    @classmethod
    def _broker_type(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"(kafka|express)\.[a-z0-9]+\.[a-z0-9]+", v):
            raise ValueError(f"msk_broker_type {v!r} is not an MSK instance type like kafka.m7g.large")
        return v

    @field_validator("alias")
    @classmethod
    def _alias(cls, v: str) -> str:
        if not _ALIAS.match(v):
            raise ValueError(f"alias {v!r} must match [A-Za-z0-9_-]{{1,64}}")
        return v

    @field_validator("bootstrap_servers")
    @classmethod
    def _bootstrap(cls, v: str) -> str:
        parts = [p.strip() for p in v.split(",") if p.strip()]
        if not parts:
            raise ValueError("bootstrap_servers is empty; give host:port[,host:port...]")
        for p in parts:
            if not _HOSTPORT.match(p):
                raise ValueError(f"bootstrap server {p!r} is not host:port")
        return ",".join(parts)


class MigrationSpec(BaseModel):
    """The MM2 flow source -> target. Every default is the production choice, explained."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("mm2", description="Connector name prefix: <name>-source, -checkpoint, -heartbeat.")
    topics: list[str] = Field(default_factory=lambda: [".*"], description="Topic regexes to replicate.")
    topics_exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TOPICS_EXCLUDE),
        description="Topic regexes never replicated (internal, Connect and MM2 topics by default).",
    )
    groups: list[str] = Field(default_factory=lambda: [".*"], description="Consumer group regexes to checkpoint.")
    groups_exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_GROUPS_EXCLUDE),
        description="Consumer group regexes never checkpointed.",
    )
    topic_renames: dict[str, str] = Field(
        default_factory=dict,
        description="Explicit renames old -> new on the target (validated again by the policy JAR).",
    )
    tasks_max: int = Field(4, ge=1, le=1000, description="MirrorSourceConnector tasks (<= total partitions).")
    replication_factor: int = Field(3, ge=1, le=7, description="Replication factor of created target topics.")
    internal_replication_factor: int = Field(
        3, ge=1, le=7, description="Replication factor of MM2's checkpoints/offset-syncs/heartbeats topics."
    )
    sync_group_offsets: bool = Field(
        True, description="Write translated offsets into the target's __consumer_offsets (inactive groups only)."
    )
    sync_group_offsets_interval_seconds: int = Field(10, ge=1, description="How often translated offsets are written.")
    emit_checkpoints_interval_seconds: int = Field(10, ge=1, description="How often checkpoints are emitted.")
    emit_heartbeats_interval_seconds: int = Field(5, ge=1, description="Heartbeat period.")
    refresh_topics_interval_seconds: int = Field(30, ge=1, description="New source topics are picked up this often.")
    refresh_groups_interval_seconds: int = Field(30, ge=1, description="New groups are picked up this often.")
    offset_lag_max: int = Field(
        100,
        ge=0,
        description="MM2 emits an offset sync when the target lags the last sync by more than this many "
        "records; lower = finer offset translation, more offset-sync traffic.",
    )
    sync_topic_configs: bool = Field(True, description="Copy topic configs (retention, cleanup.policy...) to target.")
    read_committed: bool = Field(
        True, description="Source consumer isolation.level=read_committed: aborted transactions are not copied."
    )
    tasks_max_checkpoint: int = Field(1, ge=1, le=100, description="MirrorCheckpointConnector tasks.")
    internal_topic_names: Literal["per-migration", "kafka-default"] = Field(
        "per-migration",
        description="Names of MM2's checkpoints and offset-syncs topics: 'per-migration' = "
        "<name>.<alias>.checkpoints.internal and mm2-offset-syncs.<name>.<alias>.internal (two migrations into one "
        "shared cluster never share them); 'kafka-default' = Kafka's <alias>.checkpoints.internal and "
        "mm2-offset-syncs.<alias>.internal, for a flow already running under them (switching a running flow "
        "restarts its offset translation: `connectors apply` refuses it).",
    )

    # ---- tuning (msk_migrate.config.overrides checks every key against Kafka's own ConfigDefs) ----------
    tuning_profile: Literal["bulk", "kafka-defaults"] = Field(
        "bulk",
        description="Client settings under the overrides: 'bulk' = the measured bulk-copy profile "
        "(msk_migrate.config.overrides.PROFILES, see docs/PERFORMANCE.md), 'kafka-defaults' = Kafka's defaults.",
    )
    producer_overrides: dict[str, OverrideValue] = Field(
        default_factory=dict,
        description="ProducerConfig tuning keys for the worker producer that writes replicated records to the target "
        "(rendered as producer.override.<key>), e.g. max.request.size, batch.size, linger.ms, compression.type; only "
        "the keys the worker's override policy allows (kafka_config_keys.json: producer_override_allowed).",
    )
    consumer_overrides: dict[str, OverrideValue] = Field(
        default_factory=dict,
        description="ConsumerConfig keys for MM2's source consumer (rendered as source.consumer.<key>), e.g. "
        "fetch.max.bytes, max.partition.fetch.bytes, max.poll.records.",
    )
    connector_overrides: dict[str, OverrideValue] = Field(
        default_factory=dict,
        description="MirrorSourceConnector keys not covered by a field here (e.g. consumer.poll.timeout.ms, "
        "errors.retry.timeout, config.properties.exclude).",
    )
    sync_topic_configs_interval_seconds: int = Field(
        600, ge=1, description="How often topic configs are copied to the target (sync.topic.configs.interval.seconds)."
    )
    emit_checkpoints: bool = Field(True, description="Run checkpoints (consumer-group offset translation).")
    emit_heartbeats: bool = Field(True, description="Emit heartbeats (replication liveness and latency tracing).")
    emit_offset_syncs: bool = Field(
        True, description="Emit offset syncs (emit.offset-syncs.enabled); checkpoints need them."
    )
    exactly_once: bool = Field(
        False,
        description="KIP-618 exactly-once: worker exactly.once.source.support=enabled, connector "
        "exactly.once.support=required, transactional writes to the target; needs a Connect runtime >= 3.5 "
        "and read_committed everywhere.",
    )
    mark_copies: bool = Field(
        False,
        description="Mark every record this flow copies with a header msk-migrate.copied-from.<source alias> and never "
        "copy a record marked as copied from this flow's target: the loop-free active/active and forwarding "
        "topologies with identical topic names (docs/active-active.md). Consumers then see one extra header per hop. "
        "The reverse flow of a topic the forward flow still replicates is refused unless this is on. Off: "
        "active/passive, records copied byte for byte with their headers only.",
    )
    waves: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Waves the migration moves in: wave name -> topic names or regexes (full match) within the "
        "selection above; each topic in at most one wave. Every runbook command takes --wave NAME (default: the whole "
        "migration); a wave's consumer groups are derived from the source's committed offsets (docs/runbooks/migration.md, Waves).",
    )
    transaction_boundary: Literal["poll", "interval"] = Field(
        "poll", description="With exactly_once: one transaction per task poll (the bulk profile then polls larger "
        "batches: consumer_exactly_once in msk_migrate.config.overrides.PROFILES), or per offset-flush interval."
    )

    @field_validator("producer_overrides", "consumer_overrides", "connector_overrides")
    @classmethod
    def _overrides(cls, v: dict[str, OverrideValue], info) -> dict[str, str]:
        return check_overrides(info.field_name.removesuffix("_overrides"), v)

    @model_validator(mode="after")
    def _modes(self) -> MigrationSpec:
        if self.exactly_once and not self.read_committed:
            raise ValueError("exactly_once needs read_committed: true (uncommitted source records would be copied)")
        if self.emit_checkpoints and not self.emit_offset_syncs:
            raise ValueError("emit_checkpoints needs emit_offset_syncs: true (checkpoints translate through offset syncs)")
        return self

    @field_validator("waves")
    @classmethod
    def _waves(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        return check_wave_entries(v)

    @model_validator(mode="after")
    def _waves_in_selection(self) -> MigrationSpec:
        check_waves_against_selection(self.waves, self.topics, self.topics_exclude)
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _ALIAS.match(v):
            raise ValueError(f"name {v!r} must match [A-Za-z0-9_-]{{1,64}}")
        return v

    @field_validator("topics", "topics_exclude", "groups", "groups_exclude")
    @classmethod
    def _regexes(cls, v: list[str], info) -> list[str]:
        return check_regexes(v, info.field_name)

    @field_validator("topic_renames")
    @classmethod
    def _renames(cls, v: dict[str, str]) -> dict[str, str]:
        targets: dict[str, str] = {}
        for old, new in v.items():
            for name in (old, new):
                if not _TOPIC.match(name) or name in (".", ".."):
                    raise ValueError(f"topic_renames entry {old}:{new}: {name!r} is not a legal Kafka topic name")
            if new in targets:
                raise ValueError(f"topic_renames maps both {targets[new]!r} and {old!r} to {new!r}")
            targets[new] = old
        for new in targets:
            if new in v:
                raise ValueError(f"topic_renames target {new!r} is also a rename source (chains are not allowed)")
        return v

    @property
    def internal_namespace(self) -> str | None:
        """The name MM2's checkpoints and offset-syncs topics of this flow carry (None: Kafka's names)."""
        return self.name if self.internal_topic_names == "per-migration" else None

    def connector_names(self) -> dict[str, str]:
        return {
            "source": f"{self.name}-source",
            "checkpoint": f"{self.name}-checkpoint",
            "heartbeat": f"{self.name}-heartbeat",
        }


class WorkerSpec(BaseModel):
    """The Kafka Connect worker group that runs MM2 (its internal topics live on the target)."""

    model_config = ConfigDict(extra="forbid")

    group_id: str = Field("mm2-connect", description="Connect group.id; one per migration.")
    config_storage_topic: str = Field("mm2-connect-configs", description="Connect config topic (1 partition).")
    offset_storage_topic: str = Field("mm2-connect-offsets", description="Connect source-offset topic.")
    status_storage_topic: str = Field("mm2-connect-status", description="Connect status topic.")
    replication_factor: int = Field(3, ge=1, le=7, description="RF of the three Connect topics on the target.")
    rest_port: int = Field(8083, ge=1, le=65535, description="Connect REST port.")
    metrics_port: int = Field(9404, ge=1, le=65535, description="JMX Prometheus agent /metrics port.")
    heap: str = Field("1g", pattern=r"^\d+[mMgG]$", description="JVM max heap (-Xmx) of the worker.")
    offset_flush_interval_ms: int = Field(10000, ge=100, description="Source offset commit period.")
    scheduled_rebalance_max_delay_ms: int = Field(
        300000, ge=0,
        description="How long the group keeps a departed worker's tasks unassigned, waiting for it to return "
        "(Connect's default; ECS replaces a stopped task within this). Lower = faster takeover after a crash.")
    auto_restart: bool = Field(
        True, description="Restart FAILED MM2 tasks automatically (REST extension in the worker, back-off + cap)."
    )
    auto_restart_initial_backoff_seconds: int = Field(10, ge=0, description="Wait before the first restart.")
    auto_restart_max_backoff_seconds: int = Field(300, ge=1, description="Back-off doubles up to this.")
    auto_restart_max_restarts: int = Field(
        10, ge=0, description="Restarts per task before it is left FAILED for an operator (alert + runbook)."
    )

    @model_validator(mode="after")
    def _ports(self) -> WorkerSpec:
        if self.rest_port == self.metrics_port:
            raise ValueError("rest_port and metrics_port must differ")
        return self
