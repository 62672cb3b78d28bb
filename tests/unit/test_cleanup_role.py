"""``cleanup --yes`` deletes on an IAM target as the stack's cleanup role, assumed for the deletion only (issue 37:
no standing destructive right on the operator task role). STS is moto's server; the MSK IAM token is signed by
AWS's signer with the assumed credentials, offline."""

from __future__ import annotations

import base64
import urllib.parse
from types import SimpleNamespace

import boto3
import pytest

from msk_migrate.access.admin import AdminSession
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.environ import CLEANUP_ROLE_ENV
from msk_migrate.config.migration import ClusterEndpoint
from msk_migrate.errors import UsageError
from msk_migrate.runbook.cleanup_role import cleanup_role_arn, deleting_session

ROLE = "arn:aws:iam::123456789012:role/msk-migrate-dev-cleanup"
MSK = "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"


def _session(mode: str) -> SimpleNamespace:
    endpoint = ClusterEndpoint(alias="target", bootstrap_servers=MSK if mode == "iam" else "127.0.0.1:9",
                               auth=AuthConfig(mode=mode))
    conf = {"bootstrap.servers": endpoint.bootstrap_servers, "client.id": "msk-migrate-validate-target"}
    if mode == "iam":
        conf.update({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "oauth_cb": lambda _c: ("caller", 0.0)})
    return SimpleNamespace(target_endpoint=endpoint, target=AdminSession("target", conf))


def test_without_a_cleanup_role_or_on_a_non_iam_target_the_session_deletes_with_its_own_client() -> None:
    for mode, env in (("iam", {}), ("plaintext", {CLEANUP_ROLE_ENV: ROLE})):
        s = _session(mode)
        assert deleting_session(s, env) is s.target  # type: ignore[arg-type]


def test_a_malformed_cleanup_role_is_refused_naming_the_variable() -> None:
    with pytest.raises(UsageError) as err:
        cleanup_role_arn({CLEANUP_ROLE_ENV: "msk-migrate-dev-cleanup"})
    assert err.value.field == CLEANUP_ROLE_ENV and "not an IAM role ARN" in str(err.value)


def test_an_iam_target_deletes_with_tokens_signed_as_the_assumed_cleanup_role(moto_url: str) -> None:
    sts = boto3.client("sts", region_name="eu-west-1", endpoint_url=moto_url, aws_access_key_id="caller-key",
                       aws_secret_access_key="caller-secret")
    s = _session("iam")
    deleter = deleting_session(s, {CLEANUP_ROLE_ENV: ROLE}, sts=sts)  # type: ignore[arg-type]
    assert deleter is not s.target and deleter.conf["client.id"] == "msk-migrate-cleanup"
    token, _expiry = deleter.conf["oauth_cb"](None)
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    # Signed by the assumed session (moto's temporary key, with its session token), not by the caller's key.
    assert query["Action"] == ["kafka-cluster:Connect"]
    assert query["X-Amz-Credential"][0].startswith("ASIA") and "caller-key" not in url
    assert query["X-Amz-Security-Token"]
    # The operator task's own client is untouched: listing and every other command keep its identity.
    assert s.target.conf["oauth_cb"](None) == ("caller", 0.0)
