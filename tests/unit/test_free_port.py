"""The harness's free ports: never the same one twice in a process, even when the kernel offers it again."""

from __future__ import annotations

import socket
from typing import ClassVar

from msk_migrate.local import procs


class _Socket:
    """A socket whose bind to port 0 gets the ports of ``offered`` in turn (the kernel repeating one)."""

    offered: ClassVar[list[int]] = []

    def __init__(self, *_a) -> None:
        self.port = 0

    def __enter__(self) -> _Socket:
        return self

    def __exit__(self, *_a) -> None:
        pass

    def bind(self, _addr) -> None:
        self.port = self.offered.pop(0)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


def test_a_port_the_kernel_offers_again_is_not_handed_out_twice(monkeypatch):
    monkeypatch.setattr(procs, "_handed", set())
    monkeypatch.setattr(_Socket, "offered", [41001, 41001, 41001, 41002])
    monkeypatch.setattr(procs.socket, "socket", _Socket)
    assert (procs.free_port(), procs.free_port()) == (41001, 41002)


def test_free_ports_are_distinct_and_bindable():
    ports = [procs.free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))
