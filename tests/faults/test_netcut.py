"""The network cut used by the production faults: it silences exactly the cgroup's TCP to the given ports
(a process outside the cgroup keeps its connection), and healing restores it. Needs root: one line if not."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from .netcut import NetCut, NetCutUnavailable, check_available
from .suite import longest_stall

CONNECT = ("import socket, sys\ns = socket.socket(); s.settimeout(2)\n"
           "try:\n    s.connect(('127.0.0.1', int(sys.argv[1]))); print('connected')\n"
           "except OSError as e:\n    print('failed', type(e).__name__)\n")


@pytest.fixture
def netcut():
    try:
        check_available()
    except NetCutUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    nc = NetCut()
    yield nc
    nc.close()


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                srv.accept()[0].close()
            except OSError:
                continue

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(2)
    srv.close()


def _connect(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()


def test_a_cut_silences_only_the_cgroups_connections_until_healed(netcut, listener):
    inside = netcut.wrap([sys.executable, "-c", CONNECT, str(listener)])
    outside = [sys.executable, "-c", CONNECT, str(listener)]
    assert _connect(inside) == "connected"
    with _cut(netcut, listener):
        assert _connect(inside) == "failed TimeoutError"  # dropped, not refused: a dead link
        assert _connect(outside) == "connected"
    assert _connect(inside) == "connected"
    netcut.close()
    assert not netcut.path.exists()


class _cut:
    def __init__(self, nc: NetCut, port: int):
        self.nc, self.port = nc, port

    def __enter__(self) -> None:
        self.nc.cut([self.port], require_members=False)  # the probe processes join only while they run

    def __exit__(self, *exc: object) -> None:
        self.nc.heal()


def test_longest_stall_counts_the_longest_flat_stretch_after_the_fault():
    samples = [(1.0, 10), (2.0, 20), (2.5, 20), (9.0, 20), (9.5, 25), (10.0, 30)]
    assert longest_stall(samples, t0=0.0) == 7.5  # 2.0 -> 9.5
    assert longest_stall([(1.0, 5)], t0=0.0) == 0.0
