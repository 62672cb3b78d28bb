"""What an application changes to reach MSK with IAM instead of SCRAM, per client library (port 9098, TLS)."""

from __future__ import annotations

from typing import Any


def client_settings(region: str) -> dict[str, dict[str, Any]]:
    """Settings per client library; ``region`` is the MSK cluster's (the signer signs for it)."""
    from .. import versions

    iam_auth = versions.aws_msk_iam_auth_version()
    return {
        "java": {
            "dependency": f"software.amazon.msk:aws-msk-iam-auth:{iam_auth}",
            "properties": {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "AWS_MSK_IAM",
                "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
                "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
            },
            "bootstrap": "port 9098 (stack output / aws kafka get-bootstrap-brokers: BootstrapBrokerStringSaslIam)",
        },
        "librdkafka (confluent-kafka Python)": {
            "dependency": "aws-msk-iam-sasl-signer-python (pip)",
            "properties": {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"},
            "code": ("from aws_msk_iam_sasl_signer import MSKAuthTokenProvider\n"
                     "def oauth_cb(_config):\n"
                     f"    token, expiry_ms = MSKAuthTokenProvider.generate_auth_token('{region}')\n"
                     "    return token, expiry_ms / 1000\n"
                     "conf['oauth_cb'] = oauth_cb"),
        },
        "Go": {"dependency": "github.com/aws/aws-msk-iam-sasl-signer-go",
               "properties": {"sasl.mechanism": "OAUTHBEARER", "tls": "on"}},
        "Node.js (KafkaJS)": {"dependency": "aws-msk-iam-sasl-signer-js (npm)",
                              "properties": {"ssl": True, "sasl.mechanism": "oauthbearer"}},
        ".NET (Confluent.Kafka)": {"dependency": "AWS.MSK.Auth (NuGet, aws-msk-iam-sasl-signer-net)",
                                   "properties": {"SecurityProtocol": "SaslSsl", "SaslMechanism": "OauthBearer"}},
    }
