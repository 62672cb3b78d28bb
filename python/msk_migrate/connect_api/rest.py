"""Kafka Connect REST client. Server errors surface with the worker's own message.

The worker's REST API requires HTTP basic auth (Kafka's BasicAuthSecurityRestExtension, see
:mod:`msk_migrate.connectors.worker_env`). Credentials, in this order: the ``auth`` argument (the CLI's
``--connect-secret-arn``), the environment (``MSK_MIGRATE_CONNECT_USER``/``MSK_MIGRATE_CONNECT_PASSWORD``),
then, for a worker on this machine only, the credentials the local harness generated for it
(``.local/connect-credentials/``, 0600, never committed). A private CA for an HTTPS worker:
``ca`` or ``MSK_MIGRATE_CONNECT_CA`` (path of a PEM bundle).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import requests

from ..access.secrets import username_password
from ..config.environ import CA_ENV, CONNECT_PASSWORD_ENV, CONNECT_USER_ENV, SECRET_ARN_ENV
from ..config.flow import Flow
from ..errors import UnreachableError, UsageError
from ..paths import LOCAL_DIR

USER_ENV = CONNECT_USER_ENV
PASSWORD_ENV = CONNECT_PASSWORD_ENV
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class RestCredentials:
    username: str
    password: str = field(repr=False)


def _local_credentials_file(url: str) -> Path | None:
    parts = urlsplit(url)
    if parts.hostname not in _LOCAL_HOSTS or not parts.port:
        return None
    return LOCAL_DIR / "connect-credentials" / f"{parts.port}.json"


def save_local_credentials(url: str, creds: RestCredentials) -> Path:
    """Record the credentials of a worker started on this machine (by the local harness)."""
    path = _local_credentials_file(url)
    if path is None:
        raise ValueError(f"{url} is not a worker on this machine")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"username": creds.username, "password": creds.password}, fh)
    tmp.replace(path)
    return path


def credentials_from_secret(arn: str) -> RestCredentials:
    """REST credentials from a Secrets Manager secret with JSON keys ``username`` and ``password``."""
    return RestCredentials(*username_password(arn, "--connect-secret-arn",
                                              f"grant secretsmanager:GetSecretValue on it, or export {USER_ENV} and {PASSWORD_ENV}",
                                              "REST credentials"))


def default_credentials(url: str, environ: dict[str, str] | None = None) -> RestCredentials | None:
    """Credentials from the environment, else those the local harness recorded for ``url``."""
    env = os.environ if environ is None else environ
    if env.get(USER_ENV) or env.get(PASSWORD_ENV):
        if not (env.get(USER_ENV) and env.get(PASSWORD_ENV)):
            raise UsageError(USER_ENV, f"set both {USER_ENV} and {PASSWORD_ENV}", "export the missing one")
        return RestCredentials(env[USER_ENV], env[PASSWORD_ENV])
    if env.get(SECRET_ARN_ENV):
        return credentials_from_secret(env[SECRET_ARN_ENV])
    path = _local_credentials_file(url)
    if path is not None and path.exists():
        data = json.loads(path.read_text())
        return RestCredentials(data["username"], data["password"])
    return None


def client_for(flow: Flow) -> ConnectClient:
    """The client of the flow's worker, with the flow's CA and REST credentials (``--connect-ca``,
    ``--connect-secret-arn``; else the environment's or the local harness's credentials)."""
    auth = credentials_from_secret(flow.connect_secret_arn) if flow.connect_secret_arn else None
    return ConnectClient(flow.require_connect(), auth=auth, ca=flow.connect_ca)


class WorkerUnreachable(UnreachableError):
    """The worker did not answer: refused, timed out, or the load balancer in front of it (the stack's ALB) had no
    worker to forward to (502/503/504 with a page of its own, not a Connect error). Exit 2, as every unreachable
    endpoint; ``url`` lets a caller look for why (:mod:`.worker_down`)."""

    def __init__(self, url: str, message: str, status: int | None = None):
        self.url = url
        self.status = status
        super().__init__(message)


#: Statuses with which a gateway says that nothing behind it answered.
_GATEWAY_STATUSES = (502, 503, 504)


def _gateway_page(status: int, body: str, content_type: str) -> str | None:
    """The gateway's own words when ``status`` comes from a load balancer rather than from Connect (whose errors
    are JSON ``{"error_code": ..., "message": ...}``), else None."""
    if status not in _GATEWAY_STATUSES:
        return None
    try:
        doc = json.loads(body) if body.strip() else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and ("message" in doc or "error_code" in doc):
        return None  # the worker's own answer (Connect sends 503 itself too, e.g. while its herder is not ready)
    if "html" in content_type.lower() or body.lstrip().startswith("<"):  # an ALB's page: its <title> says it
        title = re.search(r"<title>(.*?)</title>", body, re.IGNORECASE | re.DOTALL)
        body = title.group(1) if title else re.sub(r"<[^>]+>", " ", body)
    return " ".join(body.split())[:120] or str(status)


class ConnectRestError(Exception):
    """The worker answered with an error status; ``message`` is the worker's text."""

    exit_code = 2

    def __init__(self, status: int, message: str, path: str):
        self.status = status
        self.message = message
        super().__init__(f"Connect REST {status} on {path}: {message}")


#: Messages with which a worker refuses a request only for the time of a group rebalance
#: (DistributedHerder: RebalanceNeededException, "conflicting operation", stale configuration).
_REBALANCE_MARKERS = ("rebalance is expected", "rebalance in progress", "conflicting operation",
                      "stale configuration", "due to a rebalance")


def is_transient_rebalance(status: int, message: str) -> bool:
    """True when the worker answered 409/500 because its group is rebalancing: retrying is safe."""
    low = message.lower()
    return status in (409, 500, 503) and any(m in low for m in _REBALANCE_MARKERS)


class ConnectClient:
    def __init__(
        self,
        url: str,
        timeout: float = 30.0,
        auth: RestCredentials | Literal[False] | None = None,
        ca: str | None = None,
        rebalance_wait: float = 120.0,
    ):
        """``auth``: explicit credentials, None = :func:`default_credentials`, False = none at all.
        ``rebalance_wait``: how long a request refused because the group is rebalancing is retried
        (every request of this client is idempotent: PUT config, restart, pause, resume, DELETE)."""
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.rebalance_wait = rebalance_wait
        self.session = requests.Session()
        #: passed per request: a Session's own ``verify`` loses to REQUESTS_CA_BUNDLE (requests issue #3829)
        self.verify: str | bool = True
        creds = default_credentials(self.url) if auth is None else auth
        if creds:
            self.session.auth = (creds.username, creds.password)
        ca = ca or os.environ.get(CA_ENV)
        if ca:
            if not Path(ca).is_file():
                raise UsageError("--connect-ca", f"{ca} is not a file", "pass the PEM CA bundle of the worker's certificate")
            self.verify = ca

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        deadline = time.monotonic() + self.rebalance_wait
        delay = min(0.5, self.rebalance_wait / 8)  # a short wait still gets a few tries
        while True:
            try:
                return self._call_once(method, path, **kw)
            except ConnectRestError as exc:
                if not is_transient_rebalance(exc.status, exc.message) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 8.0)

    def _call_once(self, method: str, path: str, **kw: Any) -> Any:
        try:
            r = self.session.request(method, self.url + path, timeout=self.timeout, verify=self.verify, **kw)
        except requests.exceptions.SSLError as exc:
            reason = str(exc.args[0] if exc.args else exc)
            reason = reason[reason.find("SSL"):][:160] if "SSL" in reason else reason[:160]
            raise UsageError("--connect-ca", f"TLS with the Connect worker at {self.url} failed: {reason}",
                             f"pass the worker's CA bundle (PEM) with --connect-ca or {CA_ENV}") from None
        except requests.ConnectionError as exc:
            raise WorkerUnreachable(self.url, f"Connect REST at {self.url} unreachable: {exc.__class__.__name__}: "
                                    f"{str(exc.args[0] if exc.args else exc)[:200]}") from None
        except requests.Timeout:
            raise WorkerUnreachable(self.url, f"Connect REST at {self.url} did not answer within {self.timeout:.0f}s") from None
        page = _gateway_page(r.status_code, r.text, r.headers.get("Content-Type", ""))
        if page is not None:
            raise WorkerUnreachable(self.url, f"Connect REST at {self.url} unreachable: the load balancer answered "
                                    f"{r.status_code} ({page}): no worker behind it answers", r.status_code)
        if r.status_code == 401:
            raise ConnectRestError(401, "authentication required or refused by the worker "
                                   f"(set {USER_ENV}/{PASSWORD_ENV} or --connect-secret-arn)", path)
        if r.status_code >= 400:
            try:
                msg = r.json().get("message") or r.text
            except ValueError:
                msg = r.text
            raise ConnectRestError(r.status_code, (msg or "").strip(), path)
        if r.status_code == 204 or not r.content:
            return None
        return r.json()

    # -- read --------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        return self._call("GET", "/")

    def connectors(self) -> list[str]:
        return self._call("GET", "/connectors")

    def config(self, name: str) -> dict[str, str] | None:
        try:
            return self._call("GET", f"/connectors/{quote(name)}/config")
        except ConnectRestError as exc:
            if exc.status == 404:
                return None
            raise

    def status(self, name: str) -> dict[str, Any]:
        return self._call("GET", f"/connectors/{quote(name)}/status")

    def plugins(self) -> list[dict[str, Any]]:
        return self._call("GET", "/connector-plugins")

    def task_configs(self, name: str) -> dict[int, dict[str, str]]:
        """Task id -> the task's configuration as the connector generated it (``GET /connectors/NAME/tasks``;
        config provider variables stay unresolved there: Connect writes task configs back with them)."""
        return {int(t["id"]["task"]): dict(t.get("config") or {}) for t in self._call("GET", f"/connectors/{quote(name)}/tasks")}

    # -- validate / write ----------------------------------------------------------------------
    def validate(self, config: dict[str, str]) -> list[str]:
        """Errors the worker reports for ``config`` (empty = valid), as 'key: message' strings."""
        cls = config["connector.class"].rsplit(".", 1)[-1]
        result = self._call("PUT", f"/connector-plugins/{quote(cls)}/config/validate", json=config)
        errors = []
        for item in result.get("configs", []):
            value = item.get("value", {})
            for msg in value.get("errors", []):
                errors.append(f"{value.get('name')}: {msg}")
        return errors

    def put_config(self, name: str, config: dict[str, str]) -> dict[str, Any]:
        return self._call("PUT", f"/connectors/{quote(name)}/config", json=config)

    def restart(self, name: str, only_failed: bool = True) -> Any:
        q = f"?includeTasks=true&onlyFailed={'true' if only_failed else 'false'}"
        return self._call("POST", f"/connectors/{quote(name)}/restart{q}")

    def pause(self, name: str) -> None:
        self._call("PUT", f"/connectors/{quote(name)}/pause")

    def resume(self, name: str) -> None:
        self._call("PUT", f"/connectors/{quote(name)}/resume")

    def delete(self, name: str) -> None:
        self._call("DELETE", f"/connectors/{quote(name)}")

    # -- offsets and lifecycle (Kafka >= 3.7 workers: KIP-875 offsets API, KIP-980 initial state) -------
    def offsets(self, name: str) -> list[dict[str, Any]]:
        """The connector's committed source offsets: ``[{"partition": {...}, "offset": {...}}, ...]``."""
        return (self._call("GET", f"/connectors/{quote(name)}/offsets") or {}).get("offsets", [])

    def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> Any:
        """Set source offsets of a STOPPED connector."""
        return self._call("PATCH", f"/connectors/{quote(name)}/offsets", json={"offsets": offsets})

    def create_stopped(self, name: str, config: dict[str, str]) -> Any:
        """Create a connector in the STOPPED state (its offsets can be set before it runs)."""
        return self._call("POST", "/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})

    def stop(self, name: str) -> None:
        self._call("PUT", f"/connectors/{quote(name)}/stop")

    # -- waiting ------------------------------------------------------------------------------
    def wait_state(self, name: str, want: str = "RUNNING", timeout: float = 120.0, min_tasks: int = 0) -> dict[str, Any]:
        """Wait until the connector and all its tasks are in ``want``.

        A FAILED task ends the wait at once with the task's trace (first line) as the error.
        ``min_tasks`` defaults to 0: MM2's checkpoint connector has no task until a group matches.
        """
        deadline = time.time() + timeout
        last: dict[str, Any] = {}
        while time.time() < deadline:
            try:
                last = self.status(name)
            except ConnectRestError as exc:
                if exc.status != 404:
                    raise
                time.sleep(1)
                continue
            failed = failure(last)
            if failed and want != "FAILED":
                raise ConnectorFailed(name, failed)
            tasks = last.get("tasks", [])
            if last["connector"]["state"] == want and len(tasks) >= min_tasks and all(t["state"] == want for t in tasks):
                return last
            time.sleep(1)
        raise TimeoutError(f"{name}: not {want} after {timeout:.0f}s (last status: {summarize(last)})")


class ConnectorFailed(Exception):
    exit_code = 1

    def __init__(self, name: str, cause: str):
        self.name = name
        self.cause = cause
        super().__init__(f"{name} FAILED: {cause}")


def failure(status: dict[str, Any]) -> str | None:
    """First line(s) of the trace of the connector or its first failed task, or None."""
    parts = [("connector", status.get("connector", {}))] + [(f"task {t.get('id')}", t) for t in status.get("tasks", [])]
    for label, part in parts:
        if part.get("state") == "FAILED":
            trace = (part.get("trace") or "").strip().splitlines()
            caused = [ln.strip() for ln in trace if ln.strip().startswith("Caused by:")]
            head = trace[0] if trace else "no trace"
            return f"{label}: {head}" + (f" | {caused[-1]}" if caused else "")
    return None


def summarize(status: dict[str, Any]) -> str:
    if not status:
        return "unknown"
    tasks = ",".join(f"{t['id']}={t['state']}" for t in status.get("tasks", []))
    return f"connector={status.get('connector', {}).get('state')} tasks=[{tasks}]"


# ---- is this the flow's worker? ---------------------------------------------------------------------
MM2_CONNECTOR_PREFIX = "org.apache.kafka.connect.mirror."


@dataclass(frozen=True)
class FlowIdentity:
    """What a worker must run for an operator command to act through it: this migration's connectors
    (forward ``<name>-*`` and reverse ``<name>-reverse-*``) between this flow's clusters."""

    migration: str
    source_bootstrap: str
    target_bootstrap: str | None
    target_cluster_id: str | None = None


def _same_servers(a: str | None, b: str | None) -> bool:
    norm = lambda v: sorted(p.strip().lower() for p in (v or "").split(",") if p.strip())  # noqa: E731
    return norm(a) == norm(b)


def check_worker(client: ConnectClient, flow: FlowIdentity, creating: bool = False) -> dict[str, Any]:
    """Refuse (exit 2, naming both sides) a worker that runs another migration's MirrorMaker connectors,
    or this migration's between other clusters, or whose own Kafka cluster is not the flow's target.
    A worker without any MM2 connector (before the first apply) passes. Returns what was found (for
    ``talked_to``): the worker's Kafka cluster id and its MM2 connectors. ``creating`` (``connectors apply``, ``cleanup``):
    a worker shared with other migrations may hold none of this one's connectors."""
    ours = (f"{flow.migration}-",)
    mm2: dict[str, dict[str, str]] = {}
    for name in client.connectors():
        cfg = client.config(name) or {}
        if str(cfg.get("connector.class", "")).startswith(MM2_CONNECTOR_PREFIX):
            mm2[name] = cfg
    mine = {n: c for n, c in mm2.items() if n.startswith(ours) and n[len(flow.migration) + 1:] in _ROLES}
    if mm2 and not mine and not creating:
        others = ", ".join(sorted(mm2)[:4])
        raise UsageError("--connect-url", f"worker {client.url} runs another migration's connectors ({others}), "
                         f"none of migration {flow.migration!r}",
                         "point --connect-url (or MSK_MIGRATE_CONNECT_URL) at this environment's worker")
    for name, cfg in sorted(mine.items()):
        reverse = name[len(flow.migration) + 1:].startswith("reverse-")
        want_src, want_tgt = ((flow.target_bootstrap, flow.source_bootstrap) if reverse
                              else (flow.source_bootstrap, flow.target_bootstrap))
        got_src, got_tgt = cfg.get("source.cluster.bootstrap.servers"), cfg.get("target.cluster.bootstrap.servers")
        for side, want, got in (("source", want_src, got_src), ("target", want_tgt, got_tgt)):
            if want is not None and not _same_servers(want, got):
                raise UsageError("--connect-url", f"worker {client.url} runs {name} with {side} {got}, "
                                 f"this flow's {side} is {want}",
                                 "point --connect-url at this environment's worker, or check --env/--target-bootstrap")
    info = client.info() or {}
    worker_cluster = info.get("kafka_cluster_id")
    if flow.target_cluster_id and worker_cluster and worker_cluster != flow.target_cluster_id:
        raise UsageError("--connect-url", f"worker {client.url} keeps its state on Kafka cluster {worker_cluster}, "
                         f"not on this flow's target {flow.target_cluster_id} ({flow.target_bootstrap})",
                         "point --connect-url (or MSK_MIGRATE_CONNECT_URL) at this environment's worker")
    return {"url": client.url, "kafka_cluster_id": worker_cluster, "connectors": sorted(mine)}


def configs_of_flow(configs: dict[str, dict[str, str]], migration: str, source: str, target: str | None) -> None:
    """Connector configs (from S3 or a directory) applied with ``--env``: each must be this migration's
    and connect this flow's clusters, else exit 2 naming both sides (nothing applied)."""
    for name, cfg in sorted(configs.items()):
        if not (name.startswith(f"{migration}-") and name[len(migration) + 1:] in _ROLES):
            raise UsageError("--from-s3/--from-dir", f"connector {name} is not one of migration {migration!r}'s",
                             "give the configs this environment's stack uploaded (stack output connector_config_s3_uris)")
        reverse = name[len(migration) + 1:].startswith("reverse-")
        want = {"source": target if reverse else source, "target": source if reverse else target}
        for side, value in want.items():
            got = cfg.get(f"{side}.cluster.bootstrap.servers")
            if value is not None and not _same_servers(value, got):
                raise UsageError("--from-s3/--from-dir", f"connector {name} has {side} {got}, this flow's {side} is {value}",
                                 "give the configs this environment's stack uploaded, or check --env/--target-bootstrap")


#: Connector name suffixes of a migration (forward and reverse).
_ROLES = frozenset({"source", "checkpoint", "heartbeat", "reverse-source", "reverse-checkpoint"})


def verify_worker(flow: Any, client: ConnectClient, creating: bool = False) -> None:
    """Refuse (exit 2) a worker that runs another migration's connectors or this migration's between
    other clusters (:func:`check_worker`); records what was found in ``flow.found``."""
    flow.found = flow.found.with_worker(check_worker(client, FlowIdentity(
        flow.migration.name, flow.source.bootstrap_servers, flow.target.bootstrap_servers if flow.target else None,
        flow.found.target_cluster_id), creating))
