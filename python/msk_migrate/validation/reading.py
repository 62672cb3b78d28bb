"""Reading one cluster's offset ranges with Spark's Kafka source: what to read (:class:`ReadPlan`) and
the raw rows of it, renamed to source topic names and filtered to the time window.

Only Spark SQL built-ins are used by the job (no Python UDFs): executors need nothing but the
spark-sql-kafka jars, and the job runs unchanged on EMR, Glue and local Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

TP = tuple[str, int]

#: Consumer fetch sizes for a bulk read (Kafka's defaults are sized for many small consumers: 1 MiB per
#: partition fetch, 64 KiB socket buffer). ``--kafka-option`` overrides any of them.
FETCH_DEFAULTS = {
    "kafka.max.partition.fetch.bytes": str(8 << 20),
    "kafka.fetch.max.bytes": str(64 << 20),
    "kafka.receive.buffer.bytes": str(1 << 20),
}


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
    #: copy marks (:mod:`.copy_marks`): remove the trailing ``copied-from.<strip_mark_of>`` of each record (the
    #: target of a marked flow); leave out records carrying ``copied-from.<skip_marked_by>`` (its source)
    strip_mark_of: str | None = None
    skip_marked_by: str | None = None
    #: two-origin partitions (``--compare multiset``): a record with ``strip_mark_of``'s trailing mark is a copy of
    #: that cluster's record, any other one this cluster's own; the order digest ranks each origin's records apart
    two_origin: bool = False

    def restricted(self, tps: Iterable[TP]) -> ReadPlan:
        keep = set(tps)
        return replace(self, ranges={tp: r for tp, r in self.ranges.items() if tp in keep})


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
        .options(**{**FETCH_DEFAULTS, **plan.options})
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
        # A literal map "topic NUL partition" -> [from, until): SQL only (no Python-side DataFrame, so
        # executors never start a Python worker) and no join.
        wins = F.create_map(*[
            x for (t, p), (lo, hi) in sorted(plan.partition_windows.items())
            for x in (F.lit(f"{t}\u0000{p}"), F.array(F.lit(lo).cast("long"), F.lit(hi).cast("long")))
        ])
        win = F.element_at(wins, F.concat(F.col("topic"), F.lit("\u0000"), F.col("partition").cast("string")))
        df = df.filter(win.isNotNull() & (F.col("ts_ms") >= win[0]) & (F.col("ts_ms") < win[1]))
    elif plan.window is not None:
        lo, hi = plan.window
        if lo is not None:
            df = df.filter(F.col("ts_ms") >= F.lit(lo))
        if hi is not None:
            df = df.filter(F.col("ts_ms") < F.lit(hi))
    return df


