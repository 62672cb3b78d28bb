"""``msk-migrate validate --follow --once --engine spark``: one chained Spark run on the persisted mark, as data
(an :class:`~msk_migrate.outcome.Outcome` of the follower's shape), wherever the run happened.

For volumes beyond one follower task the same incremental logic runs as Spark batch jobs, each started on a
schedule (cron, an EventBridge rule, an Airflow task) or by ``validate --follow --engine spark --on
emr-serverless|glue``, and each starting where the last one left the mark. The run itself is
:func:`.chained.chained_run` (the mark checked against the clusters exactly as the follower checks it, then
Spark compares ``[mark, end)`` per partition and writes the advanced mark); here it runs on a local session,
and :func:`outcome_of` turns its result, or a job run's ``follow.json``, into what the command prints. Exit 0
proven, 1 a mismatch, a truncated partition or nothing proven at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...access.secrets import SecretResolver
from ...outcome import Outcome, col, quiet
from ..request import ValidationRequest
from .chained import ChainedResult, chained_run
from .follower import FollowOptions
from .run import marks_view


def follow_chained(req: ValidationRequest, opts: FollowOptions, spark: Any = None,
                   say: Callable[[str], None] = quiet) -> Outcome:
    """One chained Spark run here (see the module doc); ``spark``: a session to use (default: a local one)."""
    from ..plan import confluent_metadata

    if spark is None:
        from ..spark_local import local_spark

        say("starting Spark (local)")
        spark = local_spark()
    result = chained_run(req, opts.mark, opts.migration, spark, confluent_metadata, SecretResolver(), say=say)
    return outcome_of(result, "one chained Spark run")


def outcome_of(result: ChainedResult, where: str, extra: dict[str, Any] | None = None) -> Outcome:
    """What the command prints of a chained run's result; ``where`` says where it ran (a note)."""
    notes = [f"mark: {result.mark} ({where}; the next run, or a follower, starts from it)"]
    if result.truncated:
        notes.append(f"[red]truncated: retention deleted source records past the mark of {len(result.truncated)} partition(s)[/]")
    return Outcome("validate --follow", result.verdict, result.exit_code, result.rows, dict(result.talked_to),
                   extra={"mark": result.mark, "migration": result.migration, "verdict_reason": result.verdict,
                          "engine": "spark", **(extra or {})},
                   views=[marks_view("proof: verified-up-to marks (chained Spark run)",
                                     col("this run", "proven_this_run", numeric=True))],
                   notes=notes)
