"""The Kafka ACLs MirrorMaker 2's user needs on a source cluster with an authorizer (one source of truth).

The local harness grants exactly these to its MM2 user (``msk-migrate local up`` with a SCRAM/TLS source),
preflight names the one that is missing, and docs/runbooks/migration.md lists them. Forward replication
only reads the source; a rollback's reverse flow writes the rolled-back topics and MM2's own bookkeeping
into it, so those grants are given at rollback time, for the rolled-back topics and groups only.

- forward: Topic ``*`` Read, Describe, DescribeConfigs (MirrorSourceConnector reads records and copies
  topic configs); Group ``*`` Describe (MirrorCheckpointConnector lists the groups and their offsets).
- reverse (target -> source): Write + Describe on each rolled-back topic; Create, Write, Read, Describe on
  the reverse flow's offset-syncs and checkpoints topics (``mm2-offset-syncs.<name>-reverse.<target alias>.internal``,
  ``<name>-reverse.<target alias>.checkpoints.internal``, :mod:`.names`) and the Connect
  offsets topic the reverse connectors keep on the source (KIP-618, :func:`reverse_producer`); Read +
  Describe on each rolled-back group (its translated offsets are committed on the source); Cluster
  IdempotentWrite (Kafka before 3.0 asks it of every idempotent producer).
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import checkpoints_topic, offset_syncs_topic

WILDCARD = "*"


@dataclass(frozen=True)
class AclNeed:
    """One ALLOW ACL: ``operation`` on ``resource`` ``name`` (literal; ``*`` = every one), and why."""

    resource: str  #: "topic" | "group" | "cluster"
    name: str
    operation: str  #: Kafka operation, upper case with underscores (READ, DESCRIBE_CONFIGS, ...)
    why: str

    def describe(self) -> str:
        """The one-line spelling used in messages: ``Topic:* READ``."""
        return f"{self.resource.capitalize()}:{self.name} {self.operation}"


def forward_source_acls() -> list[AclNeed]:
    """What the forward flow (source -> target) needs on the source: read-only."""
    return [
        AclNeed("topic", WILDCARD, "READ", "MirrorSourceConnector consumes the replicated topics"),
        AclNeed("topic", WILDCARD, "DESCRIBE", "MirrorSourceConnector lists topics and their partitions"),
        AclNeed("topic", WILDCARD, "DESCRIBE_CONFIGS", "MirrorSourceConnector copies topic configs"),
        AclNeed("group", WILDCARD, "DESCRIBE", "MirrorCheckpointConnector lists groups and reads their offsets"),
    ]


def reverse_source_acls(target_alias: str, topics: list[str], groups: list[str],
                        connect_offsets_topic: str, namespace: str | None = None) -> list[AclNeed]:
    """What a rollback's reverse flow (target -> source) needs on the source, for ``topics``/``groups``
    (``namespace``: the reverse flow's migration name its bookkeeping topics carry; None: Kafka's names)."""
    needs = [AclNeed("cluster", "kafka-cluster", "IDEMPOTENT_WRITE", "the reverse flow's idempotent producer")]
    for t in topics:
        needs += [AclNeed("topic", t, "WRITE", "the reverse flow writes the producers' records back"),
                  AclNeed("topic", t, "DESCRIBE", "the reverse flow's producer looks up its partitions")]
    for t in (offset_syncs_topic(target_alias, "source", namespace=namespace), checkpoints_topic(target_alias, namespace),
              connect_offsets_topic):
        needs += [AclNeed("topic", t, op, "the reverse flow's own bookkeeping on the source")
                  for op in ("CREATE", "WRITE", "READ", "DESCRIBE")]
    for g in groups:
        needs += [AclNeed("group", g, op, "the reverse checkpoints commit the group's translated offsets")
                  for op in ("READ", "DESCRIBE")]
    return needs
