"""``run_validation(ValidationRequest) -> Report``: the whole job, callable from the CLI, spark-submit,
Glue, and the local rehearsal.

Order: everything that can fail on bad input or an unreachable cluster happens before Spark starts
and before anything is written (exit 2). Then: checksum pass over the source, checksum pass over the
target, full diff of the partitions that need it (mode), report.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable

from .. import __version__
from ..errors import UnreachableError, UsageError
from . import kafka_meta as km
from ..clients import SecretResolver, admin_config, spark_kafka_options
from .report import PartitionResult, Report, SideDigest, TopicResult, check_destination
from .request import ValidationRequest, iso

Progress = Callable[[str], None]
TP = tuple[str, int]


def _select_topics(req: ValidationRequest, source_topics: dict[str, int]) -> list[str]:
    import re

    if req.offsets_snapshot:
        names = sorted(req.offsets_snapshot)
        for t in names:
            if t not in source_topics:
                raise UsageError("--offsets-snapshot", f"topic {t!r} does not exist on the source", "fix the snapshot")
        return names
    chosen: set[str] = set()
    for t in req.topics:
        if t not in source_topics:
            raise UsageError("--topics", f"topic {t!r} does not exist on the source", "check the name or use --topic-regex")
        chosen.add(t)
    if req.topic_regex:
        rx = re.compile(req.topic_regex)
        excl = [re.compile(r) for r in req.exclude_regexes]
        matched = {
            t for t in source_topics if rx.fullmatch(t) and not any(e.fullmatch(t) for e in excl)
        }
        if not matched and not chosen:
            raise UsageError("--topic-regex", f"{req.topic_regex!r} matches no source topic", "check the regex")
        chosen |= matched
    return sorted(chosen)


def _spark_error(role: str, exc: BaseException) -> UnreachableError:
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    interesting = next(
        (ln for ln in lines if "Exception:" in ln and "Py4JJavaError" not in ln and "An error occurred" not in ln),
        lines[0] if lines else type(exc).__name__,
    )
    return UnreachableError(f"{role}: the Spark job failed reading the cluster: {interesting[:400]}")


def run_validation(
    request: ValidationRequest,
    spark: Any = None,
    progress: Progress | None = None,
    resolver: SecretResolver | None = None,
) -> Report:
    """Validate ``request``; returns the :class:`Report` (``report.verdict``: "match" | "mismatch",
    ``report.exit_code``: 0 | 1). Raises :class:`UsageError` / :class:`UnreachableError` (exit 2)
    before anything is written. When ``request.report_dir`` is set the JSON and HTML are written there
    (``report.locations``). ``spark``: an existing SparkSession (spark-submit, Glue, tests); default: a
    local one with the pinned spark-sql-kafka jars."""
    say = progress or (lambda _m: None)
    started = time.time()
    req = request
    resolver = resolver or SecretResolver()
    if req.report_dir:
        check_destination(req.report_dir)

    # ---- inputs that need the clusters (exit 2 on any failure) ---------------------------------
    say("connecting to the clusters")
    opts = {
        "source": spark_kafka_options("source", req.source, resolver, req.isolation_level, req.kafka_options),
        "target": spark_kafka_options("target", req.target, resolver, req.isolation_level, req.kafka_options),
    }
    src = km.ClusterMeta("source", admin_config("source", req.source, resolver), req.metadata_timeout_seconds)
    tgt = km.ClusterMeta("target", admin_config("target", req.target, resolver), req.metadata_timeout_seconds)
    src_topics = src.topics()
    tgt_topics = tgt.topics()
    topics = _select_topics(req, src_topics)
    say(f"reading metadata of {len(topics)} topic(s)")
    src_meta = src.describe(topics)
    tgt_meta = tgt.describe([req.target_topic(t) for t in topics if req.target_topic(t) in tgt_topics])

    now_ms = int(time.time() * 1000)
    until = req.effective_until_ms(now_ms) if not req.offsets_snapshot else None
    frm = req.from_timestamp_ms if not req.offsets_snapshot else None
    slack = req.timestamp_slack_seconds * 1000
    iso_level = req.isolation_level

    src_tps = [(t, p) for t in topics for p in range(src_topics[t])]
    tgt_tps = [
        (t, p) for t in topics if req.target_topic(t) in tgt_topics for p in range(tgt_topics[req.target_topic(t)])
    ]
    tgt_name = {t: req.target_topic(t) for t in topics}

    def named(tps: list[TP]) -> list[TP]:
        return [(tgt_name[t], p) for t, p in tps]

    def unnamed(d: dict[TP, int]) -> dict[TP, int]:
        back = {v: k for k, v in tgt_name.items()}
        return {(back[t], p): o for (t, p), o in d.items()}

    src_latest = src.offsets(src_tps, km.latest(), iso_level)
    src_earliest = src.offsets(src_tps, km.earliest(), iso_level)
    tgt_latest = unnamed(tgt.offsets(named(tgt_tps), km.latest(), iso_level))
    tgt_earliest = unnamed(tgt.offsets(named(tgt_tps), km.earliest(), iso_level))

    def bounds(meta: km.ClusterMeta, windows: dict[TP, tuple[int | None, int | None]], earliest, latest, rename):
        """Per partition [start, end) offsets covering timestamps [lo - slack, hi + slack)."""
        q = (lambda d: {(tgt_name[t], p): v for (t, p), v in d.items()}) if rename else (lambda d: d)
        back = unnamed if rename else (lambda d: d)
        lo_specs = {tp: km.at_time(max(lo - slack, 0)) for tp, (lo, _hi) in windows.items() if lo is not None}
        hi_specs = {tp: km.at_time(hi + slack) for tp, (_lo, hi) in windows.items() if hi is not None}
        lo_found = back(meta.offsets_by_spec(q(lo_specs), iso_level))
        hi_found = back(meta.offsets_by_spec(q(hi_specs), iso_level))
        out = {}
        for tp in windows:
            start = earliest[tp] if tp not in lo_found else (lo_found[tp] if lo_found[tp] >= 0 else latest[tp])
            end = latest[tp] if tp not in hi_found else (hi_found[tp] if hi_found[tp] >= 0 else latest[tp])
            out[tp] = (start, max(start, end))
        return out

    warnings: list[str] = []
    if req.offsets_snapshot:
        src_ranges: dict[TP, tuple[int, int]] = {}
        for t, parts in req.offsets_snapshot.items():
            for p, rng in parts.items():
                if p >= src_topics[t]:
                    raise UsageError(f"--offsets-snapshot {t}", f"partition {p} does not exist (the topic has {src_topics[t]})")
                start = rng.start if rng.start is not None else src_earliest[(t, p)]
                if start < src_earliest[(t, p)]:
                    raise UsageError(
                        f"--offsets-snapshot {t}[{p}]",
                        f"start {start} is below the earliest offset {src_earliest[(t, p)]} (deleted by retention)",
                        "use a later start",
                    )
                if rng.end > src_latest[(t, p)]:
                    raise UsageError(
                        f"--offsets-snapshot {t}[{p}]",
                        f"end {rng.end} is beyond the latest {'committed ' if iso_level == 'read_committed' else ''}offset {src_latest[(t, p)]}",
                        "take the snapshot from this source cluster",
                    )
                src_ranges[(t, p)] = (start, rng.end)
        src_tps = sorted(src_ranges)
        tgt_tps = [tp for tp in tgt_tps if tp in src_ranges]
    else:
        src_ranges = bounds(src, {tp: (frm, until) for tp in src_tps}, src_earliest, src_latest, rename=False)

    # ---- topic-level decisions ------------------------------------------------------------------
    no_ts: set[str] = set()
    latest_topics: set[str] = set()
    for t in topics:
        s_m, t_m = src_meta.get(t), tgt_meta.get(tgt_name[t])
        if (s_m and s_m.log_append_time) or (t_m and t_m.log_append_time):
            no_ts.add(t)
            warnings.append(
                f"{t}: message.timestamp.type=LogAppendTime on the "
                f"{'source' if s_m and s_m.log_append_time else 'target'}: timestamps are excluded from the "
                "fingerprint, and the window is applied to each cluster's own append times"
            )
        if req.compacted == "latest-per-key" and s_m and s_m.compacted:
            latest_topics.add(t)

    from .sparkjob import ReadPlan, checksum, diff, explain_checksum

    src_plan = ReadPlan(
        opts["source"], src_ranges, {}, window=None if req.offsets_snapshot else (frm, until),
        no_ts_topics=no_ts, latest_per_key_topics=latest_topics, min_partitions=req.min_partitions,
    )

    if spark is None:
        say("starting local Spark")
        from .spark_local import local_spark

        spark = local_spark()

    # ---- checksum passes ------------------------------------------------------------------------
    def run_checksum(plans: dict[str, ReadPlan]) -> dict[str, dict[TP, Any]]:
        try:
            return checksum(spark, plans)
        except (UsageError, UnreachableError):
            raise
        except Exception as exc:  # noqa: BLE001 - py4j errors
            raise _spark_error("/".join(plans), exc) from None

    if req.offsets_snapshot:
        say(f"checksum: source ({len(src_tps)} partitions)")
        src_dig = run_checksum({"source": src_plan})["source"]
        # The target is compared over the timestamps the snapshot's records span, per partition.
        pw: dict[TP, tuple[int, int]] = {}
        for tp in tgt_tps:
            d = src_dig.get(tp)
            if d is None or d.count == 0 or d.min_ts is None:
                pw[tp] = (0, 0)
            else:
                pw[tp] = (d.min_ts, d.max_ts + 1 + (slack if tp[0] in no_ts else 0))
        empty = {tp for tp, (lo, hi) in pw.items() if hi <= lo}
        tgt_ranges = {tp: (tgt_latest[tp], tgt_latest[tp]) for tp in empty}
        tgt_ranges.update(
            bounds(tgt, {tp: (lo, hi - 1) for tp, (lo, hi) in pw.items() if tp not in empty}, tgt_earliest, tgt_latest, rename=True)
        )
        tgt_plan = ReadPlan(
            opts["target"], tgt_ranges, tgt_name, partition_windows=pw,
            no_ts_topics=no_ts, latest_per_key_topics=latest_topics, min_partitions=req.min_partitions,
        )
        window_desc = {"kind": "offsets", "partitions": len(src_ranges)}
        say(f"checksum: target ({len(tgt_tps)} partitions)")
        tgt_dig = run_checksum({"target": tgt_plan})["target"]
    else:
        tgt_ranges = bounds(tgt, {tp: (frm, until) for tp in tgt_tps}, tgt_earliest, tgt_latest, rename=True)
        tgt_plan = ReadPlan(
            opts["target"], tgt_ranges, tgt_name, window=(frm, until),
            no_ts_topics=no_ts, latest_per_key_topics=latest_topics, min_partitions=req.min_partitions,
        )
        window_desc = {
            "kind": "timestamps",
            "from_timestamp_ms": frm,
            "until_timestamp_ms": until,
            "from": iso(frm),
            "until": iso(until),
        }
        say(f"checksum: source and target ({len(src_tps)} + {len(tgt_tps)} partitions)")
        digests = run_checksum({"source": src_plan, "target": tgt_plan})
        src_dig, tgt_dig = digests["source"], digests["target"]

    # ---- compare, then diff what needs it ---------------------------------------------------------
    both = sorted(set(src_tps) & set(tgt_tps))
    differing = [
        tp for tp in both
        if src_dig[tp].count != tgt_dig[tp].count or src_dig[tp].sums["fp"] != tgt_dig[tp].sums["fp"]
    ]
    if req.mode == "full":
        to_diff = both
    elif req.mode == "auto":
        to_diff = differing
    else:
        to_diff = []
    diffs = {}
    if to_diff:
        say(f"full diff of {len(to_diff)} partition(s)")
        try:
            diffs = diff(spark, src_plan, tgt_plan, to_diff, req.sample_size, on_phase=say)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, (UsageError, UnreachableError)):
                raise
            raise _spark_error("source/target", exc) from None

    # ---- report ---------------------------------------------------------------------------------
    say("writing the report")
    topic_results = []
    for t in topics:
        s_m = src_meta.get(t)
        t_name = tgt_name[t]
        t_m = tgt_meta.get(t_name)
        n_src = src_topics[t]
        n_tgt = tgt_topics.get(t_name)
        tr = TopicResult(
            topic=t,
            target_topic=t_name,
            source_partitions=n_src,
            target_partitions=n_tgt,
            compare="latest-per-key" if t in latest_topics else "records",
            timestamps_in_fingerprint=t not in no_ts,
            timestamp_type={
                "source": s_m.configs.get("message.timestamp.type") if s_m else None,
                "target": t_m.configs.get("message.timestamp.type") if t_m else None,
            },
            cleanup_policy=s_m.configs.get("cleanup.policy") if s_m else None,
            config_differences=km.synced_config_differences(s_m, t_m, req.ignore_configs) if s_m else [],
        )
        if n_tgt is None:
            tr.problems.append(f"topic {t_name!r} does not exist on the target")
        elif n_tgt != n_src:
            tr.problems.append(f"partition count differs: source {n_src}, target {n_tgt}")
        for d in tr.config_differences:
            tr.problems.append(f"config {d['name']} differs: source {d['source']!r}, target {d['target']!r}")
        parts = sorted({p for (tt, p) in src_tps if tt == t} | {p for (tt, p) in tgt_tps if tt == t})
        for p in parts:
            tp = (t, p)
            sd = src_dig.get(tp) if tp in src_ranges else None
            td = tgt_dig.get(tp) if tp in tgt_ranges else None
            pr = PartitionResult(
                partition=p,
                source=SideDigest.of(sd, src_ranges.get(tp)) if sd is not None else None,
                target=SideDigest.of(td, tgt_ranges.get(tp)) if td is not None else None,
            )
            if sd is not None and td is None:
                pr.status = "missing_on_target"
                pr.method = "checksum"
                pr.missing, pr.unexpected, pr.duplicates = sd.count, 0, 0
                pr.differences.append("partition does not exist on the target")
            elif sd is None and td is not None:
                pr.status = "extra_on_target"
                pr.method = "checksum"
                pr.missing, pr.unexpected, pr.duplicates = 0, td.count, 0
                pr.differences.append("partition does not exist on the source")
            else:
                same = sd.count == td.count and sd.sums["fp"] == td.sums["fp"]
                if tp in diffs:
                    dr = diffs[tp]
                    pr.method = "full"
                    pr.missing, pr.unexpected, pr.duplicates = dr.missing, dr.unexpected, dr.duplicates
                    pr.changed, pr.changes, pr.samples = dr.changed, dr.changes, dr.samples
                    found = dr.missing or dr.unexpected or dr.duplicates
                    if found:
                        pr.differences.extend(_explain_diff(dr))
                        only_dups = not dr.missing and not dr.unexpected
                        pr.status = "duplicates" if (only_dups and req.allow_duplicates) else "mismatch"
                    elif not same:
                        pr.status = "mismatch"
                        pr.differences.append("checksums differ but the diff found no difference (data changed between passes?)")
                    else:
                        pr.status = "match"
                else:
                    pr.method = "checksum"
                    if same:
                        pr.status = "match"
                        pr.missing = pr.unexpected = pr.duplicates = 0
                        pr.changed = 0
                    else:
                        pr.status = "mismatch"
                        pr.differences.extend(explain_checksum(sd, td))
            tr.partitions.append(pr)
        tr.finish()
        if tr.status != "match" and s_m is not None and s_m.compacted and t not in latest_topics:
            tr.problems.append("compacted topic: the clusters compact independently; consider --compacted latest-per-key")
        topic_results.append(tr)

    from pyspark import __version__ as spark_version

    report = Report(
        run={
            "id": uuid.uuid4().hex[:12],
            "started_at": iso(int(started * 1000)),
            "finished_at": iso(int(time.time() * 1000)),
            "duration_seconds": round(time.time() - started, 3),
            "mode": req.mode,
            "compacted": req.compacted,
            "isolation_level": req.isolation_level,
            "allow_duplicates": req.allow_duplicates,
            "sample_size": req.sample_size,
            "tool_version": __version__,
            "spark_version": spark_version,
        },
        window={**window_desc, "timestamp_slack_seconds": req.timestamp_slack_seconds,
                "grace_seconds": None if req.offsets_snapshot or req.until_timestamp_ms is not None else req.grace_seconds},
        clusters=req.describe(),
        topics=topic_results,
        warnings=warnings,
    )
    if req.report_dir:
        report.locations = report.write(req.report_dir)
    return report


def _explain_diff(dr) -> list[str]:
    out = []
    if dr.missing:
        out.append(f"{dr.missing} record(s) missing on the target")
    if dr.unexpected:
        out.append(f"{dr.unexpected} unexpected record(s) on the target")
    if dr.duplicates:
        out.append(f"{dr.duplicates} duplicate record(s) on the target")
    if dr.changed:
        kinds = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(dr.changes.items()))
        out.append(f"{dr.changed} of these are records changed in place ({kinds})")
    return out
