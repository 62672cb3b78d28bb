"""Kafka client security for each auth mode: the Java client properties (secret references only, the
renderer's and the Spark source's vocabulary), the same with the secrets resolved, and the equivalent
confluent-kafka (librdkafka) configuration of the operator tools' admin sessions."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..config.identifiers import msk_region
from ..errors import UsageError
from .secrets import SecretResolver, secret_refs

if TYPE_CHECKING:  # the models are pydantic; the Spark job passes the validation's own endpoints
    from ..config.auth import AuthConfig
    from ..config.migration import ClusterEndpoint

IAM_LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
IAM_CALLBACK_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"

_PLACEHOLDER = re.compile(r"\$\{env:([A-Za-z0-9_]+)\}")


def client_properties(role: str, auth: AuthConfig) -> dict[str, str]:
    """Security properties of a Kafka client of cluster ``role`` ('source' or 'target')."""
    refs = secret_refs(role, auth)
    props: dict[str, str] = {}
    if auth.mode == "plaintext":
        props["security.protocol"] = "PLAINTEXT"
    elif auth.mode == "iam":
        props.update(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "AWS_MSK_IAM",
                "sasl.jaas.config": f"{IAM_LOGIN_MODULE} required;",
                "sasl.client.callback.handler.class": IAM_CALLBACK_HANDLER,
            }
        )
    elif auth.mode == "scram":
        props.update(
            {
                "security.protocol": "SASL_SSL" if auth.tls else "SASL_PLAINTEXT",
                "sasl.mechanism": auth.scram_mechanism,
                "sasl.jaas.config": (
                    f'{SCRAM_LOGIN_MODULE} required username="{refs["username"].placeholder}" '
                    f'password="{refs["password"].placeholder}";'
                ),
            }
        )
    elif auth.mode == "mtls":
        props.update(
            {
                "security.protocol": "SSL",
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": refs["certificate_chain"].placeholder,
                "ssl.keystore.key": refs["private_key"].placeholder,
            }
        )
    else:  # pragma: no cover - the model's Literal forbids it
        raise ValueError(auth.mode)
    if "ca" in refs and auth.uses_tls:
        props["ssl.truststore.type"] = "PEM"
        props["ssl.truststore.certificates"] = refs["ca"].placeholder
    return props


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
    """confluent-kafka (librdkafka) configuration equivalent to :func:`~msk_migrate.access.spark_options.spark_kafka_options`."""
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
