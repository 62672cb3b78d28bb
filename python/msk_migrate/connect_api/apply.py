"""Apply connector configs: validate every one with the worker first, then create/update all.

Nothing is half-applied on bad input: if the worker rejects any config, none is written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..kafka.names import CHECKPOINT_CONNECTOR_CLASS, MIRROR_PACKAGE, SOURCE_CONNECTOR_CLASS, checkpoints_topic, connector_namespace
from ..kafka.selection import NameFilter
from ..outcome import quiet
from ..topology.marks import marked
from .rest import ConnectClient, ConnectorFailed, ConnectRestError, failure
from .sources import check_no_plaintext_secrets


@dataclass
class ApplyResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)


def _exact_names(value: str) -> list[str]:
    """Entries of an MM2 ``topics`` list that name exactly one topic (escaped literal names)."""
    out = []
    for entry in filter(None, (e.strip() for e in value.split(","))):
        name = re.sub(r"\\(.)", r"\1", entry)
        if re.fullmatch(r"[A-Za-z0-9._-]+", name) and re.fullmatch(entry, name):
            out.append(name)
    return out


def _filter(cfg: dict[str, str]) -> NameFilter:
    split = lambda v: tuple(filter(None, (e.strip() for e in (v or "").split(","))))  # noqa: E731
    return NameFilter(split(cfg.get("topics", ".*")), split(cfg.get("topics.exclude")))


def check_no_loop(client: ConnectClient, configs: dict[str, dict[str, str]]) -> None:
    """Refuse a MirrorSourceConnector whose topics a connector of the opposite direction replicates -- a live one
    on the worker or another one of the same apply -- unless both mark their copies (``migration.mark_copies``:
    each skips what the other brought in, docs/active-active.md). Without marks identity topic names cannot
    detect the cycle: records would loop between the clusters."""
    new = {n: c for n, c in configs.items() if c.get("connector.class") == SOURCE_CONNECTOR_CLASS}
    if not new:
        return
    live = {}
    for name in client.connectors():
        if name in configs:
            continue
        cfg = client.config(name) or {}
        if cfg.get("connector.class") == SOURCE_CONNECTOR_CLASS:
            live[name] = cfg
    pairs = [(n, c, o, oc) for n, c in new.items() for o, oc in live.items()]
    names = sorted(new)
    pairs += [(a, new[a], b, new[b]) for i, a in enumerate(names) for b in names[i + 1:]]
    for name, cfg, other, ocfg in pairs:
        if (ocfg.get("source.cluster.alias"), ocfg.get("target.cluster.alias")) != (
                cfg.get("target.cluster.alias"), cfg.get("source.cluster.alias")):
            continue
        if marked(cfg) and marked(ocfg):
            continue  # both skip what the other copied in: active/active, no loop
        for a, acfg, b, bcfg in ((name, cfg, other, ocfg), (other, ocfg, name, cfg)):
            for topic in _exact_names(acfg.get("topics", "")):
                if _filter(bcfg).matches(topic):
                    raise UsageError("topics", f"{topic} would flow both ways ({a} and {b}): records would loop",
                                     f"exclude {topic} from one direction first, or set migration.mark_copies on both "
                                     "flows (docs/active-active.md); nothing was applied")


def check_internal_topic_names(client: ConnectClient, configs: dict[str, dict[str, str]]) -> None:
    """Refuse to rename a running flow's checkpoints/offset-syncs topics (per migration <-> Kafka's names):
    its offset translation history is in the topics it uses now, and the new ones would start empty."""
    existing = set(client.connectors())
    for name, cfg in configs.items():
        if name not in existing or not str(cfg.get("connector.class", "")).startswith(MIRROR_PACKAGE):
            continue
        current = client.config(name) or {}
        alias = cfg.get("source.cluster.alias", "")
        now, new = connector_namespace(current), connector_namespace(cfg)
        if now != new:
            keep = "kafka-default" if now is None else "per-migration"
            raise UsageError(
                "migration.internal_topic_names",
                f"{name} on {client.url} runs with MM2's checkpoints in {checkpoints_topic(alias, now)}; this config "
                f"would move them to {checkpoints_topic(alias, new)} (offset translation would restart from nothing)",
                f"set migration.internal_topic_names: {keep} for this flow (or delete its connectors and run "
                "msk-migrate cleanup first); nothing was applied")


def validate_all(client: ConnectClient, configs: dict[str, dict[str, str]]) -> None:
    check_no_plaintext_secrets(configs)
    check_no_loop(client, configs)
    check_internal_topic_names(client, configs)
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
    progress: Callable[[str], None] = quiet,
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
        for name, cfg in configs.items():
            progress(f"waiting for {name} and its tasks to be RUNNING")
            st = client.wait_state(name, "RUNNING", timeout=timeout)
            deadline = time.time() + min(ZERO_TASK_GRACE_SECONDS, timeout)
            while len(st.get("tasks", [])) < min_tasks(cfg) and time.time() < deadline:
                time.sleep(1)  # tasks appear once the connector has read its source's topics
                st = client.wait_state(name, "RUNNING", timeout=timeout)
            result.status[name] = st  # still 0 tasks: connector_problems() reports it (not green)
    else:
        result.status = {name: client.status(name) for name in configs}
    return result


#: How long a RUNNING connector may have no task before `apply` reports it (not green) instead of waiting.
ZERO_TASK_GRACE_SECONDS = 20.0


def min_tasks(config: dict[str, str]) -> int:
    """Tasks a healthy connector has: >= 1, except MM2's checkpoint connector, which has none until a
    consumer group matches its filter."""
    return 0 if config.get("connector.class") == CHECKPOINT_CONNECTOR_CLASS else 1


def connector_problems(rows: list[dict[str, Any]], checkpoint_needs_tasks: bool = True) -> list[str]:
    """Why the connectors of ``rows`` are not green (empty = all RUNNING with running tasks)."""
    out = []
    for r in rows:
        if r["state"] != "RUNNING":
            out.append(f"{r['name']} is {r['state']}" + (f": {r['failure']}" if r.get("failure") else ""))
        elif r["tasks"] == 0 and (checkpoint_needs_tasks or r.get("class") != CHECKPOINT_CONNECTOR_CLASS):
            out.append(f"{r['name']} has 0 tasks" + (" (no consumer group matches yet)"
                                                      if r.get("class") == CHECKPOINT_CONNECTOR_CLASS else
                                                      " (no source topic matches topics/topics_exclude)"))
        elif r["tasks_running"] < r["tasks"]:
            out.append(f"{r['name']}: {r['tasks_running']}/{r['tasks']} tasks RUNNING"
                       + (f": {r['failure']}" if r.get("failure") else ""))
    return out


def status_rows(client: ConnectClient, names: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for name in names or sorted(client.connectors()):
        try:
            st = client.status(name)
        except ConnectRestError as exc:
            if exc.status != 404:
                raise
            rows.append({"name": name, "type": None, "class": None, "state": "MISSING", "worker": None, "tasks": 0,
                         "tasks_running": 0, "tasks_failed": 0, "failure": "not on this worker"})
            continue
        cls = (client.config(name) or {}).get("connector.class")
        tasks = st.get("tasks", [])
        rows.append(
            {
                "name": name,
                "type": st.get("type"),
                "class": cls,
                "state": st["connector"]["state"],
                "worker": st["connector"].get("worker_id"),
                "tasks": len(tasks),
                "tasks_running": sum(t["state"] == "RUNNING" for t in tasks),
                "tasks_failed": sum(t["state"] == "FAILED" for t in tasks),
                "failure": failure(st),
            }
        )
    return rows


__all__ = ["ApplyResult", "ConnectorFailed", "apply", "connector_problems", "min_tasks", "status_rows", "validate_all"]
