"""The schema ids of a Spark run: one aggregate over the keys' and values' first five bytes, resolved on the
driver.

The Spark checksum pass (:mod:`.checksum`) drops the raw values once fingerprinted, so the ids are read
by a pass of their own over the same ranges and windows (:func:`.reading.read_records`), only when the
run was given registries to prove them on. It shuffles one row per (side, topic, part, id), never records.
Latest-per-key topics are tallied over every record of the window, not only each key's latest: an id of
a superseded record is proven too (stricter, never weaker, than the native pass).

Protobuf message indexes: the bytes after the id that read as a message-index array are found by the same rules
as the native pass (:func:`msk_migrate.schemas.protobuf.prefix_length`), written in Spark SQL built-ins only (an
``aggregate`` over the first :data:`~msk_migrate.schemas.protobuf.MAX_PREFIX_BYTES` bytes: no Python UDF, the job
runs on executors without Python), grouped by as raw bytes, and decoded on the driver. An id with more than
:data:`.schema_ids.MAX_KEYS` distinct prefixes (payload bytes of an Avro id) has them all counted as not read.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..schemas.protobuf import MAX_DEPTH, MAX_PREFIX_BYTES
from .reading import ReadPlan, read_records
from .schema_ids import HEADER_BYTES, MAGIC, MAX_KEYS, NOT_READ, WIDE_BYTES, IdCounts


def _state(st: str, need: str, half: str, length: str) -> str:
    return f"named_struct('st', {st}, 'need', {need}, 'half', {half}, 'len', {length})"


_BAD = _state("3", "0", "0", "0")
#: The length of the message-index array after the id of the column ``bytes`` (0: none), as
#: :func:`msk_migrate.schemas.protobuf.prefix_length`: states 0 count byte next, 1 reading indexes (``half``: the
#: first byte of a two-byte varint read), 2 done, 3 not an array.
PREFIX_LENGTH_SQL = f"""IF(length(substring(bytes, {HEADER_BYTES + 1}, {MAX_PREFIX_BYTES})) = 0, 0, aggregate(
  transform(sequence(1, length(substring(bytes, {HEADER_BYTES + 1}, {MAX_PREFIX_BYTES}))),
            i -> cast(conv(hex(substring(substring(bytes, {HEADER_BYTES + 1}, {MAX_PREFIX_BYTES}), i, 1)), 16, 10) as int)),
  {_state("0", "0", "0", "0")},
  (s, x) -> CASE
    WHEN s.st = 0 AND x = 0 THEN {_state("2", "0", "0", "1")}
    WHEN s.st = 0 AND ((x & 129) != 0 OR x > {2 * MAX_DEPTH}) THEN {_BAD}
    WHEN s.st = 0 THEN {_state("1", "shiftright(x, 1)", "0", "1")}
    WHEN s.st = 1 AND s.half = 0 AND (x & 1) = 1 THEN {_BAD}
    WHEN s.st = 1 AND s.half = 0 AND (x & 128) != 0 THEN {_state("1", "s.need", "1", "s.len + 1")}
    WHEN s.st = 1 AND s.half = 1 AND (x & 128) != 0 THEN {_BAD}
    WHEN s.st = 1 THEN {_state("IF(s.need = 1, 2, 1)", "s.need - 1", "0", "s.len + 1")}
    ELSE s END,
  s -> IF(s.st = 2, s.len, 0)))"""


def spark_id_rows(spark: SparkSession, plans: dict[str, ReadPlan]) -> list[tuple[Any, ...]]:
    """``(side, topic, non-null values, {id: records})`` per side and topic, and the keys' as the same with a
    fifth field ``"key"`` (see :func:`.schema_ids.tally`)."""
    frames = []
    for side, plan in plans.items():
        df = read_records(spark, plan)
        if df is not None:
            frames.append(df.select(F.lit(side).alias("side"), "topic", "key", "value"))
    if not frames:
        return []
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return id_rows_of(df)


def id_rows_of(df: DataFrame) -> list[tuple[Any, ...]]:
    """The aggregate of :func:`spark_id_rows` over a frame of ``side``, ``topic``, ``value`` and optionally
    ``key`` (binary): one Spark job for both parts (the parts are stacked, then grouped once)."""
    parts = df.select("side", "topic", F.lit("value").alias("part"), F.col("value").alias("bytes"))
    if "key" in df.columns:
        parts = parts.unionByName(df.select("side", "topic", F.lit("key").alias("part"), F.col("key").alias("bytes")))
    b = F.col("bytes")
    wire = (b.isNotNull() & (F.length(b) >= HEADER_BYTES) & (F.substring(b, 1, 1) == F.unhex(F.lit(f"{MAGIC:02x}")))
            # id 0 only from bytes long enough for Apicurio's 8-byte id (as :func:`.schema_ids.count_ids`)
            & ((F.length(b) >= WIDE_BYTES) | (F.hex(F.substring(b, 2, 4)) != F.lit("00000000"))))
    # bytes 2..5 as an unsigned big-endian integer (conv of the hex: no sign trouble above 2^31)
    schema_id = F.when(wire, F.conv(F.hex(F.substring(b, 2, 4)), 16, 10).cast("long"))
    # the message-index prefix after the id, as raw bytes in hex ('' when the bytes there are no such array)
    prefix = F.when(wire, F.hex(F.expr(f"substring(bytes, {HEADER_BYTES + 1}, {PREFIX_LENGTH_SQL})")))
    keys = ["side", "topic", "part", "schema_id"]
    per_prefix = (parts.filter(b.isNotNull())
                  .groupBy("side", "topic", "part", schema_id.alias("schema_id"), prefix.alias("prefix"))
                  .agg(F.count(F.lit(1)).alias("n")))
    # an id with more distinct prefixes than a native read task keeps: its payload bytes, not message indexes
    spread = F.count(F.lit(1)).over(Window.partitionBy(*keys))
    capped = per_prefix.withColumn("prefix", F.when((spread > MAX_KEYS) & F.col("schema_id").isNotNull(),
                                                    F.lit(NOT_READ.hex().upper())).otherwise(F.col("prefix")))
    rows = capped.groupBy(*keys, "prefix").agg(F.sum("n").alias("n")).collect()
    out: dict[tuple[str, str, str], tuple[int, IdCounts]] = {}
    for r in rows:
        values, ids = out.get((r["side"], r["topic"], r["part"]), (0, IdCounts()))
        if r["schema_id"] is not None:
            ids.add(int(r["schema_id"]), bytes.fromhex(r["prefix"] or ""), int(r["n"]))
        out[(r["side"], r["topic"], r["part"])] = (values + int(r["n"]), ids)
    return [(side, topic, n, ids) if part == "value" else (side, topic, n, ids, part)
            for (side, topic, part), (n, ids) in sorted(out.items(), key=lambda kv: (kv[0][2] != "value", kv[0]))]
