"""The session every runbook operation takes: what the flow alone refuses is refused before any connection."""

from __future__ import annotations

import socket

import pytest

from msk_migrate.config.flow import Flow
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from msk_migrate.errors import UsageError
from msk_migrate.runbook.session import open_session


def _flow(target: bool = False, connect_url: str | None = None) -> Flow:
    src = ClusterEndpoint(alias="source", bootstrap_servers="127.0.0.1:9")
    tgt = ClusterEndpoint(alias="target", bootstrap_servers="127.0.0.1:9") if target else None
    return Flow("test flow", src, tgt, MigrationSpec(topics=["t"]), WorkerSpec(), connect_url=connect_url)


@pytest.fixture
def no_network(monkeypatch):
    """A connection attempt fails the test (librdkafka's own sockets are not Python's: the flows below name
    a port nothing listens on, so a client that started anyway would also fail, but only after its timeout)."""
    def refuse(*a, **k):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize(("flow", "kw", "field"), [
    (_flow(), {"target": "yes"}, "--target-bootstrap"),
    (_flow(target=True), {"worker": "yes"}, "--connect-url"),
])
def test_what_the_flow_alone_refuses_is_refused_before_a_connection(no_network, flow, kw, field):
    import time

    t = time.monotonic()
    with pytest.raises(UsageError) as exc:
        open_session(flow, **kw)
    assert exc.value.field == field and time.monotonic() - t < 1.0
