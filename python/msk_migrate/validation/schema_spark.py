"""The schema ids of a Spark run: one aggregate over the keys' and values' first five bytes, resolved on the
driver.

The Spark checksum pass (:mod:`.checksum`) drops the raw values once fingerprinted, so the ids are read
by a pass of their own over the same ranges and windows (:func:`.reading.read_records`), only when the
run was given registries to prove them on. It shuffles one row per (side, topic, part, id), never records.
Latest-per-key topics are tallied over every record of the window, not only each key's latest: an id of
a superseded record is proven too (stricter, never weaker, than the native pass).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .reading import ReadPlan, read_records
from .schema_ids import HEADER_BYTES, MAGIC, WIDE_BYTES


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
    rows = (parts.filter(b.isNotNull())
            .groupBy("side", "topic", "part", schema_id.alias("schema_id"))
            .agg(F.count(F.lit(1)).alias("n"))
            .collect())
    out: dict[tuple[str, str, str], tuple[int, dict[int, int]]] = {}
    for r in rows:
        values, ids = out.get((r["side"], r["topic"], r["part"]), (0, {}))
        if r["schema_id"] is not None:
            ids[int(r["schema_id"])] = int(r["n"])
        out[(r["side"], r["topic"], r["part"])] = (values + int(r["n"]), ids)
    return [(side, topic, n, ids) if part == "value" else (side, topic, n, ids, part)
            for (side, topic, part), (n, ids) in sorted(out.items(), key=lambda kv: (kv[0][2] != "value", kv[0]))]
