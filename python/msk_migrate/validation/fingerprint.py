"""What is compared, per record: the fingerprint columns, the record's position in its Spark task
(for the order digest), and the comparison units (every record, or the latest record per key).

Fingerprint of one record: one call of Spark's 64-bit ``xxhash64`` (fixed seed 42) over the fields in
a fixed order, each hashed into the running seed; a NULL leaves the seed unchanged, so a flag before
each nullable field keeps null and empty apart::

    fp = xxhash64(key IS NULL, key, value IS NULL, value, size(headers) or 0, headers, ts)
         -- null key != empty key, tombstone != empty value; headers in order, repeats count, a null
         -- header value != an empty one; ts = timestamp in ms, or 0 for LogAppendTime topics

Explaining a difference uses per-field hashes (``detail=True``; the diff, and the checksum of
differing partitions in checksum mode)::

    h_key = xxhash64(key IS NULL, key)       h_value = xxhash64(value IS NULL, value)
    h_headers = xxhash64(size, headers)      h_headers_sorted = xxhash64(size, array_sort(headers))
    h_ts = xxhash64(ts)

Position: Spark's Kafka source gives each task one offset range of one partition and yields its
records in offset order, so ``monotonically_increasing_id()`` evaluated right after the window
filter is (task id << 33) + the record's rank among the task's compared records. ``chunk`` is the
task id, ``idx`` that rank; :mod:`.checksum` joins the tasks of a partition in offset order.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..topology.marks import mark_header
from .digest import COMPONENTS
from .reading import ReadPlan, read_records

__all__ = ["COMPONENTS", "fingerprinted", "plan_units", "units"]

KEY_SAMPLE_BYTES = 200
#: Column of :func:`without_marks` on a side whose trailing mark is removed: 1 removed, 2 missing or wrong; on a
#: two-origin side 2 is a wrong or misplaced mark and 3 no mark at all (the side's own record, a native).
MARK_STATE = "mark_state"
MARK_OK, MARK_WRONG, MARK_NATIVE = 1, 2, 3
#: ... and, kept for the checksum pass to count (``keep_left_out``), 4: a record carrying the mark of the side it is
#: left out for (``origin: target``), compared nowhere
MARK_LEFT_OUT = 4
IDX_BITS = 33  #: monotonically_increasing_id(): partition id above bit 33, row number below


def fingerprinted(df: DataFrame, no_ts_topics: set[str], detail: bool = True) -> DataFrame:
    """Adds ts_used, fp, chunk, idx, key_null, value_null and (with ``detail``) h_key, h_value,
    h_headers, h_headers_sorted, h_ts and a key sample; drops the raw key, value and headers."""
    # no headers = 0, whatever spark.sql.ansi.enabled / legacy.sizeOfNull say size(NULL) is
    n_headers = F.when(F.col("headers").isNull(), F.lit(0)).otherwise(F.size("headers"))
    ts_used = F.when(F.col("topic").isin(sorted(no_ts_topics)), F.lit(0).cast("long")).otherwise(F.col("ts_ms")) if no_ts_topics else F.col("ts_ms")
    mid = F.monotonically_increasing_id()
    df = (
        df.withColumn("_mid", mid)
        .withColumn("chunk", F.shiftright(F.col("_mid"), IDX_BITS))
        .withColumn("idx", F.col("_mid").bitwiseAND(F.lit((1 << IDX_BITS) - 1)))
        .withColumn("key_null", F.col("key").isNull())
        .withColumn("value_null", F.col("value").isNull())
        .withColumn("ts_used", ts_used)
        .withColumn("fp", F.xxhash64("key_null", "key", "value_null", "value", n_headers, "headers", "ts_used"))
        .withColumn("h_key", F.xxhash64("key_null", "key"))  # the unit key of latest-per-key topics
    )
    cols = ["topic", "partition", "offset", "chunk", "idx", "ts_ms", "ts_used", "key_null", "value_null", "fp", "h_key"]
    if MARK_STATE in df.columns:  # set by without_marks: the checksum pass counts the copy marks
        cols.append(MARK_STATE)
    if detail:
        df = (
            df.withColumn("h_value", F.xxhash64("value_null", "value"))
            .withColumn("h_headers", F.xxhash64(n_headers, "headers"))
            .withColumn("h_headers_sorted", F.xxhash64(n_headers, F.array_sort("headers")))
            .withColumn("h_ts", F.xxhash64("ts_used"))
            .withColumn("key_sample", F.expr(f"substring(key, 1, {KEY_SAMPLE_BYTES})"))
            .withColumn("key_len", F.length("key"))
        )
        cols += ["h_value", "h_headers", "h_headers_sorted", "h_ts", "key_sample", "key_len"]
    return df.select(*cols)


def units(df: DataFrame, latest_topics: set[str]) -> DataFrame:
    """What is compared: every record, or for ``latest_topics`` the latest record of each key (keys
    whose latest record is a tombstone are deleted keys and left out; their order is not checked:
    ``idx`` of a unit is its rank among all records of its task, not among the units). A record kept only to be
    counted (:data:`MARK_LEFT_OUT`) is never a key's latest record: it stays as it is, to be counted."""
    if not latest_topics:
        return df
    in_latest = F.col("topic").isin(sorted(latest_topics))
    left_out = F.coalesce(F.col(MARK_STATE) == MARK_LEFT_OUT, F.lit(False)) if MARK_STATE in df.columns else F.lit(False)
    plain = df.filter(~in_latest | left_out)
    cols = [c for c in df.columns if c not in ("topic", "partition", "h_key")]
    latest = (
        df.filter(in_latest & ~left_out & ~F.col("key_null"))
        .groupBy("topic", "partition", "h_key")
        .agg(F.max_by(F.struct(*cols), F.col("offset")).alias("r"))
        .select("topic", "partition", "h_key", "r.*")
        .filter(~F.col("value_null"))
        .select(*df.columns)
    )
    return plain.unionByName(latest)


def without_marks(df: DataFrame, strip_mark_of: str | None, skip_marked_by: str | None,
                  two_origin: bool = False, keep_left_out: bool = False) -> DataFrame:
    """The copy-mark account of :mod:`.copy_marks` in Spark SQL built-ins (no Python on executors): records with a
    ``copied-from.<skip_marked_by>`` header are left out; a trailing ``copied-from.<strip_mark_of>`` header whose
    value is the alias is removed (and nothing else: a misplaced or wrong mark stays, so the record cannot match).
    An empty header array hashes as no headers (xxhash64 of an empty array leaves the seed unchanged; size 0).
    Where a mark is removed, :data:`MARK_STATE` says per record what was found (the checksum pass counts it); the
    records left out are dropped, or with ``keep_left_out`` (the checksum pass, which counts them as ``origin_target``
    as the native pass does) kept with :data:`MARK_STATE` :data:`MARK_LEFT_OUT`, their headers untouched. ``two_origin``:
    a record without the mark's key anywhere is this side's native (:data:`MARK_NATIVE`), told apart from a wrong one,
    as :func:`.copy_marks.strip_mark` tells MISSING from WRONG."""
    headers = F.coalesce(F.col("headers"), F.array().cast(df.schema["headers"].dataType))
    skipped: Column | None = None
    if skip_marked_by is not None:
        key = mark_header(skip_marked_by)
        skipped = F.exists(headers, lambda h: h["key"] == F.lit(key))
        if not keep_left_out:
            df, skipped = df.filter(~skipped), None
    if strip_mark_of is None and skipped is not None:
        return df.withColumn(MARK_STATE, F.when(skipped, F.lit(MARK_LEFT_OUT)))
    if strip_mark_of is not None:
        last = F.element_at(headers, -1)
        ok = (F.size(headers) > 0) & (last["key"] == F.lit(mark_header(strip_mark_of))) & \
            (last["value"] == F.lit(strip_mark_of.encode()))
        state = F.when(ok, F.lit(MARK_OK))
        if two_origin:
            key = mark_header(strip_mark_of)
            state = state.when(F.exists(headers, lambda h: h["key"] == F.lit(key)), F.lit(MARK_WRONG))
            state = state.otherwise(F.lit(MARK_NATIVE))
        else:
            state = state.otherwise(F.lit(MARK_WRONG))
        if skipped is not None:  # left out before anything is removed: its headers stay as they are
            state = F.when(skipped, F.lit(MARK_LEFT_OUT)).otherwise(state)
            ok = ok & ~skipped
        df = (df.withColumn(MARK_STATE, state)
              .withColumn("headers", F.when(ok, F.slice(headers, 1, F.size(headers) - 1)).otherwise(F.col("headers"))))
    return df


def plan_units(spark: SparkSession, plan: ReadPlan, detail: bool = True, keep_left_out: bool = False) -> DataFrame | None:
    """The compared units of one side. ``keep_left_out``: records the marks leave out are kept, with
    :data:`MARK_STATE` :data:`MARK_LEFT_OUT`, for the checksum pass to count (and to rank the rest without them)."""
    raw = read_records(spark, plan)
    if raw is None:
        return None
    if plan.strip_mark_of is not None or plan.skip_marked_by is not None:
        raw = without_marks(raw, plan.strip_mark_of, plan.skip_marked_by, plan.two_origin, keep_left_out)
    return units(fingerprinted(raw, plan.no_ts_topics, detail), plan.latest_per_key_topics)
