"""Render the three MM2 connectors (source, checkpoint, heartbeat) for Kafka Connect.

Output: ``{connector_name: {config key: string value}}``, ready for ``PUT /connectors/<name>/config``.
Everything is a string (Connect's REST API takes string maps). Secrets appear only as
``${env:...}`` references (see :mod:`.secrets`).
"""

from __future__ import annotations

from .. import versions
from ..config.migration import ClusterEndpoint, MigrationSpec
from ..config.overrides import PROFILES
from ..errors import UsageError
from .client_props import client_properties

POLICY_CLASS = "io.mskmigrate.replication.IdentityMigrationReplicationPolicy"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"

SOURCE_CLASS = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT_CLASS = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
HEARTBEAT_CLASS = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"


def _b(value: bool) -> str:
    return "true" if value else "false"


def _common(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec) -> dict[str, str]:
    cfg: dict[str, str] = {
        "source.cluster.alias": source.alias,
        "target.cluster.alias": target.alias,
        "source.cluster.bootstrap.servers": source.bootstrap_servers,
        "target.cluster.bootstrap.servers": target.bootstrap_servers,
        # Records are copied as bytes: no (de)serialisation, headers included.
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        # MM2 requires the same policy, separator and topic filter on every connector of a flow:
        # the checkpoint connector only translates offsets of topics the source connector replicates.
        "replication.policy.class": POLICY_CLASS,
        "replication.policy.separator": ".",
        "topics": ",".join(m.topics),
        "topics.exclude": ",".join(m.topics_exclude),
        # Offset syncs on the target: MM2 then needs only read access to the source cluster.
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": str(m.internal_replication_factor),
        "checkpoints.topic.replication.factor": str(m.internal_replication_factor),
        "heartbeats.topic.replication.factor": str(m.internal_replication_factor),
    }
    if m.topic_renames:
        cfg["replication.policy.topic.renames"] = ",".join(f"{a}:{b}" for a, b in m.topic_renames.items())
    for k, v in client_properties("source", source.auth).items():
        cfg[f"source.cluster.{k}"] = v
    for k, v in client_properties("target", target.auth).items():
        cfg[f"target.cluster.{k}"] = v
    return cfg


#: KIP-618 (exactly-once source connectors) shipped in Kafka Connect 3.3; MM2's support for it
#: (MirrorSourceConnector.exactlyOnceSupport, KAFKA-14021) in 3.5.
EOS_MIN_CONNECT = (3, 5)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = (version.split(".") + ["0"])[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _tuning(m: MigrationSpec) -> dict[str, str]:
    """Source-connector client settings: the tuning profile, then the operator's overrides on top.

    The worker's producer writes the replicated records (``producer.override.*``, allowed by the worker's
    ``connector.client.config.override.policy=All``); MM2's source consumer reads them
    (``source.consumer.*``). Keys and values were checked against Kafka's ConfigDefs at load time.
    """
    profile = PROFILES[m.tuning_profile]
    producer = {**profile["producer"], **m.producer_overrides}
    consumer = {**profile["consumer"], **m.consumer_overrides}
    cfg = {f"producer.override.{k}": str(v) for k, v in producer.items()}
    cfg.update({f"source.consumer.{k}": str(v) for k, v in consumer.items()})
    cfg.update({k: str(v) for k, v in m.connector_overrides.items()})
    cfg["sync.topic.configs.interval.seconds"] = str(m.sync_topic_configs_interval_seconds)
    cfg["emit.offset-syncs.enabled"] = _b(m.emit_offset_syncs)
    return cfg


def _exactly_once(m: MigrationSpec, connect_version: str | None = None) -> dict[str, str]:
    """KIP-618 connector settings when ``exactly_once``; refuses a Connect runtime < 3.5 (exit 2)."""
    if not m.exactly_once:
        return {}
    runtime = connect_version or versions.kafka_version()
    if _version_tuple(runtime) < EOS_MIN_CONNECT:
        raise UsageError(
            "migration.exactly_once",
            f"needs a Kafka Connect runtime >= {'.'.join(map(str, EOS_MIN_CONNECT))} (KIP-618 for MM2); "
            f"this build's runtime is {runtime} (jvm/pom.xml kafka.version)",
            "raise kafka.version in jvm/pom.xml to 3.5 or later, or set exactly_once: false",
        )
    return {
        "exactly.once.support": "required",
        "transaction.boundary": m.transaction_boundary,
        # read_committed everywhere: the source consumer skips aborted/open transactions (validated on load).
        "source.consumer.isolation.level": "read_committed",
    }


def render_connectors(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec,
                      connect_version: str | None = None) -> dict[str, dict[str, str]]:
    """The connector configs for the flow ``source -> target``.

    ``connect_version``: the Connect runtime's Kafka version (default: jvm/pom.xml's kafka.version).
    """
    names = m.connector_names()
    common = _common(source, target, m)

    src = {
        "name": names["source"],
        "connector.class": SOURCE_CLASS,
        "tasks.max": str(m.tasks_max),
        **common,
        "replication.factor": str(m.replication_factor),
        "sync.topic.configs.enabled": _b(m.sync_topic_configs),
        # MSK with IAM has no Kafka ACLs to copy; ACLs of self-managed clusters are migrated by hand.
        "sync.topic.acls.enabled": "false",
        "refresh.topics.interval.seconds": str(m.refresh_topics_interval_seconds),
        "offset.lag.max": str(m.offset_lag_max),
        "source.consumer.isolation.level": "read_committed" if m.read_committed else "read_uncommitted",
        "source.consumer.auto.offset.reset": "earliest",
    }
    ckpt = {
        "name": names["checkpoint"],
        "connector.class": CHECKPOINT_CLASS,
        "tasks.max": str(m.tasks_max_checkpoint),
        **common,
        "groups": ",".join(m.groups),
        "groups.exclude": ",".join(m.groups_exclude),
        "emit.checkpoints.enabled": "true",
        "emit.checkpoints.interval.seconds": str(m.emit_checkpoints_interval_seconds),
        "sync.group.offsets.enabled": _b(m.sync_group_offsets),
        "sync.group.offsets.interval.seconds": str(m.sync_group_offsets_interval_seconds),
        "refresh.groups.interval.seconds": str(m.refresh_groups_interval_seconds),
    }
    hb = {
        "name": names["heartbeat"],
        "connector.class": HEARTBEAT_CLASS,
        "tasks.max": "1",
        **common,
        "emit.heartbeats.enabled": "true",
        "emit.heartbeats.interval.seconds": str(m.emit_heartbeats_interval_seconds),
    }
    src.update(_tuning(m))
    src.update(_exactly_once(m, connect_version))
    ckpt["emit.checkpoints.enabled"] = _b(m.emit_checkpoints)
    hb["emit.heartbeats.enabled"] = _b(m.emit_heartbeats)
    return {names["source"]: src, names["checkpoint"]: ckpt, names["heartbeat"]: hb}
