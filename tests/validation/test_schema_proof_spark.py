"""The Spark engine's id aggregate reads values exactly as the native pass does (same wire format rules)."""

from __future__ import annotations

from msk_migrate.validation.schema_ids import count_ids, ids_of
from msk_migrate.validation.schema_spark import id_rows_of

VALUES = [b"\x00\x00\x00\x00\x07abc", b"\x00\x00\x00\x00\x07", b"\x00\xff\xff\xff\xffz", b"raw", None, b"\x00\x01", b""]


def test_the_spark_aggregate_tallies_ids_like_the_native_pass(spark):
    rows = [("source", "t", v) for v in VALUES] + [("target", "t", b"\x00\x00\x00\x01\x00x"), ("target", "u", b"json")]
    got = id_rows_of(spark.createDataFrame(rows, "side string, topic string, value binary"))
    native: dict[bytes, int] = {}
    for v in VALUES:
        count_ids(native, v)
    assert got == [("source", "t", 6, ids_of(native)), ("target", "t", 1, {256: 1}), ("target", "u", 1, {})]
    assert ids_of(native) == {7: 2, 2**32 - 1: 1}
