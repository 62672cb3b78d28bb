"""Preflight: does MirrorMaker 2's user hold the source ACLs it needs (:mod:`msk_migrate.kafka.mm2_acls`)?

Two ways, the first that answers:

1. DescribeAcls for the user's principal and ``User:*`` (needs Describe on the cluster, which an MM2 user
   rarely has; an unauthorized request is an error or, on Kafka 2.8, an empty answer):
   every forward need must be covered by an ALLOW binding (same resource, the name or ``*`` or a prefix of it,
   the operation or ALL, or one that implies it: Read/Write imply Describe, AlterConfigs implies
   DescribeConfigs).
2. Otherwise, test the permissions as the user, on the selected topics: read a record (Read), describe the
   topic's configs (DescribeConfigs), describe the consumer groups (Describe on groups).

A missing ACL is a ``fail`` row naming it by resource and operation (``Topic:* READ``) and the grant that fixes it.
A cluster without an authorizer, or a plaintext source, is a ``skip`` row.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ConfigResource,
    ResourcePatternType,
    ResourceType,
)

from ..access.admin import AdminSession, quiet
from ..kafka.mm2_acls import AclNeed, forward_source_acls

Row = tuple[str, str, str]
NAME = "source ACLs for MirrorMaker 2"
_TYPES = {"topic": ResourceType.TOPIC, "group": ResourceType.GROUP, "cluster": ResourceType.BROKER}
_IMPLIED = {"DESCRIBE": {"READ", "WRITE", "DELETE", "ALTER", "DESCRIBE"}, "DESCRIBE_CONFIGS": {"ALTER_CONFIGS", "DESCRIBE_CONFIGS"}}
_AUTH_ERRORS = {KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED,
                KafkaError.CLUSTER_AUTHORIZATION_FAILED}


def _fix(missing: list[AclNeed], principal: str) -> str:
    return (f"grant {principal} ALLOW " + ", ".join(n.describe() for n in missing)
            + " on the source (docs/runbooks/migration.md, 'ACLs MirrorMaker 2 needs')")


def _covered(need: AclNeed, bindings: list[Any]) -> bool:
    ops = _IMPLIED.get(need.operation, {need.operation}) | {"ALL"}
    for b in bindings:
        if b.restype != _TYPES[need.resource] or b.permission_type != AclPermissionType.ALLOW:
            continue
        if b.operation.name not in ops:
            continue
        if b.resource_pattern_type == ResourcePatternType.PREFIXED:
            if need.name != "*" and need.name.startswith(b.name):
                return True
        elif b.name in ("*", need.name):
            return True
    return False


def _from_acls(src: AdminSession, principal: str) -> list[AclNeed] | None:
    """Missing needs from DescribeAcls, or None when the user may not describe ACLs (or no authorizer)."""
    bindings: list[Any] = []
    for who in (principal, "User:*"):  # the user's own bindings and those of every user
        flt = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, who, None, AclOperation.ANY,
                               AclPermissionType.ANY)
        try:
            bindings += src.admin.describe_acls(flt, request_timeout=src.timeout).result(timeout=src.timeout + 5)
        except KafkaException:
            return None
    if not bindings:  # Kafka 2.8 answers an unauthorized DescribeAcls with no binding: that tells nothing
        return None
    return [n for n in forward_source_acls() if not _covered(n, bindings)]


def _auth_error(exc: BaseException) -> bool:
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    return isinstance(err, KafkaError) and err.code() in _AUTH_ERRORS


def _probe(src: AdminSession, topics: list[str]) -> list[AclNeed]:
    """Missing needs found by acting as the user on ``topics`` (the first selected one is enough)."""
    missing: list[AclNeed] = []
    topic = topics[0]
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    try:
        src.admin.describe_configs([res], request_timeout=src.timeout)[res].result(timeout=src.timeout + 5)
    except KafkaException as exc:
        if _auth_error(exc):
            missing.append(AclNeed("topic", topic, "DESCRIBE_CONFIGS", "copy topic configs"))
    conf = {k: v for k, v in src.conf.items() if k != "error_cb"}
    c = Consumer(quiet({**conf, "group.id": "msk-migrate-preflight-acl-probe", "enable.auto.commit": False}))
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        for _ in range(10):
            msg = c.poll(1.0)
            if msg is None:
                continue
            err = msg.error()
            if err is not None and err.code() in _AUTH_ERRORS:
                missing.append(AclNeed("topic", topic, "READ", "consume the replicated topics"))
                break
            if err is None or err.code() == KafkaError._PARTITION_EOF:
                break
    finally:
        c.close()
    try:
        listed = src.admin.list_consumer_groups(request_timeout=src.timeout).result(timeout=src.timeout + 5)
        names = [g.group_id for g in listed.valid][:1]
        if names:
            src.admin.describe_consumer_groups(names, request_timeout=src.timeout)[names[0]].result(timeout=src.timeout + 5)
    except KafkaException as exc:
        if _auth_error(exc):
            missing.append(AclNeed("group", "*", "DESCRIBE", "list groups and their offsets"))
    return missing


def acl_rows(src: AdminSession, username: str | None, topics: list[str]) -> list[Row]:
    """The preflight row(s) about MM2's source ACLs."""
    if not username:
        return [(NAME, "skip", "the source takes no SASL user (plaintext or mTLS): ACLs not checked")]
    principal = f"User:{username}"
    missing = _from_acls(src, principal)
    how = "DescribeAcls"
    if missing is None:
        if not topics:
            return [(NAME, "skip", f"{principal} may not describe ACLs and no topic is selected to test with")]
        missing, how = _probe(src, topics), f"tested as {principal} on {topics[0]}"
    if missing:
        return [(NAME, "fail", f"{principal} lacks " + ", ".join(n.describe() for n in missing)
                 + f" ({how}; fix: {_fix(missing, principal)})")]
    return [(NAME, "ok", f"{principal} may read, describe and describe configs of the topics and describe groups ({how})")]
