"""``run_validation(ValidationRequest) -> Report``: the whole job, callable from the CLI, spark-submit,
Glue, and the local rehearsal. Three steps:

1. **plan** (:mod:`.plan`): everything that can fail on bad input or an unreachable cluster, before
   Spark starts and before anything is written (exit 2);
2. **execute** (:func:`execute`): the checksum pass over both clusters (:mod:`.checksum`), then the
   full diff (:mod:`.diff`) of the partitions the mode asks for;
3. **explain** (:mod:`.verdicts`): statuses, counts and sentences per partition and topic, the report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..clients import SecretResolver
from ..errors import UnreachableError, UsageError
from .checksum import Digest, checksum
from .diff import LOCAL_EXPLAIN_LIMIT, DiffResult, diff
from .plan import ValidationPlan, make_plan
from .reading import TP
from .report import Report, check_destination
from .request import ValidationRequest, iso
from .verdicts import needs_diff, topic_results

Progress = Callable[[str], None]


def _spark_error(role: str, exc: BaseException) -> UnreachableError:
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    interesting = next(
        (ln for ln in lines if "Exception:" in ln and "Py4JJavaError" not in ln and "An error occurred" not in ln),
        lines[0] if lines else type(exc).__name__,
    )
    return UnreachableError(f"{role}: the Spark job failed reading the cluster: {interesting[:400]}")


def _spark_step(role: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (UsageError, UnreachableError):
        raise
    except Exception as exc:
        raise _spark_error(role, exc) from None


@dataclass
class Outcome:
    """What the Spark side found."""

    source: dict[TP, Digest]
    target: dict[TP, Digest]
    diffs: dict[TP, DiffResult]


def execute(plan: ValidationPlan, spark: Any, say: Progress, explain_limit: int = LOCAL_EXPLAIN_LIMIT) -> Outcome:
    """Checksum both sides, then diff what the mode asks for (full: every partition; auto: those whose
    checksum or order digest differs; checksum: none)."""
    req = plan.req
    assert plan.source is not None, "a plan always reads the source"
    if plan.target is None:  # offset snapshot: the target window comes from the source's records
        say(f"checksum: source ({len(plan.src_tps)} partitions)")
        src_dig = _spark_step("source", lambda: checksum(spark, {"source": plan.source}))["source"]
        tgt_plan = plan.snapshot_target(src_dig)
        say(f"checksum: target ({len(plan.tgt_tps)} partitions)")
        tgt_dig = _spark_step("target", lambda: checksum(spark, {"target": tgt_plan}))["target"]
    else:
        say(f"checksum: source and target ({len(plan.src_tps)} + {len(plan.tgt_tps)} partitions)")
        source_plan, target_plan = plan.source, plan.target
        tgt_plan = target_plan
        digests = _spark_step("source/target", lambda: checksum(spark, {"source": source_plan, "target": target_plan}))
        src_dig, tgt_dig = digests["source"], digests["target"]

    differing = needs_diff(plan, src_dig, tgt_dig)
    assert plan.target is not None
    fields = [tp for tp in differing if src_dig[tp].count == tgt_dig[tp].count and not src_dig[tp].same_records(tgt_dig[tp])]
    if req.mode == "checksum" and fields:  # which field differs: per-field sums of those partitions only
        say(f"checksum: per-field sums of {len(fields)} differing partition(s)")
        plans = {"source": plan.source.restricted(fields), "target": plan.target.restricted(fields)}
        detail = _spark_step("source/target", lambda: checksum(spark, plans, detail=True))
        for side, digests in (("source", src_dig), ("target", tgt_dig)):
            for tp in fields:
                digests[tp].sums = detail[side][tp].sums
    to_diff = {"full": plan.both, "auto": differing}.get(req.mode, [])
    diffs: dict[TP, DiffResult] = {}
    if to_diff:
        say(f"full diff of {len(to_diff)} partition(s)")
        order_tps = {tp for tp in to_diff if plan.order_checked(tp)}  # full: exact order everywhere
        diffs = _spark_step("source/target", lambda: diff(
            spark, plan.source, tgt_plan, to_diff, req.sample_size, on_phase=say,
            order_tps=order_tps, explain_limit=explain_limit,
        ))
    return Outcome(src_dig, tgt_dig, diffs)


def run_validation(
    request: ValidationRequest,
    spark: Any = None,
    progress: Progress | None = None,
    resolver: SecretResolver | None = None,
    explain_limit: int = LOCAL_EXPLAIN_LIMIT,
) -> Report:
    """Validate ``request``; returns the :class:`Report` (``report.verdict``: "match" | "mismatch",
    ``report.exit_code``: 0 | 1). Raises :class:`UsageError` / :class:`UnreachableError` (exit 2)
    before anything is written. When ``request.report_dir`` is set the JSON and HTML are written there
    (``report.locations``). ``spark``: an existing SparkSession (spark-submit, Glue, tests); default: a
    local one with the pinned spark-sql-kafka jars. ``explain_limit``: differing fingerprint groups
    explained on the driver (more are explained by Spark jobs)."""
    say = progress or (lambda _m: None)
    started = time.time()
    req = request
    if req.report_dir:
        check_destination(req.report_dir)
    plan = make_plan(req, resolver or SecretResolver(), say)

    if spark is None:
        say("starting local Spark")
        from .spark_local import local_spark

        spark = local_spark()
    outcome = execute(plan, spark, say, explain_limit)

    say("writing the report")
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
        window={**plan.window, "timestamp_slack_seconds": req.timestamp_slack_seconds,
                "grace_seconds": None if req.offsets_snapshot or req.until_timestamp_ms is not None else req.grace_seconds},
        clusters=req.describe(),
        topics=topic_results(plan, outcome.source, outcome.target, outcome.diffs),
        warnings=plan.warnings,
    )
    if req.report_dir:
        report.locations = report.write(req.report_dir)
    return report
