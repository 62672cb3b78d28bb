"""Apply connector configs: validate every one with the worker first, then create/update all.

Nothing is half-applied on bad input: if the worker rejects any config, none is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import UsageError
from .rest import ConnectClient, ConnectorFailed, failure
from .sources import check_no_plaintext_secrets


@dataclass
class ApplyResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)


def validate_all(client: ConnectClient, configs: dict[str, dict[str, str]]) -> None:
    check_no_plaintext_secrets(configs)
    problems: list[str] = []
    for name, cfg in configs.items():
        for err in client.validate({**cfg, "name": name}):
            problems.append(f"{name}: {err}")
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError("", f"worker rejected connector config: {problems[0]}{more}; nothing was applied")


def apply(
    client: ConnectClient,
    configs: dict[str, dict[str, str]],
    wait: bool = True,
    timeout: float = 120.0,
    progress: Callable[[str], None] = lambda m: None,
) -> ApplyResult:
    progress(f"validating {len(configs)} connector config(s) with the worker")
    validate_all(client, configs)
    result = ApplyResult()
    existing = set(client.connectors())
    for name, cfg in configs.items():
        body = {k: v for k, v in cfg.items() if k != "name"}
        if name in existing:
            current = client.config(name) or {}
            current.pop("name", None)
            if current == body:
                result.unchanged.append(name)
                continue
            result.updated.append(name)
        else:
            result.created.append(name)
        progress(f"applying {name}")
        client.put_config(name, body)
    if wait:
        for name in configs:
            progress(f"waiting for {name} to be RUNNING")
            result.status[name] = client.wait_state(name, "RUNNING", timeout=timeout)
    else:
        result.status = {name: client.status(name) for name in configs}
    return result


def status_rows(client: ConnectClient, names: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for name in names or sorted(client.connectors()):
        st = client.status(name)
        tasks = st.get("tasks", [])
        rows.append(
            {
                "name": name,
                "type": st.get("type"),
                "state": st["connector"]["state"],
                "worker": st["connector"].get("worker_id"),
                "tasks": len(tasks),
                "tasks_running": sum(t["state"] == "RUNNING" for t in tasks),
                "tasks_failed": sum(t["state"] == "FAILED" for t in tasks),
                "failure": failure(st),
            }
        )
    return rows


__all__ = ["ApplyResult", "ConnectorFailed", "apply", "status_rows", "validate_all"]
