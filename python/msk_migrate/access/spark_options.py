"""Options of the Spark Kafka source (validation) for one cluster: the Java client properties of
:mod:`.client_security` as ``kafka.<prop>`` options, tuning options a user may add, and the redaction
regex that keeps the resolved secrets out of Spark's logs and UI (``spark.redaction.regex``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import UsageError
from .client_security import java_client_properties
from .secrets import SecretResolver

if TYPE_CHECKING:  # the models are pydantic; the Spark job passes the validation's own endpoints
    from ..config.migration import ClusterEndpoint

#: Spark redacts option values whose *key* matches this (jaas config holds the SCRAM password, the
#: keystore key and certificate options hold PEM material).
REDACTION_REGEX = r"(?i)secret|password|token|access[.]key|jaas|keystore|truststore"

#: Kafka client options a user may add with --kafka-option (tuning only; never security settings).
_FORBIDDEN_OPTION = re.compile(r"(?i)^(security\.|sasl\.|ssl\.|bootstrap\.servers$|isolation\.level$)")


def check_kafka_options(options: dict[str, str]) -> dict[str, str]:
    for key in options:
        if _FORBIDDEN_OPTION.match(key):
            raise UsageError(
                "--kafka-option",
                f"{key} cannot be overridden (security and isolation come from the auth settings)",
                "use --source-auth/--target-auth and --isolation-level",
            )
    return options


def spark_kafka_options(
    role: str,
    endpoint: ClusterEndpoint,
    resolver: SecretResolver,
    isolation_level: str,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """Options of ``spark.read.format("kafka")`` for one cluster (``kafka.``-prefixed client props)."""
    props = {"bootstrap.servers": endpoint.bootstrap_servers, "isolation.level": isolation_level}
    props.update(check_kafka_options(dict(extra or {})))
    props.update(java_client_properties(role, endpoint.auth, resolver))
    return {f"kafka.{k}": v for k, v in props.items()}
