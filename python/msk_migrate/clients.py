"""Kafka client settings for operator tools (validate, preflight, offsets), per cluster role ('source' or 'target').

These tools speak the same auth vocabulary as the connector renderer
(:func:`msk_migrate.connectors.client_props.client_properties`): the Spark Kafka source gets those
Java client properties as ``kafka.<prop>`` options, and confluent-kafka's AdminClient (metadata parity,
offset look-ups) gets the librdkafka equivalent.

Secrets (SCRAM username/password, mTLS certificate chain and key, a private CA) are never command-line
arguments. Each one is read, in this order, from

1. the environment variable the renderer names for it (``MM2_SOURCE_SASL_PASSWORD``,
   ``MM2_TARGET_TLS_PRIVATE_KEY``, ... see :mod:`msk_migrate.connectors.secrets`), or
2. AWS Secrets Manager: the ``secret_arn`` / ``ca_secret_arn`` of the side's auth config, JSON key as
   documented on :class:`msk_migrate.config.AuthConfig`.

The resolved values live only in the driver's memory and in the Spark plan's Kafka options (Spark
redacts them from logs and the UI through ``spark.redaction.regex``, see :data:`REDACTION_REGEX`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .config.auth import AuthConfig
from .config.identifiers import msk_region
from .config.migration import ClusterEndpoint
from .connectors.client_props import client_properties
from .connectors.secrets import SecretRef, secret_env_name, secret_refs
from .errors import UsageError

#: Spark redacts option values whose *key* matches this (jaas config holds the SCRAM password, the
#: keystore key and certificate options hold PEM material).
REDACTION_REGEX = r"(?i)secret|password|token|access[.]key|jaas|keystore|truststore"

_PLACEHOLDER = re.compile(r"\$\{env:([A-Za-z0-9_]+)\}")

#: Kafka client options a user may add with --kafka-option (tuning only; never security settings).
_FORBIDDEN_OPTION = re.compile(r"(?i)^(security\.|sasl\.|ssl\.|bootstrap\.servers$|isolation\.level$)")


def ca_env(role: str) -> str:
    """Variable for a private CA bundle (PEM) when no ``ca_secret_arn`` is configured."""
    return secret_env_name(role, "ca")


@dataclass
class SecretResolver:
    """Resolves :class:`SecretRef` values from the environment, then Secrets Manager (cached per ARN)."""

    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    secretsmanager: Callable[[], Any] | None = None  #: factory of a boto3 secretsmanager client
    _cache: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _secret_json(self, arn: str, role: str) -> dict[str, Any]:
        if arn not in self._cache:
            try:
                if self.secretsmanager is not None:
                    client = self.secretsmanager()
                else:
                    import boto3

                    region = arn.split(":")[3] if arn.count(":") >= 6 else None
                    client = boto3.client("secretsmanager", region_name=region or None)
                raw = client.get_secret_value(SecretId=arn)["SecretString"]
                self._cache[arn] = json.loads(raw)
            except json.JSONDecodeError:
                raise UsageError(
                    f"{role}.auth.secret_arn", f"secret {arn} is not a JSON object", "store the keys as JSON"
                ) from None
            except Exception as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UsageError(
                    f"{role}.auth.secret_arn",
                    f"cannot read {arn} from Secrets Manager: {first}",
                    "grant secretsmanager:GetSecretValue on it, or export the secret in the environment",
                ) from None
        return self._cache[arn]

    def value(self, role: str, ref: SecretRef) -> str:
        if self.environ.get(ref.env):
            return self.environ[ref.env]
        if ref.secret_arn:
            data = self._secret_json(ref.secret_arn, role)
            if ref.json_key not in data:
                raise UsageError(
                    f"{role}.auth.secret_arn",
                    f"secret {ref.secret_arn} has no JSON key {ref.json_key!r}",
                    f"add {ref.json_key!r} to the secret or export {ref.env}",
                )
            return str(data[ref.json_key])
        raise UsageError(
            f"{role}.auth",
            f"{ref.env} is not set and no secret ARN is configured",
            f"export {ref.env} or pass --{role}-secret-arn",
        )

    def resolve(self, role: str, auth: AuthConfig) -> dict[str, str]:
        """Every secret of one side by purpose (username, password, certificate_chain, private_key, ca)."""
        out = {purpose: self.value(role, ref) for purpose, ref in secret_refs(role, auth).items()}
        if "ca" not in out and auth.uses_tls and self.environ.get(ca_env(role)):
            out["ca"] = self.environ[ca_env(role)]
        return out

    def check_tls_material(self, role: str, auth: AuthConfig, secrets: dict[str, str]) -> None:
        """The PEM a librdkafka client will load, checked first: garbage is one line naming the variable
        (or the secret's key) and the fix, exit 2 -- not librdkafka's KafkaException at client start."""
        refs = secret_refs(role, auth)
        for purpose in ("certificate_chain", "private_key", "ca"):
            if purpose not in secrets:
                continue
            ref = refs.get(purpose)
            if ref is None:
                where = ca_env(role)
            elif self.environ.get(ref.env):
                where = ref.env
            else:
                where = f"{ref.secret_arn} key {ref.json_key!r}"
            check_pem(purpose, secrets[purpose], where)


def check_pem(purpose: str, value: str, where: str) -> None:
    """PEM material a TLS client will load: certificates (chain, CA) or an unencrypted private key.
    Garbage is bad input (exit 2, naming the variable or secret key) before any client starts."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    what = "an unencrypted PEM private key" if purpose == "private_key" else "PEM certificate(s)"
    try:
        if purpose == "private_key":
            load_pem_private_key(value.encode(), password=None)
        elif not x509.load_pem_x509_certificates(value.encode()):
            raise ValueError("no certificate")
    except Exception:
        raise UsageError(where, f"is not {what}",
                         f"put the {'key' if purpose == 'private_key' else 'certificate'} PEM "
                         "(-----BEGIN ...----- block) there") from None


def java_client_properties(role: str, auth: AuthConfig, resolver: SecretResolver) -> dict[str, str]:
    """The renderer's client properties with every ``${env:NAME}`` replaced by its secret value."""
    props = client_properties(role, auth)
    refs = secret_refs(role, auth)
    values = resolver.resolve(role, auth)
    by_env = {ref.env: values[purpose] for purpose, ref in refs.items()}
    if "ca" in values and "ca" not in refs:  # CA from the environment only
        props["ssl.truststore.type"] = "PEM"
        props["ssl.truststore.certificates"] = values["ca"]

    def sub(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: by_env[m.group(1)], text)

    return {k: sub(v) for k, v in props.items()}


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


# ---- librdkafka (confluent-kafka) ------------------------------------------------------------------



def msk_iam_token(region: str, credentials: Any = None) -> tuple[str, float]:
    """An MSK IAM SASL/OAUTHBEARER token from AWS's maintained signer (aws-msk-iam-sasl-signer-python):
    a SigV4-presigned ``kafka-cluster:Connect`` URL, base64url. ``credentials``: explicit botocore
    credentials (default: the standard AWS credential chain). Returns (token, expiry epoch seconds)."""
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
    from botocore.credentials import CredentialProvider

    try:
        if credentials is None:
            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(region)
        else:

            class _Static(CredentialProvider):
                METHOD = "explicit"

                def load(self):
                    return credentials

            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(region, _Static())
    except Exception as exc:
        raise UsageError("aws credentials", f"cannot sign an MSK IAM token: {exc}",
                         "configure an AWS profile, role or AWS_* environment variables") from None
    return token, expiry_ms / 1000


def admin_config(role: str, endpoint: ClusterEndpoint, resolver: SecretResolver) -> dict[str, Any]:
    """confluent-kafka (librdkafka) configuration equivalent to :func:`spark_kafka_options`."""
    auth = endpoint.auth
    conf: dict[str, Any] = {"bootstrap.servers": endpoint.bootstrap_servers, "client.id": f"msk-migrate-validate-{role}"}
    secrets = resolver.resolve(role, auth)
    if auth.uses_tls or auth.mode == "mtls":
        resolver.check_tls_material(role, auth, secrets)
    if auth.mode == "plaintext":
        conf["security.protocol"] = "PLAINTEXT"
    elif auth.mode == "scram":
        conf.update(
            {
                "security.protocol": "SASL_SSL" if auth.tls else "SASL_PLAINTEXT",
                "sasl.mechanism": auth.scram_mechanism,
                "sasl.username": secrets["username"],
                "sasl.password": secrets["password"],
            }
        )
    elif auth.mode == "mtls":
        conf.update(
            {
                "security.protocol": "SSL",
                "ssl.certificate.pem": secrets["certificate_chain"],
                "ssl.key.pem": secrets["private_key"],
            }
        )
    elif auth.mode == "iam":
        region = msk_region(endpoint.bootstrap_servers)
        if not region:
            raise UsageError(
                f"{role}.bootstrap_servers",
                "cannot tell the AWS region of this MSK cluster",
                "set AWS_REGION",
            )
        conf.update(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "OAUTHBEARER",
                "oauth_cb": lambda _config: msk_iam_token(region),
            }
        )
    if "ca" in secrets and auth.uses_tls:
        conf["ssl.ca.pem"] = secrets["ca"]
    return conf
