"""The Connect REST client retries a request the worker refused only because its group is rebalancing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError, is_transient_rebalance


class _Worker(BaseHTTPRequestHandler):
    """Answers PUT /connectors/x/config with the queued (status, message) answers, then 200."""

    answers: ClassVar[list[tuple[int, str]]] = []
    calls = 0

    def do_PUT(self) -> None:
        type(self).calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status, message = self.answers.pop(0) if self.answers else (200, "")
        body = json.dumps({"error_code": status, "message": message} if status >= 400 else {"name": "x", "config": {}})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def worker() -> Iterator[tuple[str, type[_Worker]]]:
    handler = type("Handler", (_Worker,), {"answers": [], "calls": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval: shutdown() waits out one poll, 0.5 s by default, in every teardown.
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()


def test_a_write_refused_during_a_rebalance_is_retried_until_the_worker_accepts_it(worker):
    url, handler = worker
    # one refusal (each retry waits longer; every rebalance message is classified in the pure test below)
    handler.answers = [(409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")]
    out = ConnectClient(url, auth=False, rebalance_wait=2).put_config("x", {"a": "b"})
    assert out["name"] == "x" and handler.calls == 2


def test_a_rebalance_that_outlasts_the_wait_surfaces_the_workers_message(worker):
    url, handler = worker
    handler.answers = [(500, "Request cannot be completed because a rebalance is expected")] * 50
    with pytest.raises(ConnectRestError, match="rebalance is expected"):
        ConnectClient(url, auth=False, rebalance_wait=0.3).put_config("x", {"a": "b"})
    assert 1 < handler.calls < 50


def test_other_errors_are_not_retried(worker):
    url, handler = worker
    handler.answers = [(400, "Connector configuration is invalid")]
    with pytest.raises(ConnectRestError, match="invalid"):
        ConnectClient(url, auth=False, rebalance_wait=10).put_config("x", {"a": "b"})
    assert handler.calls == 1


@pytest.mark.parametrize(("status", "message", "transient"), [
    (409, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)", True),
    (500, "Request cannot be completed because a rebalance is expected", True),
    (500, "IO Error trying to forward REST request: Connection refused", False),
    (404, "Connector x not found", False),
])
def test_only_rebalance_refusals_count_as_transient(status, message, transient):
    assert is_transient_rebalance(status, message) is transient
