"""Kafka client security properties for each auth mode (no secret values, only references)."""

from __future__ import annotations

from ..config.auth import AuthConfig
from .secrets import secret_refs

IAM_LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
IAM_CALLBACK_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


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
