"""Kafka Connect REST client. Server errors surface with the worker's own message."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import requests

from ..errors import UnreachableError


class ConnectRestError(Exception):
    """The worker answered with an error status; ``message`` is the worker's text."""

    exit_code = 2

    def __init__(self, status: int, message: str, path: str):
        self.status = status
        self.message = message
        super().__init__(f"Connect REST {status} on {path}: {message}")


class ConnectClient:
    def __init__(self, url: str, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            r = self.session.request(method, self.url + path, timeout=self.timeout, **kw)
        except requests.ConnectionError as exc:
            raise UnreachableError(f"Connect REST at {self.url} unreachable: {exc.__class__.__name__}: "
                                   f"{str(exc.args[0] if exc.args else exc)[:200]}") from None
        except requests.Timeout:
            raise UnreachableError(f"Connect REST at {self.url} did not answer within {self.timeout:.0f}s") from None
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
