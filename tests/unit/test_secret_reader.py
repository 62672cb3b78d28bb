"""One reader of Secrets Manager for every command (:func:`msk_migrate.access.secrets.read_secret_json`): the
Connect REST credentials, a registry's basic auth and a cluster's SCRAM secret are read the same way, from the
secret's own region, against moto's server, and each wrong secret is one line naming the field that named it."""

from __future__ import annotations

import json

import boto3
import pytest

from msk_migrate.access.secrets import SecretRef, SecretResolver
from msk_migrate.connect_api.rest import credentials_from_secret
from msk_migrate.errors import UsageError
from msk_migrate.schemas.client import secret_credentials


@pytest.fixture
def secrets(moto_url, monkeypatch, unique):
    """Secrets in moto's eu-west-1 while the process's default region is us-east-1 (the ARN's region is read)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", moto_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    sm = boto3.client("secretsmanager", region_name="eu-west-1", endpoint_url=moto_url)

    def make(name: str, value: str) -> str:
        return sm.create_secret(Name=f"{name}-{unique}", SecretString=value)["ARN"]

    good = make("good", json.dumps({"username": "mm2", "password": "pw-1"}))
    return {"good": good, "text": make("text", "not json"), "list": make("list", "[1, 2]"),
            "keyless": make("keyless", json.dumps({"user": "mm2"})),
            "gone": good.replace(f"good-{unique}", f"absent-{unique}")}


def _readers():
    return [
        ("--connect-secret-arn", lambda arn: tuple(credentials_from_secret(arn).__dict__.values())),
        ("--target-registry-secret-arn", lambda arn: secret_credentials(arn, "--target-registry-secret-arn")),
    ]


@pytest.mark.parametrize(("field", "read"), _readers())
def test_basic_auth_secrets_are_read_from_the_secrets_own_region(secrets, field, read):
    assert read(secrets["good"]) == ("mm2", "pw-1")


@pytest.mark.parametrize(("field", "read"), _readers())
@pytest.mark.parametrize(("which", "words"), [
    ("text", "is not a JSON object"), ("list", "is not a JSON object"),
    ("keyless", "is not JSON with keys username and password"), ("gone", "cannot read"),
])
def test_a_wrong_basic_auth_secret_is_one_line_naming_the_option(secrets, field, read, which, words):
    with pytest.raises(UsageError) as err:
        read(secrets[which])
    assert str(err.value).startswith(field) and words in str(err.value) and "\n" not in str(err.value)
    assert "pw-1" not in str(err.value)


def test_a_cluster_secret_is_read_by_the_same_reader_and_refused_the_same_way(secrets):
    resolver = SecretResolver(environ={})
    assert resolver.value("source", SecretRef("MM2_SOURCE_SASL_PASSWORD", secrets["good"], "password")) == "pw-1"
    with pytest.raises(UsageError, match=r"^source\.auth\.secret_arn: secret .* is not a JSON object"):
        resolver.value("source", SecretRef("MM2_SOURCE_SASL_PASSWORD", secrets["text"], "password"))


def test_a_value_that_is_no_secret_arn_is_refused_before_any_call(monkeypatch):
    monkeypatch.setattr(boto3, "client", lambda *a, **k: pytest.fail("Secrets Manager was asked"))
    for field, read in _readers():
        with pytest.raises(UsageError, match=f"^{field}: 'arn:aws:ssm:eu-west-1:123456789012:parameter/x' is not a Secrets Manager secret ARN"):
            read("arn:aws:ssm:eu-west-1:123456789012:parameter/x")
