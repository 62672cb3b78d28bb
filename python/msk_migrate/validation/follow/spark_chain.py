"""The follower's incremental logic as a Spark batch job chained on the persisted mark (docs/follow.md, "Scale").

One run (:func:`chain_pass`): load the mark, check it against the clusters (the follower's own
:func:`~.mark.check_against`: other clusters, a recreated topic, a changed partition count are refused, exit 2,
nothing written), read per following partition exactly ``[source_next, source end)`` and ``[target_next,
target end)`` with Spark's Kafka source (:mod:`..reading`), fingerprint every record with the batch job's
fingerprint (:func:`..fingerprint.fingerprinted`: key, value, headers in order, timestamp), pair the records of
each partition by rank (``row_number()`` over offset on each side, joined on topic, partition, rank), and write
the advanced mark with the same atomic store: past the last equal pair before the first unequal one, ``compared``
increased by the pairs proven; the first unequal pair stops the partition as a ``mismatch`` naming its offsets.
The next run (or a follower) starts from that mark; a failed run leaves the previous mark (nothing is written
before the job's results are collected).

A target record past the source's records (all pairs equal, the target's range longer) is a copy still to be
paired only if the source gained records since its end was listed; MM2 copies source to target, so the target is
only ever behind. Given ``source_ends`` (the clusters' ListOffsets), the run lists the source's ends again after
the job, that is after the target's end was listed: where the source holds nothing past the range read, the first
such target record has no source record and stops the partition as ``unexpected`` (a re-delivered copy included:
the batch report tells ``duplicates`` apart), as the batch verdict fails it, at the tail, in the middle or on a
partition the source did not write to. Elsewhere it waits for the next run. On a target partition the source does
not have (:func:`.mark.sourceless`) there is nothing to list: its first record is ``unexpected`` in that run.

Scope: every record is compared in order (no ``--allow-duplicates`` pass-over, no latest-per-key topics); a
mismatch is named by offsets and category ``different`` or ``unexpected`` (the field-level explanation is the
batch report's). Only Spark SQL built-ins run on the executors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..fingerprint import fingerprinted
from ..reading import ReadPlan, read_records
from .mark import ClusterFacts, Mark, check_against, sourceless
from .store import MarkStore

TP = tuple[str, int]


@dataclass(frozen=True)
class PartitionAdvance:
    """What one run proved on one partition."""

    topic: str
    partition: int
    proven: int  #: pairs compared and equal this run
    source_next: int
    target_next: int
    mismatch: dict | None = None
    #: the offset of the first target record past the source's records read (every pair before it equal)
    target_extra: int | None = None


def _ranked(spark: SparkSession, options: dict[str, str], ranges: dict[TP, tuple[int, int]], names: dict[str, str],
            no_ts: set[str], side: str) -> DataFrame | None:
    raw = read_records(spark, ReadPlan(options=options, ranges=ranges, topic_names=names, no_ts_topics=no_ts))
    if raw is None:
        return None
    fp = fingerprinted(raw, no_ts, detail=False)
    rank = F.row_number().over(Window.partitionBy("topic", "partition").orderBy("offset"))
    return fp.select("topic", "partition", rank.alias("n"), F.col("offset").alias(f"{side}_offset"),
                     F.col("fp").alias(f"{side}_fp"))


def compare_ranges(spark: SparkSession, source_options: dict[str, str], target_options: dict[str, str],
                   source_ranges: dict[TP, tuple[int, int]], target_ranges: dict[TP, tuple[int, int]],
                   target_names: dict[str, str], no_ts_topics: set[str] | None = None) -> dict[TP, PartitionAdvance]:
    """Per partition: the pairs proven from the start of its ranges, the first unequal pair, or else the first target
    record past the source's records (see the module doc). A partition with nothing of these is absent."""
    no_ts = no_ts_topics or set()
    src = _ranked(spark, source_options, source_ranges, {}, no_ts, "s")
    tgt = _ranked(spark, target_options, target_ranges, target_names, no_ts, "t")
    if tgt is None:
        return {}
    counted = (tgt.join(src.groupBy("topic", "partition").agg(F.max("n").alias("s_n")), ["topic", "partition"], "left")
               if src is not None else tgt.withColumn("s_n", F.lit(None).cast("long")))
    extra = counted.filter(F.col("n") == F.coalesce(F.col("s_n"), F.lit(0)) + 1).select("topic", "partition", "t_offset")
    out: dict[TP, PartitionAdvance] = {
        (t, p): PartitionAdvance(t, p, 0, s0, target_ranges[(t, p)][0]) for (t, p), (s0, _s1) in source_ranges.items()}
    if src is None:
        for r in extra.collect():
            tp = (r["topic"], int(r["partition"]))
            out[tp] = replace(out[tp], target_extra=int(r["t_offset"]))
        return {tp: a for tp, a in out.items() if a.target_extra is not None}
    pairs = src.join(tgt, ["topic", "partition", "n"])
    first_bad = pairs.filter(F.col("s_fp") != F.col("t_fp")).groupBy("topic", "partition").agg(F.min("n").alias("bad"))
    with_bad = pairs.join(first_bad, ["topic", "partition"], "left")
    proven = (with_bad.filter(F.col("bad").isNull() | (F.col("n") < F.col("bad")))
              .groupBy("topic", "partition")
              .agg(F.max("n").alias("proven"), F.max("s_offset").alias("s_last"), F.max("t_offset").alias("t_last")))
    stops = with_bad.filter(F.col("n") == F.col("bad")).select("topic", "partition", "s_offset", "t_offset")
    for r in proven.collect():
        tp = (r["topic"], int(r["partition"]))
        out[tp] = PartitionAdvance(tp[0], tp[1], int(r["proven"]), int(r["s_last"]) + 1, int(r["t_last"]) + 1)
    for r in stops.collect():
        tp = (r["topic"], int(r["partition"]))
        a = out[tp]
        out[tp] = PartitionAdvance(a.topic, a.partition, a.proven, a.source_next, a.target_next,
                                   {"category": "different", "source_offset": int(r["s_offset"]), "target_offset": int(r["t_offset"])})
    for r in extra.collect():
        tp = (r["topic"], int(r["partition"]))
        if out[tp].mismatch is None:
            out[tp] = replace(out[tp], target_extra=int(r["t_offset"]))
    return {tp: a for tp, a in out.items() if a.proven or a.mismatch or a.target_extra is not None}


def judge_target_extra(advances: dict[TP, PartitionAdvance], read_to: dict[TP, int], now: dict[TP, int],
                       is_sourceless: Callable[[TP], bool]) -> dict[TP, PartitionAdvance]:
    """``advances`` with every first target record past the source's records (``target_extra``) judged. It stops its
    partition as ``unexpected``, the mark at it, where it has no source record: the partition exists on the target
    only, or the source's end listed after the job (``now``) is not past the range the job read (``read_to``), so
    no source record written since can be copied to it. Elsewhere (no listed end, or the source grew) it waits for
    the next run."""
    out = dict(advances)
    for tp, a in advances.items():
        if a.mismatch is not None or a.target_extra is None:
            continue
        if is_sourceless(tp) or (tp in now and now[tp] <= read_to[tp]):
            out[tp] = replace(a, target_next=a.target_extra, mismatch={
                "category": "unexpected", "source_offset": a.source_next, "target_offset": a.target_extra})
    return out


def chain_pass(spark: SparkSession, store: MarkStore, facts: ClusterFacts, source_options: dict[str, str],
               target_options: dict[str, str], no_ts_topics: set[str] | None = None,
               source_ends: Callable[[list[TP]], dict[TP, int]] | None = None) -> tuple[Mark, dict[TP, PartitionAdvance]]:
    """One chained run on the mark at ``store`` (see the module doc); returns the written mark and what advanced.
    ``source_ends`` lists the source's end offsets now: without it a target record past the source's records
    waits, never judged (except on a target partition the source does not have: nothing can come for it)."""
    from ...errors import UsageError

    mark = store.load()
    if mark is None:
        raise UsageError(store.field, f"no proof mark at {store}", "start one with `msk-migrate validate --follow --once`")
    check_against(mark, facts, store.field)
    src_ranges: dict[TP, tuple[int, int]] = {}
    tgt_ranges: dict[TP, tuple[int, int]] = {}
    names: dict[str, str] = {}
    for (t, p), pm in mark.items():
        tf = facts.topics.get(t)
        if tf is None or pm.state != "following":
            continue
        names[t] = tf.target_name
        src_ranges[(t, p)] = (pm.source_next, tf.source_end.get(p, pm.source_next))
        tgt_ranges[(t, p)] = (pm.target_next, tf.target_end.get(p, pm.target_next))
    advances = compare_ranges(spark, source_options, target_options, src_ranges, tgt_ranges, names, no_ts_topics)
    ahead = [tp for tp, a in sorted(advances.items())
             if a.mismatch is None and a.target_extra is not None and not sourceless(mark, *tp)]
    # listed after the job, so after the target's end the job read to
    now = source_ends(ahead) if ahead and source_ends is not None else {}
    advances = judge_target_extra(advances, {tp: r[1] for tp, r in src_ranges.items()}, now,
                                  lambda tp: sourceless(mark, *tp))
    for (t, p), a in advances.items():
        pm = mark.partition(t, p)
        pm.compared += a.proven
        pm.source_next, pm.target_next = a.source_next, a.target_next
        if a.mismatch is not None:
            pm.state, pm.mismatch = "mismatch", a.mismatch
    mark.updated_ms = int(time.time() * 1000)
    store.save(mark)
    return mark, advances
