"""validate names a difference sample's key by sha256 unless --show-keys (issue 37: keys can hold personal data,
and the report lands in the operator's log and the report bucket)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib

from msk_migrate.validation.report import PartitionResult, TopicResult, hide_keys, key_digest
from msk_migrate.validation.request import ValidationRequest


def test_keys_are_shown_only_when_asked() -> None:
    assert {f.name: f.default for f in dataclasses.fields(ValidationRequest)}["show_keys"] is False


def test_a_text_key_and_a_binary_key_become_the_sha256_of_their_bytes_and_a_null_key_stays_null() -> None:
    text = {"key": "customer-42", "key_encoding": "utf8", "source_offset": 7}
    binary = {"key": base64.b64encode(b"\x00\xff\x10").decode(), "key_encoding": "base64", "key_truncated": True}
    assert key_digest(text) == {"key": hashlib.sha256(b"customer-42").hexdigest(), "key_encoding": "sha256", "source_offset": 7}
    assert key_digest(binary) == {"key": hashlib.sha256(b"\x00\xff\x10").hexdigest(), "key_encoding": "sha256", "key_truncated": True}
    assert key_digest({"key": None, "key_encoding": None}) == {"key": None, "key_encoding": None}


def test_every_sample_of_every_partition_loses_its_key_text() -> None:
    p = PartitionResult(partition=0, status="mismatch", method="full")
    p.samples = {"missing": [{"key": "alice@example.com", "key_encoding": "utf8"}], "changed": [{"key": "bob", "key_encoding": "utf8"}]}
    t = TopicResult(topic="users", target_topic="users", source_partitions=1, target_partitions=1, partitions=[p], status="mismatch")
    hide_keys([t])
    shown = repr(t.to_dict())
    assert "alice@example.com" not in shown and "'bob'" not in shown
    assert p.samples["missing"][0]["key"] == hashlib.sha256(b"alice@example.com").hexdigest()
