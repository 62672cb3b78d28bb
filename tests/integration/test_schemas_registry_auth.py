"""Registry basic auth from a Secrets Manager secret (moto's server): the secret's username/password are sent,
and a secret with the wrong password is the one-line "refused the credentials" (exit 2).

The registry side is an HTTP endpoint on 127.0.0.1 that checks Basic credentials as an authenticating
registry does (no registry installable here runs with basic auth); behind the check it answers the Confluent
API's /subjects with an empty list."""

from __future__ import annotations

import base64
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import ClassVar

import boto3
import pytest

USER, PASSWORD = "schema-copier", "s3cret-registry-pw"


class _BasicAuthRegistry(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        header = self.headers.get("Authorization", "")
        type(self).seen.append(header)
        if header != "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode():
            self.send_response(401)
            self.end_headers()
            return
        body = b"[]" if self.path.startswith("/subjects") else b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def registry() -> Iterator[str]:
    _BasicAuthRegistry.seen = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _BasicAuthRegistry)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _secret(moto_url: str, name: str, password: str) -> str:
    sm = boto3.client("secretsmanager", region_name="eu-west-1", endpoint_url=moto_url,
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    return sm.create_secret(Name=name, SecretString=json.dumps({"username": USER, "password": password}))["ARN"]


def _plan(moto_url: str, registry: str, arn: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "AWS_ENDPOINT_URL": moto_url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    for role in ("SOURCE", "TARGET"):
        env.pop(f"MSK_MIGRATE_{role}_REGISTRY_USER", None)
        env.pop(f"MSK_MIGRATE_{role}_REGISTRY_PASSWORD", None)
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", "plan", "--source-registry", registry,
                           "--target-registry", registry, "--source-registry-secret-arn", arn],
                          capture_output=True, text=True, timeout=120, env=env)


def test_the_secrets_credentials_are_sent_to_the_registry(moto_url: str, registry: str) -> None:
    ran = _plan(moto_url, registry, _secret(moto_url, "registry-good", PASSWORD))
    # authenticated: the source answered its (empty) subject list, which is what stops the plan
    assert ran.returncode == 2 and "holds no subject" in ran.stderr and "--source-registry" in ran.stderr, ran.stderr
    assert _BasicAuthRegistry.seen[-1].startswith("Basic ")


def test_a_secret_with_the_wrong_password_is_one_line_refused_credentials(moto_url: str, registry: str) -> None:
    ran = _plan(moto_url, registry, _secret(moto_url, "registry-bad", "wrong"))
    lines = ran.stderr.strip().splitlines()
    assert ran.returncode == 2 and len(lines) == 1 and "refused the credentials (HTTP 401)" in lines[0], ran.stderr
