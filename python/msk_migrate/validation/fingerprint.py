"""What is compared, per record: the fingerprint columns, the record's position in its Spark task
(for the order digest), and the comparison units (every record, or the latest record per key).

Fingerprint of one record (all 64-bit xxhash64, Spark's ``xxhash64`` with its fixed seed 42)::

    h_key     = xxhash64(key IS NULL, coalesce(key, X''))           -- null key != empty key
    h_value   = xxhash64(value IS NULL, coalesce(value, X''))       -- tombstone != empty value
    h_headers = xxhash64(size, [ (name, value IS NULL, value) ... ])  -- ordered: order and repeats count
    ts        = timestamp in ms, or 0 for LogAppendTime topics (excluded, with a warning)
    fp        = xxhash64(h_key, h_value, h_headers, ts)

Position: Spark's Kafka source gives each task one offset range of one partition and yields its
records in offset order, so ``monotonically_increasing_id()`` evaluated right after the window
filter is (task id << 33) + the record's rank among the task's compared records. ``chunk`` is the
task id, ``idx`` that rank; :mod:`.checksum` joins the tasks of a partition in offset order.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .reading import ReadPlan, read_records

COMPONENTS = ("fp", "h_key", "h_value", "h_headers", "h_headers_sorted", "h_ts")
KEY_SAMPLE_BYTES = 200
IDX_BITS = 33  #: monotonically_increasing_id(): partition id above bit 33, row number below


def fingerprinted(df: DataFrame, no_ts_topics: set[str], with_samples: bool = True) -> DataFrame:
    """Adds h_key, h_value, h_headers, h_headers_sorted, ts_used, h_ts, fp, chunk, idx and (with
    ``with_samples``) a key sample; drops the raw key, value and headers."""
    n_headers = F.coalesce(F.size("headers"), F.lit(0))
    canon = F.expr(
        "transform(headers, h -> named_struct('k', h.key, 'n', h.value IS NULL, 'v', coalesce(h.value, X'')))"
    )
    if no_ts_topics:
        ts_used = F.when(F.col("topic").isin(sorted(no_ts_topics)), F.lit(0).cast("long")).otherwise(F.col("ts_ms"))
    else:
        ts_used = F.col("ts_ms")
    mid = F.monotonically_increasing_id()
    df = (
        df.withColumn("_mid", mid)
        .withColumn("chunk", F.shiftright(F.col("_mid"), IDX_BITS))
        .withColumn("idx", F.col("_mid").bitwiseAND(F.lit((1 << IDX_BITS) - 1)))
        .withColumn("key_null", F.col("key").isNull())
        .withColumn("value_null", F.col("value").isNull())
        .withColumn("h_key", F.xxhash64(F.col("key_null"), F.coalesce(F.col("key"), F.expr("X''"))))
        .withColumn("h_value", F.xxhash64(F.col("value_null"), F.coalesce(F.col("value"), F.expr("X''"))))
        .withColumn("h_headers", F.xxhash64(n_headers, canon))
        .withColumn("h_headers_sorted", F.xxhash64(n_headers, F.array_sort(canon)))
        .withColumn("ts_used", ts_used)
        .withColumn("h_ts", F.xxhash64(F.col("ts_used")))
        .withColumn("fp", F.xxhash64("h_key", "h_value", "h_headers", "ts_used"))
    )
    cols = [
        "topic", "partition", "offset", "chunk", "idx", "ts_ms", "ts_used", "key_null", "value_null",
        "h_key", "h_value", "h_headers", "h_headers_sorted", "h_ts", "fp",
    ]
    if with_samples:
        df = df.withColumn("key_sample", F.expr(f"substring(key, 1, {KEY_SAMPLE_BYTES})")).withColumn(
            "key_len", F.length("key")
        )
        cols += ["key_sample", "key_len"]
    return df.select(*cols)


def units(df: DataFrame, latest_topics: set[str]) -> DataFrame:
    """What is compared: every record, or for ``latest_topics`` the latest record of each key (keys
    whose latest record is a tombstone are deleted keys and left out; their order is not checked:
    ``idx`` of a unit is its rank among all records of its task, not among the units)."""
    if not latest_topics:
        return df
    in_latest = F.col("topic").isin(sorted(latest_topics))
    plain = df.filter(~in_latest)
    cols = [c for c in df.columns if c not in ("topic", "partition", "h_key")]
    latest = (
        df.filter(in_latest & ~F.col("key_null"))
        .groupBy("topic", "partition", "h_key")
        .agg(F.max_by(F.struct(*cols), F.col("offset")).alias("r"))
        .select("topic", "partition", "h_key", "r.*")
        .filter(~F.col("value_null"))
        .select(*df.columns)
    )
    return plain.unionByName(latest)


def plan_units(spark: SparkSession, plan: ReadPlan, with_samples: bool = True) -> DataFrame | None:
    raw = read_records(spark, plan)
    if raw is None:
        return None
    return units(fingerprinted(raw, plan.no_ts_topics, with_samples), plan.latest_per_key_topics)
