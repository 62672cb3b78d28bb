"""Read the source's ACLs (DescribeAcls) and SCRAM users (DescribeUserScramCredentials)."""

from __future__ import annotations

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from ..errors import UsageError
from .plan import Acl

#: confluent-kafka's names where Kafka's ACL names differ (the cluster resource is ``BROKER`` in librdkafka).
_KAFKA_NAME = {"BROKER": "CLUSTER"}


def read_acls(session) -> list[Acl]:
    """Every ACL binding of the cluster of ``session`` (an :class:`~msk_migrate.access.admin.AdminSession`)."""
    flt = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY)
    try:
        bindings = session.admin.describe_acls(flt, request_timeout=session.timeout).result(timeout=session.timeout + 5)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        text = err.str() if err is not None and hasattr(err, "str") else str(exc)
        if "SECURITY_DISABLED" in text.upper() or "no authorizer" in text.lower():
            raise UsageError("source", f"the source cluster ({session.bootstrap}) has no authorizer: there are no ACLs to plan from",
                             "on a cluster without ACLs every authenticated client may do anything; write the IAM policies by hand") from None
        raise session.error("describe ACLs failed (the source user needs DESCRIBE on the cluster)", exc) from None
    return [Acl(principal=b.principal, resource_type=_KAFKA_NAME.get(b.restype.name, b.restype.name), name=b.name, pattern=b.resource_pattern_type.name,
                operation=b.operation.name, permission=b.permission_type.name, host=b.host) for b in bindings]


def read_scram_users(session) -> list[str] | None:
    """The SCRAM users, or None when the cluster does not say (no SCRAM, or no DESCRIBE on the cluster)."""
    try:
        found = session.admin.describe_user_scram_credentials(request_timeout=session.timeout).result(timeout=session.timeout + 5)
    except KafkaException:
        return None
    return sorted(found)
