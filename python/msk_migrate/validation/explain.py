"""Explaining a diff: which missing and unexpected records are the same record changed (paired, with
the kinds of change), samples per category, and the first out-of-order points of a reordered
partition. Two engines with the same rules: on the driver for small differences
(:func:`explain_local`), as Spark jobs for large ones (:func:`pairs` + :func:`samples`).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .reading import TP

if TYPE_CHECKING:
    from .diff_result import DiffResult


def reorder_samples(mis: DataFrame, out: dict[TP, DiffResult], n: int) -> None:
    """The first ``n`` out-of-order points per partition (source order): the record and its source
    predecessor, with their first offsets on both sides."""
    w = Window.partitionBy("topic", "partition").orderBy("s_first")
    rows = (
        mis.filter(F.col("descent"))
        .withColumn("rn", F.row_number().over(w))
        .filter(F.col("rn") <= n)
        .select("topic", "partition", "s_first", "t_first", "prev_s", "prev_t", "s_key_sample", "s_key_null",
                "s_key_len", "s_ts_ms")
        .collect()
    )
    for row in sorted(rows, key=lambda r: (r["topic"], r["partition"], r["s_first"])):
        d = _key_repr(row["s_key_sample"], row["s_key_null"], row["s_key_len"])
        d.update({
            "source_offset": row["s_first"], "target_offset": row["t_first"], "timestamp": row["s_ts_ms"],
            "previous_source_offset": row["prev_s"], "previous_target_offset": row["prev_t"],
        })
        out[(row["topic"], row["partition"])].samples["reordered"].append(d)


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


def explain_local(rows: list[Any], out: dict[TP, DiffResult], latest_topics: set[str], n: int) -> None:
    """The driver-side twin of :func:`pairs` + :func:`samples` for small differences (same rules)."""
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
        chosen = [sample_dict(d) for d in items[:n]]
        chosen.sort(key=sample_order)
        out[tp].samples[cat] = chosen


def pairs(mis: DataFrame, latest_topics: set[str]) -> DataFrame:
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


def samples(mis: DataFrame, pairs: DataFrame, n: int) -> DataFrame:
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
    return {"key": base64.b64encode(data).decode(), "key_encoding": "base64", **({"key_truncated": True} if truncated else {})}


def sample_order(x: dict[str, Any]) -> tuple:
    return (x.get("source_offset") is None, x.get("source_offset") or 0, x.get("target_offset") or 0)


def sample_dict(row: Any) -> dict[str, Any]:
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
