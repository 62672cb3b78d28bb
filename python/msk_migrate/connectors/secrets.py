"""Names of the environment variables that carry secrets into the Connect worker.

Rendered configs only ever contain ``${env:NAME}``; Kafka's EnvVarConfigProvider (enabled in the
worker by the image entrypoint as provider ``env``) resolves them inside the worker JVM. On ECS the
task definition's ``secrets`` fills NAME from Secrets Manager (``valueFrom = <arn>:<json-key>::``).
Locally the harness sets NAME on the worker process.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.auth import AuthConfig


@dataclass(frozen=True)
class SecretRef:
    env: str  #: variable name inside the worker, e.g. MM2_SOURCE_SASL_PASSWORD
    secret_arn: str  #: Secrets Manager secret
    json_key: str  #: key inside the secret's JSON

    @property
    def placeholder(self) -> str:
        return "${env:" + self.env + "}"

    @property
    def ecs_value_from(self) -> str:
        return f"{self.secret_arn}:{self.json_key}::"


def _prefix(role: str) -> str:
    return f"MM2_{role.upper()}_"


def secret_refs(role: str, auth: AuthConfig) -> dict[str, SecretRef]:
    """Secret variables for one side ('source' or 'target'), keyed by purpose."""
    p = _prefix(role)
    refs: dict[str, SecretRef] = {}
    if auth.mode == "scram":
        refs["username"] = SecretRef(p + "SASL_USERNAME", auth.secret_arn, "username")
        refs["password"] = SecretRef(p + "SASL_PASSWORD", auth.secret_arn, "password")
    elif auth.mode == "mtls":
        refs["certificate_chain"] = SecretRef(p + "TLS_CERTIFICATE_CHAIN", auth.secret_arn, "certificate_chain")
        refs["private_key"] = SecretRef(p + "TLS_PRIVATE_KEY", auth.secret_arn, "private_key")
    if auth.ca_secret_arn:
        refs["ca"] = SecretRef(p + "TLS_CA", auth.ca_secret_arn, "ca")
    return refs
