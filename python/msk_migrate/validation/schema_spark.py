"""The schema ids of a Spark run: one aggregate over the values' first five bytes, resolved on the driver.

The Spark checksum pass (:mod:`.checksum`) drops the raw values once fingerprinted, so the ids are read
by a pass of their own over the same ranges and windows (:func:`.reading.read_records`), only when the
run was given registries to prove them on. It shuffles one row per (side, topic, id), never records.
Latest-per-key topics are tallied over every record of the window, not only each key's latest: an id of
a superseded record is proven too (stricter, never weaker, than the native pass).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .reading import ReadPlan, read_records
from .schema_ids import HEADER_BYTES, MAGIC


def spark_id_rows(spark: SparkSession, plans: dict[str, ReadPlan]) -> list[tuple[str, str, int, dict[int, int]]]:
    """``(side, topic, non-null values, {id: records})`` per side and topic (see :func:`.schema_ids.tally`)."""
    frames = []
    for side, plan in plans.items():
        df = read_records(spark, plan)
        if df is not None:
            frames.append(df.select(F.lit(side).alias("side"), "topic", "value"))
    if not frames:
        return []
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return id_rows_of(df)


def id_rows_of(df: DataFrame) -> list[tuple[str, str, int, dict[int, int]]]:
    """The aggregate of :func:`spark_id_rows` over a frame of ``side``, ``topic``, ``value`` (binary)."""
    wire = (F.col("value").isNotNull() & (F.length("value") >= HEADER_BYTES)
            & (F.substring("value", 1, 1) == F.unhex(F.lit(f"{MAGIC:02x}"))))
    # bytes 2..5 as an unsigned big-endian integer (conv of the hex: no sign trouble above 2^31)
    schema_id = F.when(wire, F.conv(F.hex(F.substring("value", 2, 4)), 16, 10).cast("long"))
    rows = (df.filter(F.col("value").isNotNull())
            .groupBy("side", "topic", schema_id.alias("schema_id"))
            .agg(F.count(F.lit(1)).alias("n"))
            .collect())
    out: dict[tuple[str, str], tuple[int, dict[int, int]]] = {}
    for r in rows:
        values, ids = out.get((r["side"], r["topic"]), (0, {}))
        if r["schema_id"] is not None:
            ids[int(r["schema_id"])] = int(r["n"])
        out[(r["side"], r["topic"])] = (values + int(r["n"]), ids)
    return [(side, topic, values, ids) for (side, topic), (values, ids) in sorted(out.items())]
