"""The Spark side of the validation job: read offset ranges of one cluster, fingerprint each record,
aggregate per partition (checksum), and the exact per-partition diff (full).

Only Spark SQL built-ins are used (no Python UDFs): executors need nothing but the spark-sql-kafka
jars, and the job runs unchanged on EMR, Glue and local Spark.

Fingerprint of one record (all 64-bit xxhash64, Spark's ``xxhash64`` with its fixed seed 42)::

    h_key     = xxhash64(key IS NULL, coalesce(key, X''))           -- null key != empty key
    h_value   = xxhash64(value IS NULL, coalesce(value, X''))       -- tombstone != empty value
    h_headers = xxhash64(size, [ (name, value IS NULL, value) ... ])  -- ordered: order and repeats count
    ts        = timestamp in ms, or 0 for LogAppendTime topics (excluded, with a warning)
    fp        = xxhash64(h_key, h_value, h_headers, ts)

Per partition the checksum is ``count`` plus ``sum(fp) mod 2^64`` (order-independent, and a duplicate
adds its hash again, so duplicates change it). The sum is computed exactly as three sums of 22-bit
slices (no overflow below 2^41 records per partition, ANSI mode or not) and folded on the driver.
The same sums over h_key, h_value, h_headers, the *sorted* headers and the timestamp hash tell, when
counts agree, which field differs (keys, values, headers, header order only, timestamps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

TP = tuple[str, int]
MASK64 = (1 << 64) - 1
_M22 = (1 << 22) - 1
COMPONENTS = ("fp", "h_key", "h_value", "h_headers", "h_headers_sorted", "h_ts")
KEY_SAMPLE_BYTES = 200
#: Up to this many differing fingerprint groups are explained (paired, sampled) on the driver after
#: one collect; more are explained by Spark jobs (bounded driver memory for any size of difference).
LOCAL_EXPLAIN_LIMIT = 20_000


@dataclass
class ReadPlan:
    """What to read from one cluster. Topic names are the *source* names (renames are mapped)."""

    options: dict[str, str]  #: spark kafka options (kafka.* client props)
    ranges: dict[TP, tuple[int, int]]  #: (topic, partition) -> [start, end) offsets on this cluster
    topic_names: dict[str, str] = field(default_factory=dict)  #: source name -> name on this cluster
    window: tuple[int | None, int | None] | None = None  #: global [from, until) on timestamps (ms)
    partition_windows: dict[TP, tuple[int, int]] | None = None  #: per-partition [from, until) instead
    no_ts_topics: set[str] = field(default_factory=set)  #: timestamps left out of the fingerprint
    latest_per_key_topics: set[str] = field(default_factory=set)
    min_partitions: int | None = None

    def restricted(self, tps: Iterable[TP]) -> "ReadPlan":
        keep = set(tps)
        return ReadPlan(
            self.options,
            {tp: r for tp, r in self.ranges.items() if tp in keep},
            self.topic_names,
            self.window,
            self.partition_windows,
            self.no_ts_topics,
            self.latest_per_key_topics,
            self.min_partitions,
        )


@dataclass
class Digest:
    """Checksum aggregates of one partition on one cluster."""

    count: int = 0
    min_ts: int | None = None
    max_ts: int | None = None
    null_keys: int = 0
    tombstones: int = 0
    sums: dict[str, int] = field(default_factory=lambda: {c: 0 for c in COMPONENTS})

    @property
    def fingerprint(self) -> str:
        return f"{self.sums['fp']:016x}"


# ---- reading ------------------------------------------------------------------------------------


def read_records(spark: SparkSession, plan: ReadPlan) -> DataFrame | None:
    """Raw Kafka rows of the plan's non-empty ranges (None when there is nothing to read)."""
    ranges = {tp: r for tp, r in plan.ranges.items() if r[1] > r[0]}
    if not ranges:
        return None
    assign: dict[str, list[int]] = {}
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for (topic, part), (start, end) in sorted(ranges.items()):
        name = plan.topic_names.get(topic, topic)
        assign.setdefault(name, []).append(part)
        starting.setdefault(name, {})[str(part)] = start
        ending.setdefault(name, {})[str(part)] = end
    reader = (
        spark.read.format("kafka")
        .options(**plan.options)
        .option("assign", json.dumps(assign))
        .option("startingOffsets", json.dumps(starting))
        .option("endingOffsets", json.dumps(ending))
        .option("includeHeaders", "true")
        .option("failOnDataLoss", "true")
    )
    if plan.min_partitions:
        reader = reader.option("minPartitions", str(plan.min_partitions))
    df = reader.load()
    renamed = {v: k for k, v in plan.topic_names.items() if k != v}
    if renamed:
        mapping = F.create_map(*[F.lit(x) for kv in renamed.items() for x in kv])
        df = df.withColumn("topic", F.coalesce(F.element_at(mapping, F.col("topic")), F.col("topic")))
    df = df.withColumn("ts_ms", F.expr("unix_millis(timestamp)"))
    if plan.partition_windows is not None:
        wins = [(t, p, lo, hi) for (t, p), (lo, hi) in plan.partition_windows.items()]
        wdf = spark.createDataFrame(wins, "w_topic string, w_partition int, w_from long, w_until long")
        df = (
            df.join(
                F.broadcast(wdf),
                (F.col("topic") == F.col("w_topic")) & (F.col("partition") == F.col("w_partition")),
                "inner",
            )
            .filter((F.col("ts_ms") >= F.col("w_from")) & (F.col("ts_ms") < F.col("w_until")))
            .drop("w_topic", "w_partition", "w_from", "w_until")
        )
    elif plan.window is not None:
        lo, hi = plan.window
        if lo is not None:
            df = df.filter(F.col("ts_ms") >= F.lit(lo))
        if hi is not None:
            df = df.filter(F.col("ts_ms") < F.lit(hi))
    return df


def fingerprinted(df: DataFrame, no_ts_topics: set[str]) -> DataFrame:
    """Adds h_key, h_value, h_headers, h_headers_sorted, ts_used, h_ts, fp and a key sample."""
    n_headers = F.coalesce(F.size("headers"), F.lit(0))
    canon = F.expr(
        "transform(headers, h -> named_struct('k', h.key, 'n', h.value IS NULL, 'v', coalesce(h.value, X'')))"
    )
    if no_ts_topics:
        ts_used = F.when(F.col("topic").isin(sorted(no_ts_topics)), F.lit(0).cast("long")).otherwise(F.col("ts_ms"))
    else:
        ts_used = F.col("ts_ms")
    return (
        df.withColumn("key_null", F.col("key").isNull())
        .withColumn("value_null", F.col("value").isNull())
        .withColumn("h_key", F.xxhash64(F.col("key_null"), F.coalesce(F.col("key"), F.expr("X''"))))
        .withColumn("h_value", F.xxhash64(F.col("value_null"), F.coalesce(F.col("value"), F.expr("X''"))))
        .withColumn("h_headers", F.xxhash64(n_headers, canon))
        .withColumn("h_headers_sorted", F.xxhash64(n_headers, F.array_sort(canon)))
        .withColumn("ts_used", ts_used)
        .withColumn("h_ts", F.xxhash64(F.col("ts_used")))
        .withColumn("fp", F.xxhash64("h_key", "h_value", "h_headers", "ts_used"))
        .withColumn("key_sample", F.expr(f"substring(key, 1, {KEY_SAMPLE_BYTES})"))
        .withColumn("key_len", F.length("key"))
        .select(
            "topic", "partition", "offset", "ts_ms", "ts_used", "key_null", "value_null", "key_sample", "key_len",
            "h_key", "h_value", "h_headers", "h_headers_sorted", "h_ts", "fp",
        )
    )


def units(df: DataFrame, latest_topics: set[str]) -> DataFrame:
    """What is compared: every record, or for ``latest_topics`` the latest record of each key (keys
    whose latest record is a tombstone are deleted keys and left out)."""
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


def plan_units(spark: SparkSession, plan: ReadPlan) -> DataFrame | None:
    raw = read_records(spark, plan)
    if raw is None:
        return None
    return units(fingerprinted(raw, plan.no_ts_topics), plan.latest_per_key_topics)


# ---- checksum -----------------------------------------------------------------------------------


def _slice_sums(name: str) -> list[Column]:
    return [
        F.sum(F.expr(f"{name} & {_M22}")).alias(f"{name}__0"),
        F.sum(F.expr(f"shiftrightunsigned({name}, 22) & {_M22}")).alias(f"{name}__1"),
        F.sum(F.expr(f"shiftrightunsigned({name}, 44)")).alias(f"{name}__2"),
    ]


def checksum(spark: SparkSession, plans: dict[str, ReadPlan]) -> dict[str, dict[TP, Digest]]:
    """Per-partition aggregates of each plan ("source", "target"), in one Spark job. Spark aggregates
    map-side (partial aggregation), so only one row per task and partition is shuffled, never
    records; the driver collects one row per partition and side."""
    out = {side: {tp: Digest() for tp in plan.ranges} for side, plan in plans.items()}
    frames = []
    for side, plan in plans.items():
        df = plan_units(spark, plan)
        if df is not None:
            frames.append(df.withColumn("side", F.lit(side)))
    if not frames:
        return out
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    aggs: list[Column] = [
        F.count(F.lit(1)).alias("n"),
        F.min("ts_ms").alias("min_ts"),
        F.max("ts_ms").alias("max_ts"),
        F.sum(F.col("key_null").cast("long")).alias("null_keys"),
        F.sum(F.col("value_null").cast("long")).alias("tombstones"),
    ]
    for comp in COMPONENTS:
        aggs += _slice_sums(comp)
    for row in df.groupBy("side", "topic", "partition").agg(*aggs).collect():
        d = Digest(row["n"], row["min_ts"], row["max_ts"], row["null_keys"] or 0, row["tombstones"] or 0)
        for comp in COMPONENTS:
            d.sums[comp] = (row[f"{comp}__0"] + (row[f"{comp}__1"] << 22) + (row[f"{comp}__2"] << 44)) & MASK64
        out[row["side"]][(row["topic"], row["partition"])] = d
    return out


def explain_checksum(src: Digest, tgt: Digest) -> list[str]:
    """Human explanation of a checksum mismatch from the component sums."""
    if src.count != tgt.count:
        delta = tgt.count - src.count
        word = "more" if delta > 0 else "fewer"
        return [f"target has {abs(delta)} {word} record(s) than the source ({tgt.count} vs {src.count})"]
    out = []
    if src.sums["h_key"] != tgt.sums["h_key"]:
        out.append("keys differ")
    if src.sums["h_value"] != tgt.sums["h_value"]:
        out.append("values differ" + (" (tombstone count differs)" if src.tombstones != tgt.tombstones else ""))
    if src.sums["h_headers_sorted"] != tgt.sums["h_headers_sorted"]:
        out.append("headers differ")
    elif src.sums["h_headers"] != tgt.sums["h_headers"]:
        out.append("header order differs (same headers, different order)")
    if src.sums["h_ts"] != tgt.sums["h_ts"]:
        out.append("timestamps differ")
    if not out:
        out.append("same records by field, differently combined (records were changed in several fields)")
    return out


# ---- full diff ----------------------------------------------------------------------------------


@dataclass
class DiffResult:
    missing: int = 0
    unexpected: int = 0
    duplicates: int = 0
    changed: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"missing": [], "unexpected": [], "duplicates": [], "changed": []}
    )


_SIDE_COLS = ("ts_ms", "ts_used", "h_key", "h_value", "h_headers", "h_headers_sorted", "key_sample", "key_null", "key_len")


def _grouped(df: DataFrame, p: str) -> DataFrame:
    return df.groupBy("topic", "partition", "fp").agg(
        F.count(F.lit(1)).alias(f"{p}_n"),
        F.min("offset").alias(f"{p}_first"),
        F.max("offset").alias(f"{p}_last"),
        *[F.first(c).alias(f"{p}_{c}") for c in _SIDE_COLS],
    )


def diff(
    spark: SparkSession,
    source: ReadPlan,
    target: ReadPlan,
    tps: list[TP],
    sample_size: int,
    on_phase: Callable[[str], None] = lambda _m: None,
) -> dict[TP, DiffResult]:
    """Exact multiset difference of the records (or latest-per-key units) of ``tps``."""
    out = {tp: DiffResult() for tp in tps}
    if not tps:
        return out
    empty_schema = None
    s_units = plan_units(spark, source.restricted(tps))
    t_units = plan_units(spark, target.restricted(tps))
    if s_units is None and t_units is None:
        return out
    if s_units is None or t_units is None:
        present = s_units if s_units is not None else t_units
        empty_schema = present.schema
    if s_units is None:
        s_units = spark.createDataFrame([], empty_schema)
    if t_units is None:
        t_units = spark.createDataFrame([], empty_schema)

    s = _grouped(s_units, "s")
    t = _grouped(t_units, "t")
    joined = (
        s.join(t, ["topic", "partition", "fp"], "full_outer")
        .withColumn("s_n", F.coalesce("s_n", F.lit(0)))
        .withColumn("t_n", F.coalesce("t_n", F.lit(0)))
        .filter(F.col("s_n") != F.col("t_n"))
    )
    mis = joined.persist(StorageLevel.MEMORY_AND_DISK)
    persisted = [mis]
    try:
        on_phase("diff: comparing records")
        counts = mis.groupBy("topic", "partition").agg(
            F.sum(F.when(F.col("s_n") > F.col("t_n"), F.col("s_n") - F.col("t_n")).otherwise(0)).alias("missing"),
            F.sum(F.when(F.col("s_n") == 0, F.col("t_n")).otherwise(0)).alias("unexpected"),
            F.sum(
                F.when((F.col("s_n") > 0) & (F.col("t_n") > F.col("s_n")), F.col("t_n") - F.col("s_n")).otherwise(0)
            ).alias("duplicates"),
            F.count(F.lit(1)).alias("groups"),
        )
        groups = 0
        for row in counts.collect():
            r = out.setdefault((row["topic"], row["partition"]), DiffResult())
            r.missing, r.unexpected, r.duplicates = int(row["missing"]), int(row["unexpected"]), int(row["duplicates"])
            groups += int(row["groups"])
        if not any(r.missing or r.unexpected or r.duplicates for r in out.values()):
            return out
        if groups <= LOCAL_EXPLAIN_LIMIT:
            on_phase("diff: explaining differences")
            _explain_local(mis.collect(), out, source.latest_per_key_topics, sample_size)
            return out

        on_phase("diff: explaining differences")
        pairs = _pairs(mis, source.latest_per_key_topics).persist(StorageLevel.MEMORY_AND_DISK)
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
            for row in _samples(mis, pairs, sample_size).collect():
                r = out[(row["topic"], row["partition"])]
                r.samples[row["category"]].append(_sample_dict(row))
            for r in out.values():
                for cat, items in r.samples.items():
                    items.sort(key=_sample_order)
        return out
    finally:
        for df in persisted:
            df.unpersist()


def _kinds(s: Any, t: Any) -> list[str]:
    kinds = []
    if s["s_h_value"] != t["t_h_value"]:
        kinds.append("value")
    if s["s_h_headers_sorted"] != t["t_h_headers_sorted"]:
        kinds.append("headers")
    elif s["s_h_headers"] != t["t_h_headers"]:
        kinds.append("header_order")
    if s["s_ts_used"] != t["t_ts_used"]:
        kinds.append("timestamp")
    return kinds


def _explain_local(rows: list[Any], out: dict[TP, DiffResult], latest_topics: set[str], n: int) -> None:
    """The driver-side twin of :func:`_pairs` + :func:`_samples` for small differences (same rules)."""
    missing = [r for r in rows if r["t_n"] == 0]
    unexpected = [r for r in rows if r["s_n"] == 0]
    by_key: dict[tuple, list[Any]] = {}
    for u in unexpected:
        by_key.setdefault((u["topic"], u["partition"], u["t_h_key"]), []).append(u)
    cands: dict[tuple, tuple[Any, Any]] = {}
    for m in missing:
        for u in by_key.get((m["topic"], m["partition"], m["s_h_key"]), []):
            if (
                m["s_ts_used"] == u["t_ts_used"]
                or (m["s_h_value"] == u["t_h_value"] and m["s_h_headers"] == u["t_h_headers"])
                or m["topic"] in latest_topics
            ):
                cands[(m["topic"], m["partition"], m["fp"], u["fp"])] = (m, u)
    best_t: dict[tuple, tuple] = {}
    best_s: dict[tuple, tuple] = {}
    for key, (m, u) in cands.items():
        sk, tk = key[:3], (key[0], key[1], key[3])
        if sk not in best_t or u["t_first"] < cands[best_t[sk]][1]["t_first"]:
            best_t[sk] = key
        if tk not in best_s or m["s_first"] < cands[best_s[tk]][0]["s_first"]:
            best_s[tk] = key
    pairs = [cands[k] for k in best_t.values() if best_s.get((k[0], k[1], k[3])) == k]
    paired_s = {(m["topic"], m["partition"], m["fp"]) for m, _u in pairs}
    paired_t = {(u["topic"], u["partition"], u["fp"]) for _m, u in pairs}
    samples: dict[tuple, list[dict[str, Any]]] = {}

    def add(cat: str, tp: TP, d: dict[str, Any]) -> None:
        samples.setdefault((tp, cat), []).append(d)

    for m, u in pairs:
        r = out[(m["topic"], m["partition"])]
        kinds = _kinds(m, u)
        r.changed += 1
        for k in kinds:
            r.changes[k] = r.changes.get(k, 0) + 1
        add("changed", (m["topic"], m["partition"]), {
            "key": m["s_key_sample"], "key_null": m["s_key_null"], "key_len": m["s_key_len"],
            "source_offset": m["s_first"], "target_offset": u["t_first"], "target_last": None,
            "timestamp": m["s_ts_ms"], "target_timestamp": u["t_ts_ms"], "copies": 1, "kinds": kinds,
            "category": "changed",
        })
    for r in out.values():
        r.changed = min(r.changed, r.missing, r.unexpected)
    for row in rows:
        tp, s_n, t_n = (row["topic"], row["partition"]), row["s_n"], row["t_n"]
        base = {"target_timestamp": None, "kinds": None}
        if s_n > t_n and (row["topic"], row["partition"], row["fp"]) not in paired_s:
            add("missing", tp, {**base, "category": "missing", "key": row["s_key_sample"], "key_null": row["s_key_null"],
                "key_len": row["s_key_len"], "source_offset": row["s_first"], "target_offset": row["t_first"],
                "target_last": None, "timestamp": row["s_ts_ms"], "copies": s_n - t_n})
        elif s_n == 0 and (row["topic"], row["partition"], row["fp"]) not in paired_t:
            add("unexpected", tp, {**base, "category": "unexpected", "key": row["t_key_sample"], "key_null": row["t_key_null"],
                "key_len": row["t_key_len"], "source_offset": None, "target_offset": row["t_first"],
                "target_last": row["t_last"], "timestamp": row["t_ts_ms"], "copies": t_n})
        elif 0 < s_n < t_n:
            add("duplicates", tp, {**base, "category": "duplicates", "key": row["t_key_sample"], "key_null": row["t_key_null"],
                "key_len": row["t_key_len"], "source_offset": row["s_first"], "target_offset": row["t_first"],
                "target_last": row["t_last"], "timestamp": row["s_ts_ms"], "copies": t_n - s_n})
    for (tp, cat), items in samples.items():
        items.sort(key=lambda d: (d["source_offset"] if d["source_offset"] is not None else d["target_offset"], d["target_offset"] or 0))
        chosen = [_sample_dict(d) for d in items[:n]]
        chosen.sort(key=_sample_order)
        out[tp].samples[cat] = chosen


def _pairs(mis: DataFrame, latest_topics: set[str]) -> DataFrame:
    """Missing and unexpected records that are the same record changed: same key and timestamp
    (value or headers changed), or same key, value and headers (timestamp changed); for latest-per-key
    topics the same key. Each record pairs at most once."""
    m = mis.filter(F.col("t_n") == 0).select(
        "topic", "partition", F.col("fp").alias("s_fp"), *[F.col(c) for c in mis.columns if c.startswith("s_")]
    )
    u = mis.filter(F.col("s_n") == 0).select(
        F.col("topic").alias("u_topic"),
        F.col("partition").alias("u_partition"),
        F.col("fp").alias("t_fp"),
        *[F.col(c) for c in mis.columns if c.startswith("t_")],
    )
    same_tp = (F.col("topic") == F.col("u_topic")) & (F.col("partition") == F.col("u_partition"))
    same_key = same_tp & (F.col("s_h_key") == F.col("t_h_key"))
    by_ts = m.join(u, same_key & (F.col("s_ts_used") == F.col("t_ts_used")), "inner")
    by_content = m.join(
        u,
        same_key
        & (F.col("s_h_value") == F.col("t_h_value"))
        & (F.col("s_h_headers") == F.col("t_h_headers")),
        "inner",
    )
    cands = by_ts.unionByName(by_content)
    if latest_topics:
        by_key = m.filter(F.col("topic").isin(sorted(latest_topics))).join(u, same_key, "inner")
        cands = cands.unionByName(by_key)
    cands = cands.dropDuplicates(["topic", "partition", "s_fp", "t_fp"])
    w_s = Window.partitionBy("topic", "partition", "s_fp").orderBy("t_first")
    w_t = Window.partitionBy("topic", "partition", "t_fp").orderBy("s_first")
    kinds = F.array_compact(
        F.array(
            F.when(F.col("s_h_value") != F.col("t_h_value"), F.lit("value")),
            F.when(F.col("s_h_headers_sorted") != F.col("t_h_headers_sorted"), F.lit("headers")),
            F.when(
                (F.col("s_h_headers_sorted") == F.col("t_h_headers_sorted"))
                & (F.col("s_h_headers") != F.col("t_h_headers")),
                F.lit("header_order"),
            ),
            F.when(F.col("s_ts_used") != F.col("t_ts_used"), F.lit("timestamp")),
        )
    )
    return (
        cands.withColumn("rs", F.row_number().over(w_s))
        .withColumn("rt", F.row_number().over(w_t))
        .filter((F.col("rs") == 1) & (F.col("rt") == 1))
        .withColumn("kinds", kinds)
    )


def _samples(mis: DataFrame, pairs: DataFrame, n: int) -> DataFrame:
    paired_s = pairs.select("topic", "partition", F.col("s_fp").alias("fp"))
    paired_t = pairs.select("topic", "partition", F.col("t_fp").alias("fp"))
    null_long = F.lit(None).cast("long")
    no_kinds = F.lit(None).cast("array<string>")
    missing = mis.filter(F.col("s_n") > F.col("t_n")).join(paired_s, ["topic", "partition", "fp"], "left_anti").select(
        F.lit("missing").alias("category"), "topic", "partition",
        F.col("s_key_sample").alias("key"), F.col("s_key_null").alias("key_null"), F.col("s_key_len").alias("key_len"),
        F.col("s_first").alias("source_offset"), F.col("t_first").alias("target_offset"), null_long.alias("target_last"),
        F.col("s_ts_ms").alias("timestamp"), null_long.alias("target_timestamp"),
        (F.col("s_n") - F.col("t_n")).alias("copies"), no_kinds.alias("kinds"),
    )
    unexpected = mis.filter(F.col("s_n") == 0).join(paired_t, ["topic", "partition", "fp"], "left_anti").select(
        F.lit("unexpected").alias("category"), "topic", "partition",
        F.col("t_key_sample").alias("key"), F.col("t_key_null").alias("key_null"), F.col("t_key_len").alias("key_len"),
        null_long.alias("source_offset"), F.col("t_first").alias("target_offset"), F.col("t_last").alias("target_last"),
        F.col("t_ts_ms").alias("timestamp"), null_long.alias("target_timestamp"),
        F.col("t_n").alias("copies"), no_kinds.alias("kinds"),
    )
    dups = mis.filter((F.col("s_n") > 0) & (F.col("t_n") > F.col("s_n"))).select(
        F.lit("duplicates").alias("category"), "topic", "partition",
        F.col("t_key_sample").alias("key"), F.col("t_key_null").alias("key_null"), F.col("t_key_len").alias("key_len"),
        F.col("s_first").alias("source_offset"), F.col("t_first").alias("target_offset"), F.col("t_last").alias("target_last"),
        F.col("s_ts_ms").alias("timestamp"), null_long.alias("target_timestamp"),
        (F.col("t_n") - F.col("s_n")).alias("copies"), no_kinds.alias("kinds"),
    )
    changed = pairs.select(
        F.lit("changed").alias("category"), "topic", "partition",
        F.col("s_key_sample").alias("key"), F.col("s_key_null").alias("key_null"), F.col("s_key_len").alias("key_len"),
        F.col("s_first").alias("source_offset"), F.col("t_first").alias("target_offset"), null_long.alias("target_last"),
        F.col("s_ts_ms").alias("timestamp"), F.col("t_ts_ms").alias("target_timestamp"),
        F.lit(1).cast("long").alias("copies"), F.col("kinds"),
    )
    allrows = missing.unionByName(unexpected).unionByName(dups).unionByName(changed)
    w = Window.partitionBy("topic", "partition", "category").orderBy(
        F.coalesce("source_offset", "target_offset"), "target_offset"
    )
    return allrows.withColumn("rn", F.row_number().over(w)).filter(F.col("rn") <= n).drop("rn")


def _key_repr(raw: bytes | bytearray | None, key_null: bool, key_len: int | None) -> dict[str, Any]:
    if key_null or raw is None:
        return {"key": None, "key_encoding": None}
    data = bytes(raw)
    truncated = key_len is not None and key_len > len(data)
    try:
        text = data.decode("utf-8")
        if text.isprintable():
            return {"key": text, "key_encoding": "utf8", **({"key_truncated": True} if truncated else {})}
    except UnicodeDecodeError:
        pass
    import base64

    return {"key": base64.b64encode(data).decode(), "key_encoding": "base64", **({"key_truncated": True} if truncated else {})}


def _sample_order(x: dict[str, Any]) -> tuple:
    return (x.get("source_offset") is None, x.get("source_offset") or 0, x.get("target_offset") or 0)


def _sample_dict(row: Any) -> dict[str, Any]:
    d: dict[str, Any] = _key_repr(row["key"], row["key_null"], row["key_len"])
    d["source_offset"] = row["source_offset"]
    d["target_offset"] = row["target_offset"]
    if row["target_last"] is not None and row["target_last"] != row["target_offset"]:
        d["target_last_offset"] = row["target_last"]
    d["timestamp"] = row["timestamp"]
    if row["target_timestamp"] is not None:
        d["target_timestamp"] = row["target_timestamp"]
    if row["category"] in ("missing", "unexpected", "duplicates"):
        d["copies"] = row["copies"]
    if row["kinds"] is not None:
        d["changed"] = list(row["kinds"])
    return d
