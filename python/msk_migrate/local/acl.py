"""ACLs of a secured local cluster: what the harness grants MirrorMaker 2's user
(:mod:`msk_migrate.kafka.mm2_acls`, nothing more) and the client settings of the harness's own principals."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from ..kafka.mm2_acls import AclNeed

RESOURCE = {"topic": ResourceType.TOPIC, "group": ResourceType.GROUP, "cluster": ResourceType.BROKER}


def binding(principal: str, need: AclNeed) -> AclBinding:
    return AclBinding(RESOURCE[need.resource], need.name, ResourcePatternType.LITERAL, principal, "*",
                      AclOperation[need.operation], AclPermissionType.ALLOW)


def grant(admin: AdminClient, principal: str, needs: list[AclNeed]) -> list[str]:
    """Create ALLOW ACLs for ``principal`` (idempotent); returns them as ``Topic:name OPERATION`` lines."""
    if not needs:
        return []
    for b, fut in admin.create_acls([binding(principal, n) for n in needs]).items():
        try:
            fut.result(timeout=30)
        except KafkaException as exc:
            raise RuntimeError(f"granting {b} failed: {exc.args[0].str()}") from None
    return [n.describe() for n in needs]


def revoke(admin: AdminClient, principal: str, needs: list[AclNeed]) -> None:
    """Delete the ALLOW ACLs ``needs`` of ``principal`` (a test takes one away to see preflight name it)."""
    filters = [AclBindingFilter(RESOURCE[n.resource], n.name, ResourcePatternType.LITERAL, principal, "*",
                                AclOperation[n.operation], AclPermissionType.ALLOW) for n in needs]
    for fut in admin.delete_acls(filters).values():
        fut.result(timeout=30)


def mtls_client(ca: str, cert: str, key: str) -> dict[str, Any]:
    """librdkafka settings of the harness admin (its certificate is a super user on the INTERNAL listener)."""
    return {"security.protocol": "SSL", "ssl.ca.location": ca, "ssl.certificate.location": cert,
            "ssl.key.location": key}


def scram_client(ca: str, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, Any]:
    """librdkafka settings of a SCRAM user on the SASL_SSL listener."""
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": mechanism, "sasl.username": user,
            "sasl.password": password, "ssl.ca.location": ca}
