"""Helpers for tests that run their own MM2 flow next to the session's: render with the product
renderer, apply only the connectors a test needs, read the auto-restart metrics."""

from __future__ import annotations

import re

import requests

from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.apply import apply, validate_all
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors

FAST = dict(replication_factor=1, internal_replication_factor=1, refresh_topics_interval_seconds=2,
            refresh_groups_interval_seconds=2, emit_checkpoints_interval_seconds=1,
            sync_group_offsets_interval_seconds=1, emit_heartbeats_interval_seconds=1)


def flow(name: str, topics: list[str], **kw) -> MigrationSpec:
    return MigrationSpec(name=name, topics=topics, groups=[f"{name}-.*"], **{**FAST, **kw})


def source_config(local_env, spec: MigrationSpec, **extra: str) -> dict[str, dict[str, str]]:
    """Only the MirrorSourceConnector of ``spec`` (plus ``extra`` keys), as apply() takes it."""
    cfgs = render_connectors(local_env.source(), local_env.target(), spec)
    name = spec.connector_names()["source"]
    return {name: {**cfgs[name], **extra}}


def apply_source(connect: ConnectClient, configs: dict[str, dict[str, str]], wait: bool = True) -> None:
    """Validate and apply; ``wait=False`` returns at once (the status may not exist yet)."""
    if wait:
        apply(connect, configs, wait=True, timeout=120)
        return
    validate_all(connect, configs)
    for name, cfg in configs.items():
        connect.put_config(name, {k: v for k, v in cfg.items() if k != "name"})


def auto_restarts(metrics_url: str, connector: str) -> float:
    """kafka_connect_auto_restarts_total{connector=...} from a worker's JMX exporter (0 when absent)."""
    body = requests.get(metrics_url, timeout=10).text
    m = re.search(r'^kafka_connect_auto_restarts_total\{connector="' + re.escape(connector) + r'",?\}\s+(\S+)$',
                  body, re.M)
    return float(m.group(1)) if m else 0.0
