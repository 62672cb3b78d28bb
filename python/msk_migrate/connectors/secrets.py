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
    secret_arn: str | None  #: Secrets Manager secret (None: operator tools with secrets_from env)
    json_key: str  #: key inside the secret's JSON

    @property
    def placeholder(self) -> str:
        return "${env:" + self.env + "}"

    @property
    def ecs_value_from(self) -> str:
        return f"{self.secret_arn}:{self.json_key}::"


#: Variable suffix per purpose; the purpose is also the JSON key inside the Secrets Manager secret.
SECRET_PURPOSES: dict[str, str] = {
    "username": "SASL_USERNAME",
    "password": "SASL_PASSWORD",
    "certificate_chain": "TLS_CERTIFICATE_CHAIN",
    "private_key": "TLS_PRIVATE_KEY",
    "ca": "TLS_CA",
}


def secret_env_name(role: str, purpose: str) -> str:
    """The one spelling of a secret variable: ``MM2_<ROLE>_<SUFFIX>`` (e.g. MM2_SOURCE_SASL_PASSWORD)."""
    return f"MM2_{role.upper()}_{SECRET_PURPOSES[purpose]}"


def secret_refs(role: str, auth: AuthConfig) -> dict[str, SecretRef]:
    """Secret variables for one side ('source' or 'target'), keyed by purpose."""
    purposes = {"scram": ("username", "password"), "mtls": ("certificate_chain", "private_key")}.get(auth.mode, ())
    refs = {p: SecretRef(secret_env_name(role, p), auth.secret_arn, p) for p in purposes}
    if auth.ca_secret_arn:
        refs["ca"] = SecretRef(secret_env_name(role, "ca"), auth.ca_secret_arn, "ca")
    return refs
