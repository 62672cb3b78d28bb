"""The checksum pass: per-partition aggregates of both clusters in one Spark job.

Per partition the checksum is ``count`` plus

- ``Σ fp mod 2^64`` — order-independent, and a duplicate adds its hash again, so duplicates change
  it. Computed exactly as three sums of 22-bit slices (no overflow below 2^41 records per
  partition, ANSI mode or not) and folded on the driver. With ``detail`` (checksum mode, second
  pass over the differing partitions only) the same sums over h_key, h_value, h_headers, the
  *sorted* headers and the timestamp hash tell, when counts agree, which field differs (keys,
  values, headers, header order only, timestamps).
- the **order digest** ``Σ fp_i · i mod (2^61 - 1)`` over the partition's compared records in
  offset order (``i`` = rank 0..n-1). Each Spark task sums ``fp · idx`` (``idx`` = rank within the
  task) exactly, as eight sums of 16-bit × 16-bit slice products; the driver joins the tasks of a
  partition in offset order: ``Σ_tasks (base · Σfp + Σ fp·idx)`` with ``base`` = records of the
  earlier tasks. Two sequences of the same records in a different order differ in it unless
  ``Σ fp_i (i - π(i)) ≡ 0 (mod 2^61 - 1)``: probability about 2^-60 per reordered partition.

On a **two-origin** side (``--compare multiset``: natives and the copies of the other side's records) each origin is
ranked apart, as the native pass ranks it: ``i`` is the record's rank among its origin's records (copies: a
removed mark; natives: every other record), so the interleaving of the origins leaves the digest unchanged while
an origin's own order does not. The rank within a task comes from a window over the task's records of one origin
(a sort of that side's fingerprints, never of the records), and the driver folds each origin's tasks apart.

Records a side's marks **leave out** (one-way ``--compare records`` with marks: the source's records copied from the
target) are read with the rest and counted, as the native pass counts them (``origin_target``), and nothing else:
they are grouped apart (origin 2) and the compared records are ranked without them, by the same window.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from .digest import COMPONENTS, MASK64, ORDER_PRIME, Digest, _Chunk, explain_checksum, fold_order
from .fingerprint import MARK_LEFT_OUT, MARK_NATIVE, MARK_OK, MARK_STATE, MARK_WRONG, plan_units
from .reading import TP, ReadPlan

_M22 = (1 << 22) - 1
_M16 = 0xFFFF

__all__ = ["MASK64", "ORDER_PRIME", "Digest", "checksum", "explain_checksum", "fold_order"]


def _slice_sums(name: str) -> list[Column]:
    return [
        F.sum(F.expr(f"{name} & {_M22}")).alias(f"{name}__0"),
        F.sum(F.expr(f"shiftrightunsigned({name}, 22) & {_M22}")).alias(f"{name}__1"),
        F.sum(F.expr(f"shiftrightunsigned({name}, 44)")).alias(f"{name}__2"),
    ]


def _order_sums() -> list[Column]:
    """Σ fp_slice_j · idx_slice_k for 16-bit slices (each product < 2^32: exact below 2^31 rows)."""
    out = []
    for j in range(4):
        f = f"(shiftrightunsigned(fp, {16 * j}) & {_M16})"
        for k in range(2):
            i = f"(shiftrightunsigned(idx, {16 * k}) & {_M16})"
            out.append(F.sum(F.expr(f"{f} * {i}")).alias(f"o_{j}_{k}"))
    return out


def _exact(row, name: str) -> int:
    return row[f"{name}__0"] + (row[f"{name}__1"] << 22) + (row[f"{name}__2"] << 44)


#: ``origin`` of a record the side's marks leave out (counted as ``origin_target``, in no digest)
LEFT_OUT_ORIGIN = 2


def _origins(df: DataFrame, plan: ReadPlan) -> DataFrame:
    """``origin`` per record (0: a copy whose mark was removed, or any record of a one-origin side; 1: a two-origin
    side's other records; :data:`LEFT_OUT_ORIGIN`: left out by the marks) and, where a side holds more than one,
    ``idx`` as the record's rank among its task's records of the same origin."""
    if not plan.two_origin and plan.skip_marked_by is None:
        return df.withColumn("origin", F.lit(0))
    left_out = F.coalesce(F.col(MARK_STATE) == MARK_LEFT_OUT, F.lit(False))
    other = (F.col(MARK_STATE) != MARK_OK).cast("int") if plan.two_origin else F.lit(0)
    df = df.withColumn("origin", F.when(left_out, F.lit(LEFT_OUT_ORIGIN)).otherwise(other))
    rank = Window.partitionBy("topic", "partition", "chunk", "origin").orderBy("idx")
    return df.withColumn("idx", (F.row_number().over(rank) - 1).cast("long"))


def _initial_marks(plan: ReadPlan) -> dict[str, int] | None:
    """The copy-mark counts of a partition before any record (None: the plan does not account for marks): the keys
    of the native pass's (:func:`.native._no_marks`)."""
    if plan.strip_mark_of is None and plan.skip_marked_by is None:
        return None
    return {"stripped": 0, "missing_or_wrong": 0, "origin_target": 0, **({"natives": 0} if plan.two_origin else {})}


def checksum(spark: SparkSession, plans: dict[str, ReadPlan], detail: bool = False) -> dict[str, dict[TP, Digest]]:
    """Per-partition aggregates of each plan ("source", "target"), in one Spark job. Spark aggregates
    map-side (partial aggregation), so only one row per task and partition is shuffled, never
    records; the driver collects one row per task and side. ``detail``: also the per-field sums
    that :func:`explain_checksum` reads."""
    comps = COMPONENTS if detail else ("fp",)
    out = {side: {tp: Digest(marks=_initial_marks(plan)) for tp in plan.ranges} for side, plan in plans.items()}
    frames = []
    for side, plan in plans.items():
        df = plan_units(spark, plan, detail=detail, keep_left_out=True)
        if df is not None:
            frames.append(_origins(df, plan).withColumn("side", F.lit(side)))
    if not frames:
        return out
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other, allowMissingColumns=True)  # mark_state: on the side whose marks are removed
    marked = MARK_STATE in df.columns
    aggs: list[Column] = [
        F.count(F.lit(1)).alias("n"),
        F.min("offset").alias("first_offset"),
        F.min("ts_ms").alias("min_ts"),
        F.max("ts_ms").alias("max_ts"),
        F.sum(F.col("key_null").cast("long")).alias("null_keys"),
        F.sum(F.col("value_null").cast("long")).alias("tombstones"),
    ]
    for comp in comps:
        aggs += _slice_sums(comp)
    aggs += _order_sums()
    if marked:
        aggs += [F.sum((F.col(MARK_STATE) == MARK_OK).cast("long")).alias("marks_ok"),
                 F.sum((F.col(MARK_STATE) == MARK_WRONG).cast("long")).alias("marks_bad"),
                 F.sum((F.col(MARK_STATE) == MARK_NATIVE).cast("long")).alias("marks_native")]
    chunks: dict[tuple[str, TP, int], list[_Chunk]] = {}
    exact: dict[tuple[str, TP], dict[str, int]] = {}
    for row in df.groupBy("side", "topic", "partition", "chunk", "origin").agg(*aggs).collect():
        key = (row["side"], (row["topic"], row["partition"]))
        d = out[key[0]].setdefault(key[1], Digest(marks=_initial_marks(plans[key[0]])))
        if row["origin"] == LEFT_OUT_ORIGIN:  # counted, compared nowhere
            assert d.marks is not None
            d.marks["origin_target"] += row["n"]
            continue
        d.count += row["n"]
        d.min_ts = row["min_ts"] if d.min_ts is None else min(d.min_ts, row["min_ts"])
        d.max_ts = row["max_ts"] if d.max_ts is None else max(d.max_ts, row["max_ts"])
        d.null_keys += row["null_keys"] or 0
        d.tombstones += row["tombstones"] or 0
        if marked and plans[key[0]].strip_mark_of is not None:
            m = d.marks if d.marks is not None else {"stripped": 0, "missing_or_wrong": 0, "origin_target": 0}
            m["stripped"] += row["marks_ok"] or 0
            if plans[key[0]].two_origin:
                m["missing_or_wrong"] += row["marks_bad"] or 0
                m["natives"] = m.get("natives", 0) + (row["marks_native"] or 0)
            else:  # no native on a one-way target: a record without the mark is a copy that lost it
                m["missing_or_wrong"] += (row["marks_bad"] or 0) + (row["marks_native"] or 0)
            d.marks = m
        sums = exact.setdefault(key, {c: 0 for c in comps})
        for comp in comps:
            sums[comp] += _exact(row, comp)
        fp_idx = sum(row[f"o_{j}_{k}"] << (16 * (j + k)) for j in range(4) for k in range(2))
        chunks.setdefault((*key, row["origin"]), []).append(_Chunk(row["first_offset"], row["n"], _exact(row, "fp"), fp_idx))
    for (side, tp), sums in exact.items():
        d = out[side][tp]
        d.sums = {comp: 0 for comp in COMPONENTS} | {comp: v & MASK64 for comp, v in sums.items()}
        d.order = sum(fold_order(chunks.get((side, tp, origin), [])) for origin in (0, 1)) % ORDER_PRIME
    return out
