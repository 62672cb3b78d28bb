"""A registry behind mutual TLS: both registry clients (`msk-migrate schemas` and the validator's proof per record)
present the client certificate named by MSK_MIGRATE_<ROLE>_REGISTRY_CERT/_KEY and trust _CA; without it the TLS
handshake is refused and the failure is one line naming the registry (issue 31). The server is a real TLS server
(Python's ssl) that requires a client certificate of the test CA and answers the Confluent API's GET /subjects."""

from __future__ import annotations

import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from msk_migrate.errors import UnreachableError, UsageError
from msk_migrate.schemas.client import RegistryClient, env_tls
from msk_migrate.validation.schema_proof import RegistryClient as ProofClient
from tests.integration.pki import ThrowawayCA


class _Registry(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, code = (b"[]", 200) if self.path == "/subjects" else (json.dumps({"error_code": 40403}).encode(), 404)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def mtls_registry(tmp_path_factory) -> Iterator[dict]:
    base: Path = tmp_path_factory.mktemp("registry-mtls")
    ca = ThrowawayCA()
    server_cert, client_cert = ca.issue("localhost", server=True), ca.issue("msk-migrate-operator", server=False)
    files = {"ca": base / "ca.pem", "server_cert": base / "server.pem", "server_key": base / "server-key.pem",
             "cert": base / "client.pem", "key": base / "client-key.pem"}
    files["ca"].write_text(ca.pem)
    files["server_cert"].write_text(server_cert.cert_pem + ca.pem)
    files["server_key"].write_text(server_cert.key_pem)
    files["cert"].write_text(client_cert.cert_pem + ca.pem)
    files["key"].write_text(client_cert.key_pem)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(files["server_cert"]), str(files["server_key"]))
    ctx.load_verify_locations(str(files["ca"]))
    ctx.verify_mode = ssl.CERT_REQUIRED  # mutual TLS: no client certificate, no handshake
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"https://127.0.0.1:{server.server_address[1]}", **{k: str(v) for k, v in files.items()}}
    finally:
        server.shutdown()


def _env(monkeypatch, reg: dict, with_cert: bool) -> None:
    monkeypatch.setenv("MSK_MIGRATE_TARGET_REGISTRY_CA", reg["ca"])
    if with_cert:
        monkeypatch.setenv("MSK_MIGRATE_TARGET_REGISTRY_CERT", reg["cert"])
        monkeypatch.setenv("MSK_MIGRATE_TARGET_REGISTRY_KEY", reg["key"])
    else:
        monkeypatch.delenv("MSK_MIGRATE_TARGET_REGISTRY_CERT", raising=False)
        monkeypatch.delenv("MSK_MIGRATE_TARGET_REGISTRY_KEY", raising=False)


def test_both_registry_clients_present_the_client_certificate_and_are_answered(mtls_registry, monkeypatch) -> None:
    _env(monkeypatch, mtls_registry, with_cert=True)
    tls = env_tls("target")
    client = RegistryClient("target", mtls_registry["url"], "--target-registry", cert=tls.cert, verify=tls.verify)
    assert client.request("GET", "/subjects") == []
    assert ProofClient("target", mtls_registry["url"]).schema(1) is None  # the handshake passed; id 1 is unknown there


def test_without_the_client_certificate_both_clients_fail_in_one_line_naming_the_registry(mtls_registry, monkeypatch) -> None:
    _env(monkeypatch, mtls_registry, with_cert=False)
    tls = env_tls("target")
    with pytest.raises(UsageError) as err:
        RegistryClient("target", mtls_registry["url"], "--target-registry", cert=tls.cert, verify=tls.verify).request("GET", "/subjects")
    assert err.value.field == "--target-registry" and "TLS to the target registry" in str(err.value)
    with pytest.raises(UnreachableError) as unreachable:
        ProofClient("target", mtls_registry["url"]).schema(1)
    assert "target schema registry" in str(unreachable.value) and "\n" not in str(unreachable.value)


def test_a_certificate_without_its_key_is_refused_naming_the_missing_variable(monkeypatch, tmp_path) -> None:
    (tmp_path / "c.pem").write_text("x")
    monkeypatch.setenv("MSK_MIGRATE_SOURCE_REGISTRY_CERT", str(tmp_path / "c.pem"))
    monkeypatch.delenv("MSK_MIGRATE_SOURCE_REGISTRY_KEY", raising=False)
    with pytest.raises(UsageError) as err:
        env_tls("source")
    assert err.value.field == "MSK_MIGRATE_SOURCE_REGISTRY_KEY"
