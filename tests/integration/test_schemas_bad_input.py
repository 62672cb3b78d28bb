"""`msk-migrate schemas` bad input: one line naming the option, exit 2, nothing written — an unreachable
registry, a URL without scheme, a server answering 401 (refused credentials), a server that offers no way to
keep ids, a target that cannot hold a Protobuf subject of the source, and --local without registries."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
import requests

from msk_migrate.local.procs import free_port
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (the fixture)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    return lines[0]


class _Refusing(http.server.BaseHTTPRequestHandler):
    """An HTTP endpoint that refuses every request's credentials, as an authenticating registry does."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="registry"')
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1: a static file server (no registry API) or, with param "401", one
    refusing credentials."""
    if getattr(request, "param", None) == "401":
        handler: type = _Refusing
    else:
        (tmp_path / "subjects").write_text("[]")

        class Static(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a: object, **kw: object) -> None:
                super().__init__(*a, directory=str(tmp_path), **kw)  # type: ignore[arg-type]

            def log_message(self, *args: object) -> None:
                pass

        handler = Static
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_unreachable_registry_is_one_line_naming_its_option() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    line = one_line(cli("plan", "--source-registry", dead, "--target-registry", dead))
    assert line.startswith("error: --source-registry:") and "unreachable" in line


def test_a_registry_url_without_scheme_is_refused_before_any_call() -> None:
    line = one_line(cli("copy", "--source-registry", "http://127.0.0.1:1", "--target-registry", "registry.example:8081"))
    assert "--target-registry" in line and "scheme" in line


@pytest.mark.parametrize("server", ["401"], indirect=True)
def test_refused_credentials_name_the_registry_and_the_variables_to_set(server: str) -> None:
    line = one_line(cli("verify", "--source-registry", server, "--target-registry", server))
    assert "--source-registry" in line and "HTTP 401" in line and "MSK_MIGRATE_SOURCE_REGISTRY_USER" in line


def test_a_target_that_cannot_keep_ids_is_refused_before_anything_is_read_or_written(server: str) -> None:
    line = one_line(cli("copy", "--source-registry", server, "--target-registry", server))
    assert "--target-registry" in line and "no way to keep schema ids" in line


def test_local_without_registries_says_how_to_start_them(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text("{}")
    line = one_line(cli("plan", "--local", "--local-dir", str(tmp_path)))
    assert "--local" in line and "--schema-registry" in line


def test_the_registries_of_a_flow_file_are_named_by_its_section_when_unreachable(tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("source: {alias: source, bootstrap_servers: '127.0.0.1:9092'}\n"
                    "target: {alias: target, bootstrap_servers: '127.0.0.1:9093'}\n"
                    f"schema_registry: {{source: 'http://127.0.0.1:{free_port()}', target: 'http://127.0.0.1:{free_port()}'}}\n")
    line = one_line(cli("verify", "--config", str(flow)))
    assert "--config (schema_registry.source)" in line and "unreachable" in line


def test_a_malformed_topic_rename_is_one_line_naming_it_before_any_registry_is_asked(tmp_path: Path) -> None:
    """The registries' ports are closed: the rename is refused first, or the line would say "unreachable"."""
    flow = tmp_path / "flow.yaml"
    flow.write_text(f"schema_registry: {{source: 'http://127.0.0.1:{free_port()}', target: 'http://127.0.0.1:{free_port()}'}}\n"
                    "migration: {topic_renames: {'orders': 'bad name!'}}\n")
    line = one_line(cli("copy", "--config", str(flow)))
    assert "migration.topic_renames" in line and "'bad name!' is not a legal Kafka topic name" in line, line


class _AvroOnly(http.server.BaseHTTPRequestHandler):
    """A Confluent-API registry that keeps ids (IMPORT mode) and holds Avro and JSON Schema only, as a Confluent
    Schema Registry without its Protobuf provider answers; every write it receives is recorded (none may come)."""

    writes: ClassVar[list[str]] = []
    answers: ClassVar[dict[str, object]] = {"/mode": {"mode": "READWRITE"}, "/schemas/types": ["AVRO", "JSON"], "/subjects": [], "/config": {}}

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/") or "/"
        body = self.answers.get(path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.end_headers()
        self.wfile.write(json.dumps(body if body is not None else {"error_code": 40401, "message": "not found"}).encode())

    def _write(self) -> None:
        type(self).writes.append(f"{self.command} {self.path}")
        self.send_response(500)
        self.end_headers()

    do_POST = do_PUT = do_DELETE = _write

    def log_message(self, *args: object) -> None:
        pass


def test_a_target_that_cannot_hold_protobuf_is_refused_by_subject_before_anything_is_written(registry_pair) -> None:  # noqa: F811
    source = registry_pair[0].ccompat_url
    subject = f"pb-held{uuid.uuid4().hex[:8]}-value"
    schema = 'syntax = "proto3";\npackage held;\n\nmessage Order {\n  string id = 1;\n}\n'
    r = requests.post(f"{source}/subjects/{subject}/versions", json={"schema": schema, "schemaType": "PROTOBUF"},
                      headers={"Content-Type": "application/vnd.schemaregistry.v1+json"}, timeout=10)
    assert r.status_code == 200, r.text
    _AvroOnly.writes = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AvroOnly)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        target = f"http://127.0.0.1:{httpd.server_address[1]}"
        line = one_line(cli("copy", "--source-registry", source, "--target-registry", target, "--subject", subject))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert line.startswith("error: --target-registry:") and "cannot keep PROTOBUF" in line and subject in line, line
    assert _AvroOnly.writes == []  # refused before the first write reached the target
