"""MirrorMaker 2 names and defaults: written once, derived everywhere (renderer, IAM, cleanup, lag).

Names follow :class:`io.mskmigrate.replication.IdentityMigrationReplicationPolicy` (jvm/): ``heartbeats``
and ``<alias>.heartbeats`` (a replicated heartbeats topic) as Kafka names them; checkpoints and offset syncs
named per migration, ``<migration>.<alias>.checkpoints.internal`` and
``mm2-offset-syncs.<migration>.<alias>.internal`` (the policy's :data:`MIGRATION_CONFIG`), so two migrations
into one shared cluster never share them. ``namespace=None`` gives Kafka's own names
(``<alias>.checkpoints.internal``, ``mm2-offset-syncs.<alias>.internal``): a flow that started under them keeps
them (``migration.internal_topic_names: kafka-default``).
"""

from __future__ import annotations

from typing import Literal

MIRROR_PACKAGE = "org.apache.kafka.connect.mirror"
SOURCE_CONNECTOR_CLASS = f"{MIRROR_PACKAGE}.MirrorSourceConnector"
CHECKPOINT_CONNECTOR_CLASS = f"{MIRROR_PACKAGE}.MirrorCheckpointConnector"
HEARTBEAT_CONNECTOR_CLASS = f"{MIRROR_PACKAGE}.MirrorHeartbeatConnector"
#: connector role -> class; the role is also the suffix of the connector name (``<name>-<role>``).
CONNECTOR_CLASSES: dict[str, str] = {
    "source": SOURCE_CONNECTOR_CLASS,
    "checkpoint": CHECKPOINT_CONNECTOR_CLASS,
    "heartbeat": HEARTBEAT_CONNECTOR_CLASS,
}

#: The replication policy of every flow (identity names; see jvm/replication-policy).
REPLICATION_POLICY_CLASS = "io.mskmigrate.replication.IdentityMigrationReplicationPolicy"
#: The separator MM2 puts between an alias and ``heartbeats``; checkpoints and offset syncs always use '.'.
SEPARATOR = "."
HEARTBEATS_TOPIC = "heartbeats"
#: The policy key naming the migration in its checkpoints and offset-syncs topics (the JAR's MIGRATION_CONFIG).
MIGRATION_CONFIG = "replication.policy.migration.name"

OffsetSyncsLocation = Literal["source", "target"]


def remote_heartbeats_topic(source_alias: str) -> str:
    """The source cluster's ``heartbeats`` as replicated onto the target."""
    return f"{source_alias}{SEPARATOR}{HEARTBEATS_TOPIC}"


def _namespaced(alias: str, namespace: str | None) -> str:
    return alias if namespace is None else f"{namespace}.{alias}"


def checkpoints_topic(source_alias: str, namespace: str | None = None) -> str:
    """Where MirrorCheckpointConnector writes translated group offsets (on the flow's target cluster);
    ``namespace``: the migration's name when its topics are named per migration."""
    return f"{_namespaced(source_alias, namespace)}.checkpoints.internal"


def offset_syncs_topic(source_alias: str, target_alias: str, location: OffsetSyncsLocation = "target",
                       namespace: str | None = None) -> str:
    """MM2's upstream->downstream offset map. Named after the *other* cluster than where it lives
    (MirrorConnectorConfig.offsetSyncsTopic): on the target it is ``mm2-offset-syncs.[<migration>.]<source>.internal``."""
    other = source_alias if location == "target" else target_alias
    return f"mm2-offset-syncs.{_namespaced(other, namespace)}.internal"


def flow_internal_topics(source_alias: str, target_alias: str, namespace: str | None = None) -> list[str]:
    """MM2 topics one flow source->target keeps on its target cluster (offset syncs located there)."""
    return [
        offset_syncs_topic(source_alias, target_alias, namespace=namespace),
        checkpoints_topic(source_alias, namespace),
        HEARTBEATS_TOPIC,
        remote_heartbeats_topic(source_alias),
    ]


def connector_namespace(config: dict[str, str]) -> str | None:
    """The migration an MM2 connector's config names its checkpoints/offset-syncs topics after (None: Kafka's)."""
    value = str(config.get(MIGRATION_CONFIG, "")).strip()
    return value or None


#: MirrorSourceConnector's ``config.properties.exclude`` default (Kafka 3.x/4.x): topic configs it never copies.
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = frozenset(
    {
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "unclean.leader.election.enable",
        "min.insync.replicas",
    }
)

#: Topics never replicated by default: Kafka internals, MM2 and Connect bookkeeping.
DEFAULT_TOPICS_EXCLUDE: tuple[str, ...] = (
    r".*[\-\.]internal", r".*\.replica", r"__.*", r"_schemas", r"connect-.*", r"mm2-.*",
)
#: Groups never checkpointed by default: console consumers, Connect's own groups, Kafka internals.
DEFAULT_GROUPS_EXCLUDE: tuple[str, ...] = (r"console-consumer-.*", r"connect-.*", r"__.*")
#: Topics that are MM2's own (never validated or compared as data).
MM2_TOPIC_PATTERNS: tuple[str, ...] = (
    HEARTBEATS_TOPIC, rf".*\.{HEARTBEATS_TOPIC}", r".*\.checkpoints\.internal", r"mm2-offset-syncs\..*\.internal",
)

#: Consumer groups the Connect worker itself creates on the target for a connector (``connect-<name>``).
CONNECT_CONSUMER_GROUP_PREFIX = "connect-"
