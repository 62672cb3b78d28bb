"""No connector name, PATCH, client override or logger change reaches a secret (issue 42, part 3), tried the way a
REST user with the runbook's login would, on real workers of both Connect versions the project runs (3.9 and 4.1:
one extension jar, javax and jakarta JAX-RS).

Each worker is the product's (images/kafka-connect/entrypoint.sh with the rendered worker.properties) joined to the
session's target cluster, with a SCRAM source declared: MM2_SOURCE_SASL_PASSWORD is an allowed variable of its env
provider and is in its environment, as on a deployed worker. Requests are sent as raw HTTP, so a percent-encoded
path reaches the server exactly as written. Every refusal is asserted with its status and message, the audit line
that says refused, no connector created, and the secret in none of the worker's files."""

from __future__ import annotations

import base64
import http.client
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from msk_migrate import versions
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec
from msk_migrate.connectors.render import render_connectors, render_reverse_connectors
from msk_migrate.connectors.worker_env import ENV_WORKER_PROPERTIES, worker_environment
from msk_migrate.local.connect_worker import LOCAL_REST, local_rest_credentials, local_worker_spec, start_connect_worker, wait_connect_ready
from msk_migrate.local.procs import stop

RUN = uuid.uuid4().hex[:6]
SECRET = f"pw{uuid.uuid4().hex}"  # distinctive: any occurrence in a file is this test's secret
VARIABLE = "${env:MM2_SOURCE_SASL_PASSWORD}"
ENCODED = "%24%7Benv%3AMM2_SOURCE_SASL_PASSWORD%7D"  # the path segment
DOUBLE = "%2524%257Benv%253AMM2_SOURCE_SASL_PASSWORD%257D"  # decoded once: still no valid name
AUDIT_LOGGER = "io.mskmigrate.connect.pinning.audit"
PATH_NAME = "the connector name in the path has characters outside [A-Za-z0-9._-]"
VERSIONS = {"3.9": versions.kafka_version(), "4.1": versions.kafka_target_version()}


class Worker:
    """A started worker: raw HTTP with the machine login, and its directory (log, config)."""

    def __init__(self, kafka: str, port: int, base: Path, user: str, password: str, source: ClusterEndpoint, target: ClusterEndpoint):
        self.kafka, self.port, self.base, self.user, self.source, self.target = kafka, port, base, user, source, target
        self._auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Authorization": self._auth, "Content-Type": "application/json",
                                                           "Accept": "application/json"})
            resp = conn.getresponse()
            text = resp.read().decode(errors="replace")
        finally:
            conn.close()
        try:
            return resp.status, json.loads(text) if text else None
        except ValueError:
            return resp.status, text

    def files_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.base.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000)

    def connectors(self) -> list[str]:
        status, names = self.call("GET", "/connectors")
        assert status == 200, names
        return names


def _started(local_env, base: Path, kafka: str, tag: str, admin_on_rest_listener: bool = False):
    """A product worker of Connect ``kafka``; with ``admin_on_rest_listener``, Kafka's default admin posture instead of
    the rendered ``admin.listeners=`` (the admin endpoints on the REST listener), to reach the gate's own logger check."""
    source = ClusterEndpoint(alias="source", bootstrap_servers="127.0.0.1:19096", auth=AuthConfig(mode="scram", secrets_from="env"))
    spec = local_worker_spec(group_id=f"{tag}-{kafka.replace('.', '')}-{RUN}")
    extra: dict[str, str] = {}
    if admin_on_rest_listener:
        env = worker_environment(local_env.target(), spec, source, rest=LOCAL_REST, config_dir=str(base / "connect" / "config"))
        lines = env[ENV_WORKER_PROPERTIES].split("\\n")
        assert "admin.listeners=" in lines, "the rendering disables the admin endpoints"
        extra[ENV_WORKER_PROPERTIES] = "\\n".join(ln for ln in lines if ln != "admin.listeners=")
    rec = start_connect_worker(local_env.target(), base / "connect", spec, kafka_version=VERSIONS[kafka], name=f"connect-{tag}-{kafka}-{RUN}",
                               source=source, secret_env={"MM2_SOURCE_SASL_USERNAME": "mm2", "MM2_SOURCE_SASL_PASSWORD": SECRET},
                               extra_env=extra)
    creds = local_rest_credentials(base / "connect")
    try:
        wait_connect_ready(rec, f"http://127.0.0.1:{spec.rest_port}", timeout=300)
    except BaseException:
        stop(rec)
        raise
    return rec, Worker(kafka, spec.rest_port, base, creds.username, creds.password, source, local_env.target())


@pytest.fixture(scope="module", params=sorted(VERSIONS))
def worker(request, local_env, tmp_path_factory):
    rec, w = _started(local_env, tmp_path_factory.mktemp(f"rest-routes-{request.param}"), request.param, "routes")
    try:
        yield w
    finally:
        stop(rec)


def _source_config(w: Worker, **changes: Any) -> dict[str, Any]:
    configs = render_connectors(w.source, w.target, MigrationSpec(name=f"routes{RUN}", topics=[f"routes{RUN}-.*"]))
    (src,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorSourceConnector")]
    out: dict[str, Any] = {k: v for k, v in src.items() if k != "name"}
    out.update(changes)
    return out


def _refused(w: Worker, method: str, path: str, body: Any, status: int, starts: str) -> None:
    got, answer = w.call(method, path, body)
    message = answer.get("message", "") if isinstance(answer, dict) else str(answer)
    assert (got, message[: len(starts)]) == (status, starts), (method, path, got, answer)
    assert "MM2_SOURCE" not in message and SECRET not in message, "a refusal never quotes the value"


def _audited_refusals(w: Worker, marker: str) -> list[str]:
    return [ln for ln in w.files_text().splitlines() if "REST audit: user=" + w.user in ln and "-> refused" in ln and marker in ln]


def test_a_connector_name_outside_the_charset_is_refused_on_every_route(worker):
    w = worker
    cfg = _source_config(w)
    # The route: the pinned config PUT under a name that is a provider variable, encoded once or twice.
    for segment in (ENCODED, DOUBLE):
        for method, suffix, body in (("PUT", "/config", cfg), ("PATCH", "/config", {"tasks.max": "1"}), ("DELETE", "", None),
                                     ("POST", "/restart", None), ("PUT", "/pause", None), ("PUT", "/resume", None),
                                     ("PUT", "/stop", None), ("POST", "/tasks/0/restart", None), ("DELETE", "/offsets", None),
                                     ("GET", "/status", None)):
            if segment == DOUBLE and w.kafka == "4.1":
                # Jetty 12 refuses an encoded '%' in a path itself (ambiguous encoding): no resource, no filter runs.
                status, answer = w.call(method, f"/connectors/{segment}{suffix}", body)
                assert status == 400 and (answer is None or "Ambiguous URI path encoding" in answer), (method, suffix, answer)
                continue
            _refused(w, method, f"/connectors/{segment}{suffix}", body, 400, PATH_NAME)
    # The body's names: POST's name, its config's name, a PUT config's name that differs from the path's.
    _refused(w, "POST", "/connectors", {"name": VARIABLE, "config": cfg}, 400, "'name' has characters outside [A-Za-z0-9._-]")
    _refused(w, "POST", "/connectors", {"name": f"ok-{RUN}", "config": {**cfg, "name": VARIABLE}}, 400, "'config.name' differs from the body's 'name'")
    _refused(w, "PUT", f"/connectors/ok-{RUN}/config", {**cfg, "name": VARIABLE}, 400, f"'name' differs from the connector name ok-{RUN} in the path")
    _refused(w, "PUT", "/connector-plugins/MirrorSourceConnector/config/validate", {**cfg, "name": VARIABLE}, 400, "'name' has characters outside")
    assert w.connectors() == []
    # The audit line names the refusal, with the path as sent (encoded) rather than the variable.
    assert _audited_refusals(w, f"PUT /connectors/{ENCODED}/config -> refused: {PATH_NAME}")
    assert _audited_refusals(w, f"DELETE /connectors/{DOUBLE if w.kafka == '3.9' else ENCODED} -> refused: {PATH_NAME}")
    # The same config under a valid name is the migration's own: created (so the refusals above were the names').
    name = f"route-ok-{RUN}"
    status, answer = w.call("PUT", f"/connectors/{name}/config", cfg)
    assert status == 201, answer
    assert w.call("DELETE", f"/connectors/{name}")[0] == 204
    assert SECRET not in w.files_text(), "the source password reached a file of the worker"


def test_a_patch_is_checked_on_the_config_the_worker_would_hold(worker):
    w = worker
    name = f"patch-{RUN}"
    status, answer = w.call("PUT", f"/connectors/{name}/config", _source_config(w))
    assert status == 201, answer
    try:
        # Each patch alone is a pinned setting (or a removal); merged with the stored config it is not.
        _refused(w, "PATCH", f"/connectors/{name}/config", {"producer.override.bootstrap.servers": w.source.bootstrap_servers}, 400,
                 "'producer.override.sasl.jaas.config' is missing: an override that names the source cluster must carry all its pinned settings")
        _refused(w, "PATCH", f"/connectors/{name}/config", {"source.cluster.bootstrap.servers": None}, 400,
                 "'source.cluster.bootstrap.servers' is missing: cluster settings under source.cluster.*")
        _refused(w, "PATCH", f"/connectors/{name}/config", {"name": VARIABLE}, 400,
                 f"'name' after the PATCH would differ from the connector name {name} in the path")
        _refused(w, "PATCH", f"/connectors/{name}/config", {"topics": VARIABLE}, 400, "'topics' names a config provider variable")
        _refused(w, "PATCH", f"/connectors/nothing-{RUN}/config", {"tasks.max": "2"}, 404, f"connector nothing-{RUN} not found")
        # A patch whose merged result is the migration's own goes through, and only it changed the config.
        status, answer = w.call("PATCH", f"/connectors/{name}/config", {"tasks.max": "2"})
        assert status == 200, answer
        status, stored = w.call("GET", f"/connectors/{name}/config")
        assert status == 200 and stored["tasks.max"] == "2" and "producer.override.bootstrap.servers" not in stored, stored
        assert stored["source.cluster.bootstrap.servers"] == w.source.bootstrap_servers and stored["name"] == name
        assert len(_audited_refusals(w, f"PATCH /connectors/{name}/config")) == 4
    finally:
        w.call("DELETE", f"/connectors/{name}")
    assert SECRET not in w.files_text()


def test_a_client_override_naming_a_pinned_cluster_must_carry_its_whole_security(worker):
    w = worker
    src = w.source.bootstrap_servers
    name = f"override-{RUN}"
    # The bootstrap alone: the framework producer would log in to the source with the worker's (target's) JAAS entry.
    pinned = _source_config(w)
    alone = _source_config(w, **{"producer.override.bootstrap.servers": src})
    # The source's own protocol and mechanism, but not its JAAS entry: the worker's consumer login would apply.
    partial = _source_config(w, **{"consumer.override.bootstrap.servers": src,
                                   "consumer.override.security.protocol": pinned["source.cluster.security.protocol"],
                                   "consumer.override.sasl.mechanism": pinned["source.cluster.sasl.mechanism"]})
    for cfg, key in ((alone, "producer.override.sasl.jaas.config"), (partial, "consumer.override.sasl.jaas.config")):
        starts = f"'{key}' is missing: an override that names the source cluster must carry all its pinned settings"
        _refused(w, "PUT", f"/connectors/{name}/config", cfg, 400, starts)
        _refused(w, "POST", "/connectors", {"name": name, "config": cfg}, 400, starts)
        _refused(w, "PUT", "/connector-plugins/MirrorSourceConnector/config/validate", cfg, 400, starts)
    assert name not in w.connectors()
    # The reverse flow's producer (render.reverse_producer: the source's whole security) is still accepted.
    m = MigrationSpec(name=f"routes{RUN}", topics=[f"routes{RUN}-a"])
    for cfg in render_reverse_connectors(w.source, w.target, m, None).values():
        status, answer = w.call("PUT", f"/connector-plugins/{cfg['connector.class'].rsplit('.', 1)[1]}/config/validate", cfg)
        assert status == 200 and answer["error_count"] == 0, answer
    assert SECRET not in w.files_text()


def test_a_rest_user_cannot_switch_the_audit_logger_off(worker):
    w = worker
    # The worker serves no admin endpoint (admin.listeners=): every logger route is unknown, whatever its scope.
    for logger in (AUDIT_LOGGER, "io.mskmigrate", "root"):
        for query in ("", "?scope=cluster"):
            status, answer = w.call("PUT", f"/admin/loggers/{logger}{query}", {"level": "OFF"})
            assert status == 404, (logger, query, status, answer)
    assert w.call("GET", "/admin/loggers")[0] == 404
    # ...and the audit logger still writes: a refusal sent after the attempts is in the log.
    probe = f"after-loggers-{RUN}"
    _refused(w, "PUT", f"/connectors/{probe}/config", _source_config(w, **{"topics": VARIABLE}), 400, "'topics' names a config provider variable")
    assert len(_audited_refusals(w, f"PUT /connectors/{probe}/config")) == 1
    assert SECRET not in w.files_text()


@pytest.mark.parametrize("kafka", sorted(VERSIONS))
def test_with_admin_endpoints_on_the_rest_listener_the_gate_still_pins_the_audit_logger(kafka, local_env, tmp_path):
    """Behind the rendered admin.listeners=: were the endpoints on the REST listener (Kafka's default), a level change
    that reaches the audit logger is refused by the gate, on the route Jersey matched; other loggers still change."""
    rec, w = _started(local_env, tmp_path, kafka, "admin", admin_on_rest_listener=True)
    try:
        for logger in (AUDIT_LOGGER, "io.mskmigrate.connect", "io.msk", "root"):
            for query in ("", "?scope=cluster"):
                _refused(w, "PUT", f"/admin/loggers/{logger}{query}", {"level": "OFF"}, 403,
                         f"the logger '{logger}' covers the REST audit logger {AUDIT_LOGGER}, whose level this worker pins")
        # Another logger passes the gate to Kafka's LoggingResource (whose own answer on the harness's 4.1 is a 500).
        status, answer = w.call("PUT", "/admin/loggers/org.apache.kafka.connect.mirror", {"level": "DEBUG"})
        assert status != 403, answer
        assert [ln for ln in w.files_text().splitlines()
                if f"user={w.user} PUT /admin/loggers/org.apache.kafka.connect.mirror -> forwarded" in ln]
        probe = f"after-admin-{RUN}"
        _refused(w, "PUT", f"/connectors/{probe}/config", {"topics": VARIABLE}, 400, "'topics' names a config provider variable")
        assert len(_audited_refusals(w, f"PUT /connectors/{probe}/config")) == 1
        assert len(_audited_refusals(w, f"PUT /admin/loggers/{AUDIT_LOGGER}")) == 2
    finally:
        stop(rec)
    assert SECRET not in w.files_text()
