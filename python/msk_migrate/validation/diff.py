"""The full diff: the exact per-partition multiset difference of the compared records, plus the
order check, for the partitions that need it. Explaining the differences (pairing changed records,
sampling) is :mod:`.explain`.

Order rule (at-least-once aware): records are matched by fingerprint; a record's position on each
side is its *first occurrence* (lowest offset). Walking the records both sides hold in source order,
every record whose first target occurrence comes before its source predecessor's is an
out-of-order point (``reordered``): an adjacent swap or a moved block counts once. Re-delivered
copies (duplicates) never count as reordering, and missing / unexpected / changed records are left
out of the order (they are reported as such).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..outcome import quiet
from . import explain
from .diff_result import DiffResult
from .fingerprint import plan_units
from .reading import TP, ReadPlan

#: Default for ``diff(explain_limit=...)``: up to this many differing fingerprint groups are
#: explained (paired, sampled) on the driver after one collect; more are explained by Spark jobs
#: (bounded driver memory for any size of difference).
LOCAL_EXPLAIN_LIMIT = 20_000


_SIDE_COLS = ("ts_ms", "ts_used", "h_key", "h_value", "h_headers", "h_headers_sorted", "key_sample", "key_null", "key_len")


def _grouped(df: DataFrame, p: str) -> DataFrame:
    return df.groupBy("topic", "partition", "fp").agg(
        F.count(F.lit(1)).alias(f"{p}_n"),
        F.min("offset").alias(f"{p}_first"),
        F.max("offset").alias(f"{p}_last"),
        *[F.first(c).alias(f"{p}_{c}") for c in _SIDE_COLS],
    )


def _tp_key(topic: Any, partition: Any) -> Any:
    return F.concat(topic, F.lit("\u0000"), partition.cast("string"))


def with_order_check(joined: DataFrame, order_tps: set[TP] | None) -> DataFrame:
    """Adds ``descent`` (an out-of-order point, see the module doc), ``prev_s`` and ``prev_t`` (the
    source predecessor's first offsets) to the joined groups of the partitions in ``order_tps``."""
    common = (F.col("s_n") > 0) & (F.col("t_n") > 0)
    if order_tps is not None:
        common = common & _tp_key(F.col("topic"), F.col("partition")).isin(
            sorted(f"{t}\u0000{p}" for t, p in order_tps)
        )
    before = Window.partitionBy("topic", "partition").orderBy("s_first").rowsBetween(Window.unboundedPreceding, -1)
    return (
        joined.withColumn("_common", common)
        .withColumn("prev_t", F.last(F.when(F.col("_common"), F.col("t_first")), ignorenulls=True).over(before))
        .withColumn("prev_s", F.last(F.when(F.col("_common"), F.col("s_first")), ignorenulls=True).over(before))
        .withColumn("descent", F.coalesce(F.col("_common") & (F.col("t_first") < F.col("prev_t")), F.lit(False)))
        .drop("_common")
    )


def diff(
    spark: SparkSession,
    source: ReadPlan,
    target: ReadPlan,
    tps: list[TP],
    sample_size: int,
    on_phase: Callable[[str], None] = quiet,
    order_tps: set[TP] | None = None,
    explain_limit: int = LOCAL_EXPLAIN_LIMIT,
) -> dict[TP, DiffResult]:
    """Exact multiset difference of the records (or latest-per-key units) of ``tps``, and the order
    check of ``order_tps`` (default: all of ``tps``; empty: none). Up to ``explain_limit`` differing
    fingerprint groups are explained on the driver, more by Spark jobs."""
    out = {tp: DiffResult() for tp in tps}
    if not tps:
        return out
    order = set(tps) if order_tps is None else set(order_tps) & set(tps)
    s_units = plan_units(spark, source.restricted(tps))
    t_units = plan_units(spark, target.restricted(tps))
    if s_units is None and t_units is None:
        return out
    if s_units is None or t_units is None:
        present = s_units if s_units is not None else t_units
        assert present is not None
        empty = present.where(F.lit(False))  # no Python-side DataFrame: executors run no Python
        s_units = s_units if s_units is not None else empty
        t_units = t_units if t_units is not None else empty

    joined = (
        _grouped(s_units, "s")
        .join(_grouped(t_units, "t"), ["topic", "partition", "fp"], "full_outer")
        .withColumn("s_n", F.coalesce("s_n", F.lit(0)))
        .withColumn("t_n", F.coalesce("t_n", F.lit(0)))
    )
    if order:
        joined = with_order_check(joined, None if order == set(tps) else order)
        keep = (F.col("s_n") != F.col("t_n")) | F.col("descent")
    else:
        joined = joined.withColumn("descent", F.lit(False)).withColumn("prev_s", F.lit(None).cast("long")).withColumn(
            "prev_t", F.lit(None).cast("long")
        )
        keep = F.col("s_n") != F.col("t_n")
    mis = joined.filter(keep).persist(StorageLevel.MEMORY_AND_DISK)
    persisted = [mis]
    try:
        on_phase("diff: comparing records")
        counts = mis.groupBy("topic", "partition").agg(
            F.sum(F.when(F.col("s_n") > F.col("t_n"), F.col("s_n") - F.col("t_n")).otherwise(0)).alias("missing"),
            F.sum(F.when(F.col("s_n") == 0, F.col("t_n")).otherwise(0)).alias("unexpected"),
            F.sum(
                F.when((F.col("s_n") > 0) & (F.col("t_n") > F.col("s_n")), F.col("t_n") - F.col("s_n")).otherwise(0)
            ).alias("duplicates"),
            F.sum(F.col("descent").cast("long")).alias("reordered"),
            F.sum((F.col("s_n") != F.col("t_n")).cast("long")).alias("groups"),
        )
        groups = 0
        for row in counts.collect():
            r = out.setdefault((row["topic"], row["partition"]), DiffResult())
            r.missing, r.unexpected, r.duplicates = int(row["missing"]), int(row["unexpected"]), int(row["duplicates"])
            r.reordered = int(row["reordered"])
            groups += int(row["groups"])
        if any(r.reordered for r in out.values()) and sample_size > 0:
            explain.reorder_samples(mis, out, sample_size)
        if not any(r.missing or r.unexpected or r.duplicates for r in out.values()):
            return out
        on_phase("diff: explaining differences")
        differing = mis.filter(F.col("s_n") != F.col("t_n"))
        if groups <= explain_limit:
            explain.explain_local(differing.collect(), out, source.latest_per_key_topics, sample_size)
            return out
        pairs = explain.pairs(differing, source.latest_per_key_topics).persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(pairs)
        for row in pairs.groupBy("topic", "partition", "kinds").count().collect():
            r = out[(row["topic"], row["partition"])]
            r.changed += int(row["count"])
            for kind in row["kinds"]:
                r.changes[kind] = r.changes.get(kind, 0) + int(row["count"])
        for r in out.values():
            r.changed = min(r.changed, r.missing, r.unexpected)
        if sample_size > 0:
            on_phase("diff: sampling differences")
            for row in explain.samples(differing, pairs, sample_size).collect():
                r = out[(row["topic"], row["partition"])]
                r.samples[row["category"]].append(explain.sample_dict(row))
            for r in out.values():
                for items in r.samples.values():
                    items.sort(key=explain.sample_order)
        return out
    finally:
        for df in persisted:
            df.unpersist()
