"""``run_validation(ValidationRequest) -> Report``: the whole job, callable from the CLI, spark-submit,
Glue, and the local rehearsal. Three steps:

1. **plan** (:mod:`.plan`): everything that can fail on bad input or an unreachable cluster, before
   Spark starts and before anything is written (exit 2);
2. **execute** (:func:`execute`): the checksum pass over both clusters (:mod:`.checksum`), then the
   full diff (:mod:`.diff`) of the partitions the mode asks for;
3. **explain** (:mod:`.verdicts`): statuses, counts and sentences per partition and topic, the report.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..access.secrets import SecretResolver
from ..errors import UnreachableError, UsageError
from ..outcome import quiet
from .checksum import Digest, checksum
from .diff import LOCAL_EXPLAIN_LIMIT, diff
from .diff_result import DiffResult
from .plan import MetadataFactory, ValidationPlan, make_plan
from .reading import TP, ReadPlan
from .report import Report, check_destination, hide_keys, report_clusters
from .request import ValidationRequest, iso
from .schema_ids import TopicIds, tally
from .schema_proof import schema_rows
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
    #: Schema ids per topic, read in the checksum pass; None when the engine does not read them (Spark).
    schema_ids: dict[str, TopicIds] | None = None


class _Spark:
    """The SparkSession, started on first use (a native checksum pass that finds no difference never
    starts one)."""

    def __init__(self, session: Any, say: Progress):
        self.session, self.say = session, say

    def __call__(self) -> Any:
        if self.session is None:
            self.say("starting local Spark")
            from .spark_local import local_spark

            self.session = local_spark()
        return self.session


def engine_for(req: ValidationRequest, spark: Any) -> str:
    """``req.engine``, with auto resolved: native for a local run (no SparkSession given, no Spark-only
    option), spark otherwise."""
    if req.engine != "auto":
        return req.engine
    return "native" if spark is None and not req.kafka_options and req.min_partitions is None else "spark"


def _checksums(plan: ValidationPlan, spark: _Spark, engine: str, plans: dict[str, ReadPlan], say: Progress,
               detail: bool = False, tps: list[TP] | None = None,
               id_rows: list[Any] | None = None) -> dict[str, dict[TP, Digest]]:
    role = "/".join(plans)
    if engine == "native":
        from .kafka_meta import verbose_client_logs
        from .native import NativeReadError, native_checksum

        try:
            return native_checksum(plans, plan.client_confs, plan.req.isolation_level, detail=detail, tps=tps,
                                   verbose=verbose_client_logs(), say=say, id_rows=id_rows)
        except NativeReadError as exc:
            raise UnreachableError(f"{exc} (native checksum pass)") from None
    if tps is not None:
        plans = {side: p.restricted(tps) for side, p in plans.items()}
    return _spark_step(role, lambda: checksum(spark(), plans, detail=detail))


def execute(plan: ValidationPlan, spark: Any, say: Progress, explain_limit: int = LOCAL_EXPLAIN_LIMIT,
            engine: str = "spark") -> Outcome:
    """Checksum both sides (``engine``: spark or native), then diff what the mode asks for (full: every
    partition; auto: those whose checksum or order digest differs; checksum: none). ``spark``: a
    SparkSession, or a callable that returns one when first needed."""
    req = plan.req
    lazy = spark if isinstance(spark, _Spark) else _Spark(spark, say)
    how = " (native)" if engine == "native" else ""
    id_rows: list[Any] = []
    assert plan.source is not None, "a plan always reads the source"
    if plan.target is None:  # offset snapshot: the target window comes from the source's records
        say(f"checksum{how}: source ({len(plan.src_tps)} partitions)")
        src_dig = _checksums(plan, lazy, engine, {"source": plan.source}, say, id_rows=id_rows)["source"]
        tgt_plan = plan.snapshot_target(src_dig)
        say(f"checksum{how}: target ({len(plan.tgt_tps)} partitions)")
        tgt_dig = _checksums(plan, lazy, engine, {"target": tgt_plan}, say, id_rows=id_rows)["target"]
    else:
        say(f"checksum{how}: source and target ({len(plan.src_tps)} + {len(plan.tgt_tps)} partitions)")
        tgt_plan = plan.target
        digests = _checksums(plan, lazy, engine, {"source": plan.source, "target": plan.target}, say, id_rows=id_rows)
        src_dig, tgt_dig = digests["source"], digests["target"]

    differing = needs_diff(plan, src_dig, tgt_dig)
    assert plan.target is not None
    fields = [tp for tp in differing if src_dig[tp].count == tgt_dig[tp].count and not src_dig[tp].same_records(tgt_dig[tp])]
    if (req.mode == "checksum" or req.compare == "multiset") and fields:  # which field differs: per-field sums of those partitions only
        say(f"checksum{how}: per-field sums of {len(fields)} differing partition(s)")
        per_field = _checksums(plan, lazy, engine, {"source": plan.source, "target": plan.target}, say,
                               detail=True, tps=fields)
        for side, side_dig in (("source", src_dig), ("target", tgt_dig)):
            for tp in fields:
                side_dig[tp].sums = per_field[side][tp].sums
    # multiset: no full diff (it compares one order per partition); the checksum's explanation says what differs
    to_diff = [] if req.compare == "multiset" else {"full": plan.both, "auto": differing}.get(req.mode, [])
    diffs: dict[TP, DiffResult] = {}
    if to_diff:
        session = lazy()
        say(f"full diff of {len(to_diff)} partition(s)")
        order_tps = {tp for tp in to_diff if plan.order_checked(tp)}  # full: exact order everywhere
        diffs = _spark_step("source/target", lambda: diff(
            session, plan.source, tgt_plan, to_diff, req.sample_size, on_phase=say,
            order_tps=order_tps, explain_limit=explain_limit,
        ))
    schema_ids = tally(id_rows) if engine == "native" else None
    if engine != "native" and req.schema_registry is not None and not req.ignore_schemas:
        from .schema_spark import spark_id_rows

        say("schemas: reading the keys' and values' schema ids (Spark)")
        rows = _spark_step("source/target", lambda: spark_id_rows(lazy(), {"source": plan.source, "target": tgt_plan}))
        schema_ids = tally(rows)
    return Outcome(src_dig, tgt_dig, diffs, schema_ids)


def registries(req: ValidationRequest) -> dict[str, str] | None:
    """The registries' Confluent-API URLs of the request (the report records them), or None."""
    if req.schema_registry is None:
        return None
    return {"source": req.schema_registry.source, "target": req.schema_registry.target}


def _schema_warnings(engine: str, rows: Any, req: ValidationRequest) -> list[str]:
    if rows is None and req.schema_registry is None and not req.ignore_schemas:
        return [f"schema ids not read: the {engine} engine reads them only when registries are given; records "
                "carrying schema ids were compared as bytes only (docs/schema-proof.md)"]
    return []


def run_validation(
    request: ValidationRequest,
    spark: Any = None,
    progress: Progress | None = None,
    resolver: SecretResolver | None = None,
    explain_limit: int = LOCAL_EXPLAIN_LIMIT,
    metadata: MetadataFactory | None = None,
    s3: Any = None,
) -> Report:
    """Validate ``request``; returns the :class:`Report` (``report.verdict``: "match" | "mismatch",
    ``report.exit_code``: 0 | 1). Raises :class:`UsageError` / :class:`UnreachableError` (exit 2)
    before anything is written. When ``request.report_dir`` is set the JSON and HTML are written there
    (``report.locations``). ``spark``: an existing SparkSession (spark-submit, Glue, tests); default: a
    local one with the pinned spark-sql-kafka jars. ``explain_limit``: differing fingerprint groups
    explained on the driver (more are explained by Spark jobs). ``metadata`` and ``s3``: how the clusters
    are asked and where an S3 report is written from (confluent-kafka and boto3 by default; the Spark job
    passes its JVM's, :mod:`.spark_entry`)."""
    say = progress or quiet
    started = time.time()
    req = request
    if req.report_dir:
        check_destination(req.report_dir, s3)
    plan = make_plan(req, resolver or SecretResolver(), say, metadata)

    engine = engine_for(req, spark)
    outcome = execute(plan, _Spark(spark, say), say, explain_limit, engine)

    rows = None
    if outcome.schema_ids is not None:
        if req.schema_registry is not None and not req.ignore_schemas:
            say(f"schemas: resolving {len({i for t in outcome.schema_ids.values() for i in t.ids})} schema id(s) "
                "on both registries")
        rows = schema_rows(outcome.schema_ids, plan.topics, registries(req), req.ignore_schemas)
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
            "checksum_engine": engine,
            "engine": engine,
            **({"copy_marks": dataclasses.asdict(req.marks)} if req.marks is not None else {}),
            **({"compare": req.compare} if req.compare != "records" else {}),
        },
        window={**plan.window, "timestamp_slack_seconds": req.timestamp_slack_seconds,
                "grace_seconds": None if req.offsets_snapshot or req.until_timestamp_ms is not None else req.grace_seconds},
        clusters=report_clusters(req, plan.cluster_ids),
        environment=req.environment,
        topics=topic_results(plan, outcome.source, outcome.target, outcome.diffs, rows),
        warnings=plan.warnings + _schema_warnings(engine, rows, req),
        schema_registry=registries(req),
    )
    if not req.show_keys:
        hide_keys(report.topics)  # before anything is written or printed: keys can hold personal data
    if req.report_dir:
        report.locations = report.write(req.report_dir, s3)
    return report
