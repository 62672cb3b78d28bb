"""``msk-migrate validate --env E --follow --engine spark --on emr-serverless|glue``: the follower's chained Spark
runs on the stack's job home, the mark in the stack's bucket.

Each run is the job as shipped (:mod:`.spark_entry`) given a follow document (:mod:`.job_request`: the checked
request, the mark, the migration): it checks the mark against the clusters exactly as the follower does,
compares ``[mark, end)`` per partition, writes the advanced mark and its result (``follow.json``) under the
run's own ``validation/reports/<run>/`` prefix, where this side reads it back and prints it as a local chained
run prints (:func:`.follow.chain_run.outcome_of`). ``--once`` is one run; without it a run starts ``--interval``
seconds after the last one ended, each from the mark the last wrote, until SIGINT/SIGTERM (a run in flight is
followed to its end first: a mark is never left to a run nobody reads).

The mark lives where the stack's follower keeps it, ``s3://<config bucket>/proof/<migration>/proof-mark.json``:
the job's execution role may read and replace objects there and nowhere else of the bucket but its own
validation prefixes, so a ``--mark`` elsewhere is refused here (one line, exit 2) before anything is submitted.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import time
from collections.abc import Callable
from typing import Any

from ..config.environment import EnvironmentConfig, proof_key_prefix
from ..errors import UnreachableError, UsageError
from ..outcome import Outcome
from ..s3uri import split_s3_uri
from ..store import document as place_of
from .follow.chained import RESULT_NAME, ChainedResult
from .follow.store import DEFAULT_NAME
from .request import ValidationRequest

#: ``--on`` value -> (the home's name as shown, the run's key in ``talked_to``)
HOMES = {"emr-serverless": ("EMR Serverless", "emr_serverless_job_run"), "glue": ("Glue", "glue_job_run")}


def mark_location(cfg: EnvironmentConfig, given: str | None) -> str:
    """The mark a job run continues: the stack's own (``--mark`` absent), or ``given`` if it lies there."""
    prefix = proof_key_prefix(cfg.migration.name)
    home = f"s3://{cfg.config_bucket_name}/{prefix}"
    if given is None:
        return home + DEFAULT_NAME
    place = place_of(given, "--mark", DEFAULT_NAME)
    if not place.is_s3 or place.bucket != cfg.config_bucket_name or not place.name.startswith(prefix) or ".." in place.name.split("/"):
        raise UsageError("--mark", f"{given!r}: a job run's role reads and writes marks under {home} only",
                         f"drop --mark (that is the default with --on), or give a location under {home}")
    return str(place)


def fetch_result(s3: Any, run: dict[str, Any]) -> ChainedResult:
    """The run's ``follow.json``; none (the job refused its request or failed before a result): one line naming
    the run's state and where its driver log is."""
    bucket, prefix = split_s3_uri(run["report_uri"], "--on")
    key = f"{prefix.strip('/')}/{RESULT_NAME}"
    try:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except Exception:
        details = f": {run['details']}" if run.get("details") else ""
        raise UnreachableError(f"job run {run['job_run_id']} ended {run.get('state')}{details} and wrote no s3://{bucket}/{key}; "
                               f"its driver log is under s3://{bucket}/validation/logs/") from None
    try:
        return ChainedResult.from_dict(json.loads(body))
    except ValueError as exc:
        raise UnreachableError(f"s3://{bucket}/{key} is not a chained run's result ({exc})") from None


RunJob = Callable[..., tuple[dict[str, Any], Any]]


def follow_on(on: str, cfg: EnvironmentConfig, request: ValidationRequest, mark: str, *, once: bool, interval: float,
              say: Callable[[str], None], run_job: RunJob | None = None, sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """Chained runs on the home ``on`` (see the module doc); the Outcome of the last one, with every run listed."""
    from .follow.chain_run import outcome_of
    from .job_request import FollowTarget, encode

    home, run_key = HOMES[on]
    target = FollowTarget(mark, cfg.migration.name)

    def document(report_uri: str) -> str:
        return encode(dataclasses.replace(request, report_dir=report_uri), target)

    document(f"s3://{cfg.config_bucket_name}/validation/reports/check/")  # bad input: refused before any call
    if run_job is None:
        from . import emr_run, glue_run

        run_job = glue_run.run_job if on == "glue" else emr_run.run_job
    submit: RunJob = run_job
    stop = {"now": False}
    before: dict[signal.Signals, Any] = {}
    if not once:
        def _stop(_sig: int, _frame: Any) -> None:
            stop["now"] = True
            say("stopping after this run (the mark is written by the run in flight)")

        for sig in (signal.SIGTERM, signal.SIGINT):
            before[sig] = signal.signal(sig, _stop)
    runs: list[dict[str, Any]] = []
    try:
        while True:
            run, s3 = submit(cfg, document, say)
            result = fetch_result(s3, run)
            runs.append(run)
            proven = sum(int(r.get("proven_this_run", 0)) for r in result.rows)
            say(f"run {len(runs)} ({run['job_run_id']}): {result.verdict}, {proven:,} record(s) proven this run")
            if once or stop["now"]:
                break
            waited = 0.0
            while waited < interval and not stop["now"]:
                sleep(min(0.5, interval - waited))
                waited += 0.5
            if stop["now"]:
                break
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
    outcome = outcome_of(result, f"{len(runs)} chained run(s) on {home}", extra={"job_runs": runs})
    outcome.talked_to[run_key] = runs[-1]["job_run_id"]
    return outcome
