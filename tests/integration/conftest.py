from __future__ import annotations

import contextlib

import pytest

from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.apply import apply
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors

#: Fast intervals so tests see replication, checkpoints and new topics within seconds.
TEST_MIGRATION = MigrationSpec(
    name="it",
    topics=["it-.*"],
    groups=["it-.*"],
    tasks_max=2,
    replication_factor=1,
    internal_replication_factor=1,
    emit_checkpoints_interval_seconds=1,
    sync_group_offsets_interval_seconds=1,
    emit_heartbeats_interval_seconds=1,
    refresh_topics_interval_seconds=2,
    refresh_groups_interval_seconds=2,
    offset_lag_max=10,
)


@pytest.fixture(scope="session")
def connect(local_env) -> ConnectClient:
    return ConnectClient(local_env.status()["connect"]["url"])


@pytest.fixture(scope="session")
def mm2(local_env, connect):
    """The three MM2 connectors, rendered by the product renderer, applied once per session."""
    # a source connector without a matching topic has no task (not green): give the flow one topic first
    from tests.kafka_helpers import create_topic

    create_topic(local_env.source().bootstrap_servers, "it-seed", partitions=1)
    configs = render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION)
    apply(connect, configs, wait=True, timeout=120)
    yield configs
    for name in configs:
        with contextlib.suppress(Exception):
            connect.delete(name)
