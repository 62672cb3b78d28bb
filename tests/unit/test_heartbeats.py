"""The heartbeat key reader: MM2's Heartbeat key struct (two Kafka protocol strings: int16 length, UTF-8),
and nothing else taken for one."""

from __future__ import annotations

import struct

import pytest

from msk_migrate.runbook.heartbeats import heartbeat_key

pytestmark = pytest.mark.unit


def _key(*parts: str) -> bytes:
    return b"".join(struct.pack(">h", len(p.encode())) + p.encode() for p in parts)


def test_a_heartbeat_key_gives_its_source_and_target_alias():
    assert heartbeat_key(_key("peer", "target")) == ("peer", "target")
    assert heartbeat_key(_key("", "msk")) == ("", "msk")


@pytest.mark.parametrize("key", [None, b"", b"\x00", _key("peer"), _key("peer", "target") + b"x",
                                 _key("a", "b", "c"), b"\x00\x05ab", b"\xff\xff\x00\x00", b"\x00\x02\xff\xfe\x00\x00"])
def test_anything_else_is_not_taken_for_a_heartbeat(key):
    assert heartbeat_key(key) is None
