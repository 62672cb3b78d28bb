"""The Spark engine's id aggregate reads keys as well as values, with the native pass's rules (id 0 only from
bytes long enough for Apicurio's 8-byte ids)."""

from __future__ import annotations

from msk_migrate.validation.schema_ids import count_ids, ids_of, tally
from msk_migrate.validation.schema_spark import id_rows_of

KEYS = [b"\x00\x00\x00\x00\x07k", (5).to_bytes(8, "big"), b"\x00" + (7).to_bytes(8, "big") + b"p", b"raw", None]
VALUES = [b"\x00\x00\x00\x01\x00v", b"json", b"\x00\x00\x00\x00\x00abc", None, b"\x00\x00\x00\x00\x03"]


def test_the_spark_aggregate_tallies_keys_and_values_like_the_native_pass(spark):
    rows = [("source", "t", k, v) for k, v in zip(KEYS, VALUES, strict=True)]
    got = id_rows_of(spark.createDataFrame(rows, "side string, topic string, key binary, value binary"))
    native_keys: dict[bytes, int] = {}
    native_values: dict[bytes, int] = {}
    for k, v in zip(KEYS, VALUES, strict=True):
        count_ids(native_keys, k)
        count_ids(native_values, v)
    assert got == [("source", "t", 4, ids_of(native_values)), ("source", "t", 4, ids_of(native_keys), "key")]
    assert ids_of(native_keys) == {7: 1, 0: 1} and ids_of(native_values) == {256: 1, 3: 1}
    t = tally(got)["t"]
    assert t.key.source.ids == {7: 1, 0: 1} and t.source.ids == {256: 1, 3: 1}
