"""Access to the Kafka clusters: admin sessions, offsets, and client security and secrets.

- :mod:`.admin`: one AdminClient session per cluster with one error contract.
- :mod:`.offsets`: end / last-stable offsets, committed offsets, MM2 checkpoints and offset syncs.
- :mod:`.secrets`: where each secret of a client comes from, and its value (environment, Secrets Manager).
- :mod:`.client_security`: security properties per auth mode (Java clients and librdkafka).
- :mod:`.spark_options`: the Spark Kafka source's options and redaction regex.

Above configuration and the Kafka facts; nothing here knows the commands, Connect or the console.
"""

from ..config.identifiers import msk_region
from .client_security import admin_config, client_properties, java_client_properties, msk_iam_token
from .secrets import SecretRef, SecretResolver, secret_env_name, secret_refs
from .spark_options import REDACTION_REGEX, check_kafka_options, spark_kafka_options

__all__ = [
    "REDACTION_REGEX",
    "SecretRef",
    "SecretResolver",
    "admin_config",
    "check_kafka_options",
    "client_properties",
    "java_client_properties",
    "msk_iam_token",
    "msk_region",  # the region an MSK IAM token is signed for
    "secret_env_name",
    "secret_refs",
    "spark_kafka_options",
]
