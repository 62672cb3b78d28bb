"""confluent-kafka AdminClient for a cluster endpoint, with the one-line 'unreachable' error."""

from __future__ import annotations

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from ..config.migration import ClusterEndpoint
from ..errors import UnreachableError
from ..clients import SecretResolver, admin_config


def connect_admin(role: str, endpoint: ClusterEndpoint, timeout: float = 15.0) -> AdminClient:
    """An AdminClient that has proven it can reach the cluster (metadata within ``timeout``)."""
    errors: list[str] = []
    conf = admin_config(role, endpoint, SecretResolver())
    conf["error_cb"] = lambda err: errors.append(err.str())
    client = AdminClient(conf)
    try:
        client.list_topics(timeout=timeout)
    except KafkaException as exc:
        detail = errors[-1] if errors else exc.args[0].str()
        raise UnreachableError(f"{role} cluster {endpoint.bootstrap_servers} unreachable: {detail}") from None
    return client
