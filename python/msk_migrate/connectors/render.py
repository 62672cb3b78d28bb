"""Render the three MM2 connectors (source, checkpoint, heartbeat) for Kafka Connect.

Output: ``{connector_name: {config key: string value}}``, ready for ``PUT /connectors/<name>/config``.
Everything is a string (Connect's REST API takes string maps). Secrets appear only as
``${env:...}`` references (see :mod:`msk_migrate.access.secrets`).
"""

from __future__ import annotations

import re

from .. import versions
from ..access.client_security import client_properties
from ..config.migration import ClusterEndpoint, MigrationSpec
from ..config.overrides import PROFILES
from ..errors import UsageError
from ..kafka import names
from ..kafka.selection import exact, topic_selection
from ..topology.marks import mark_transforms

POLICY_CLASS = names.REPLICATION_POLICY_CLASS
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"

SOURCE_CLASS = names.SOURCE_CONNECTOR_CLASS
CHECKPOINT_CLASS = names.CHECKPOINT_CONNECTOR_CLASS
HEARTBEAT_CLASS = names.HEARTBEAT_CONNECTOR_CLASS


def _b(value: bool) -> str:
    return "true" if value else "false"


def _common(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec,
            roles: tuple[str, str] = ("source", "target")) -> dict[str, str]:
    """Settings every connector of the flow ``source -> target`` shares. ``roles`` name whose secrets
    each side uses (the reverse flow reads from the cluster whose role is 'target')."""
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
        "replication.policy.separator": names.SEPARATOR,
        "topics": ",".join(m.topics),
        "topics.exclude": ",".join(m.topics_exclude),
        # Offset syncs on the target: MM2 then needs only read access to the source cluster.
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": str(m.internal_replication_factor),
        "checkpoints.topic.replication.factor": str(m.internal_replication_factor),
        "heartbeats.topic.replication.factor": str(m.internal_replication_factor),
    }
    if m.internal_namespace:
        cfg[names.MIGRATION_CONFIG] = m.internal_namespace
    if m.topic_renames:
        cfg["replication.policy.topic.renames"] = ",".join(f"{a}:{b}" for a, b in m.topic_renames.items())
    for k, v in client_properties(roles[0], source.auth).items():
        cfg[f"source.cluster.{k}"] = v
    for k, v in client_properties(roles[1], target.auth).items():
        cfg[f"target.cluster.{k}"] = v
    return cfg


#: KIP-618 (exactly-once source connectors) shipped in Kafka Connect 3.3; MM2's support for it
#: (MirrorSourceConnector.exactlyOnceSupport, KAFKA-14021) in 3.5.
EOS_MIN_CONNECT = (3, 5)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = ([*version.split("."), "0"])[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _tuning(m: MigrationSpec) -> dict[str, str]:
    """Source-connector client settings: the tuning profile, then the operator's overrides on top.

    The worker's producer writes the replicated records (``producer.override.*``, allowed by the worker's
    the worker's MirrorMakerOverridePolicy); MM2's source consumer reads them
    (``source.consumer.*``). Keys and values were checked against Kafka's ConfigDefs at load time.
    """
    profile = PROFILES[m.tuning_profile]
    per_transaction = profile["consumer_exactly_once"] if m.exactly_once and m.transaction_boundary == "poll" else {}
    producer = {**profile["producer"], **m.producer_overrides}
    consumer = {**profile["consumer"], **per_transaction, **m.consumer_overrides}
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


def _source_connector(name: str, m: MigrationSpec, common: dict[str, str], *, sync_topic_configs: bool) -> dict[str, str]:
    """MirrorSourceConnector settings of a flow (forward or reverse): the one place they are written."""
    return {
        "name": name,
        "connector.class": SOURCE_CLASS,
        "tasks.max": str(m.tasks_max),
        **common,
        "replication.factor": str(m.replication_factor),
        "sync.topic.configs.enabled": _b(sync_topic_configs),
        # MSK with IAM has no Kafka ACLs to copy; ACLs of self-managed clusters are migrated by hand.
        "sync.topic.acls.enabled": "false",
        "refresh.topics.interval.seconds": str(m.refresh_topics_interval_seconds),
        "offset.lag.max": str(m.offset_lag_max),
        "source.consumer.isolation.level": "read_committed" if m.read_committed else "read_uncommitted",
        "source.consumer.auto.offset.reset": "earliest",
    }


def _checkpoint_connector(name: str, m: MigrationSpec, common: dict[str, str], *, sync_group_offsets: bool) -> dict[str, str]:
    """MirrorCheckpointConnector settings of a flow (forward or reverse)."""
    return {
        "name": name,
        "connector.class": CHECKPOINT_CLASS,
        "tasks.max": str(m.tasks_max_checkpoint),
        **common,
        "groups": ",".join(m.groups),
        "groups.exclude": ",".join(m.groups_exclude),
        "emit.checkpoints.enabled": "true",
        "emit.checkpoints.interval.seconds": str(m.emit_checkpoints_interval_seconds),
        "sync.group.offsets.enabled": _b(sync_group_offsets),
        "sync.group.offsets.interval.seconds": str(m.sync_group_offsets_interval_seconds),
        "refresh.groups.interval.seconds": str(m.refresh_groups_interval_seconds),
    }


def _marks(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec) -> dict[str, str]:
    """With ``mark_copies``: the source connector of ``source -> target`` marks what it copies and skips what was
    copied from ``target`` (msk_migrate.topology.marks). Applied last: the marks' transforms are not overridable."""
    return mark_transforms(source.alias, target.alias) if m.mark_copies else {}


def render_connectors(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec,
                      connect_version: str | None = None) -> dict[str, dict[str, str]]:
    """The connector configs for the flow ``source -> target``.

    ``connect_version``: the Connect runtime's Kafka version (default: jvm/pom.xml's kafka.version).
    """
    names = m.connector_names()
    common = _common(source, target, m)

    src = _source_connector(names["source"], m, common, sync_topic_configs=m.sync_topic_configs)
    ckpt = _checkpoint_connector(names["checkpoint"], m, common, sync_group_offsets=m.sync_group_offsets)
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
    src.update(_marks(source, target, m))
    ckpt["emit.checkpoints.enabled"] = _b(m.emit_checkpoints)
    hb["emit.heartbeats.enabled"] = _b(m.emit_heartbeats)
    return {names["source"]: src, names["checkpoint"]: ckpt, names["heartbeat"]: hb}


# ---- rollback: the reverse flow target -> source for named topics --------------------------------------
REVERSE_SUFFIX = "reverse"


def forward_spec_without(m: MigrationSpec, topics: list[str]) -> MigrationSpec:
    """The forward flow with ``topics`` (source names) excluded: a topic flows one way at a time."""
    extra = [e for e in exact(topics) if e not in m.topics_exclude]
    return m.model_copy(update={"topics_exclude": [*m.topics_exclude, *extra]})


def reverse_spec(m: MigrationSpec, topics: list[str]) -> MigrationSpec:
    """The reverse flow's spec: exactly ``topics`` (source names; renamed ones map back), the forward's
    groups, its own connector names (``<name>-reverse-*``) and no topic-config sync onto the source."""
    sel = topic_selection(m)
    return m.model_copy(update={
        "name": f"{m.name}-{REVERSE_SUFFIX}",
        "topics": exact(sel.target_name(t) for t in topics),
        "topics_exclude": [],
        "topic_renames": {sel.target_name(t): t for t in topics if sel.target_name(t) != t},
        "sync_topic_configs": False,
    })


def render_reverse_connectors(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec,
                              topics: list[str] | None = None) -> dict[str, dict[str, str]]:
    """The rollback flow ``target -> source`` (source and checkpoint connectors; no heartbeats) for
    ``topics`` (source names; default: every topic the forward spec names exactly, for the stack's
    template). Refuses a topic the given forward spec still replicates (records would loop), unless the spec
    marks copies (``mark_copies``): both directions at once are then the loop-free active/active topology, each
    flow skipping the records the other one brought in (docs/active-active.md).

    Checkpoints and offset syncs of the reverse flow live on the source cluster under the target's alias
    (``<name>-reverse.<target alias>.checkpoints.internal``, ``mm2-offset-syncs.<name>-reverse.<target alias>.internal``;
    without the migration's name under ``kafka-default``): no name collides with the forward flow's.
    """
    sel = topic_selection(m)
    names = list(topics) if topics is not None else [t for t in m.topics if re.fullmatch(r"[A-Za-z0-9._-]+", t)]
    still = [t for t in names if topics is not None and sel.matches(t)]
    if still and not m.mark_copies:
        raise UsageError("migration.mark_copies",
                         f"topic {still[0]} would flow both ways (still replicated forward by "
                         f"{m.connector_names()['source']}) and records would loop without copy marks",
                         "set migration.mark_copies: true for active/active, or exclude the topic from the forward "
                         "flow first (msk-migrate rollback apply does both)")
    r = reverse_spec(m, names)
    cn = r.connector_names()
    common = {**_common(target, source, r, roles=("target", "source")), **reverse_producer(source)}
    # No topic-config sync onto the source. `rollback apply` sets the start of every partition the forward
    # flow wrote to (Connect offsets API); the others hold only the producers' records, read from the beginning.
    src = {**_source_connector(cn["source"], m, common, sync_topic_configs=False), **_marks(target, source, m)}
    ckpt = _checkpoint_connector(cn["checkpoint"], m, common, sync_group_offsets=True)
    return {cn["source"]: src, cn["checkpoint"]: ckpt}


def reverse_producer(source: ClusterEndpoint) -> dict[str, str]:
    """The Connect framework's producer writes a connector's records (and MM2's checkpoints) to the
    *worker's* cluster, the target. The reverse flow writes to the source instead: its producer points
    there with the source's credentials (needs the worker's ``connector.client.config.override.policy``
    to allow ``bootstrap.servers`` and the security settings; Connect then keeps these connectors'
    source offsets in a topic of the same name on the source cluster, KIP-618)."""
    props = {"bootstrap.servers": source.bootstrap_servers, **client_properties("source", source.auth)}
    return {f"producer.override.{k}": v for k, v in props.items()}


def render_rollback_template(source: ClusterEndpoint, target: ClusterEndpoint, m: MigrationSpec) -> dict[str, dict[str, str]]:
    """What the stack uploads next to the forward configs (under ``connectors/reverse/``): the reverse flow
    for every topic the migration names exactly. ``rollback apply`` narrows it to the topics rolled back."""
    return render_reverse_connectors(source, target, m, None)
