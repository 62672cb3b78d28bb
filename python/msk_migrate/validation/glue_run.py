"""``msk-migrate validate --env E --on glue``: the same validation, run as a job run of the stack's Glue 5.0 job.

Exactly the ``--on emr-serverless`` flow (:mod:`.emr_run`) on the other home: the command line is checked as
for a local run, the checked request travels as one document (:mod:`.job_request`), then, in this order and
nothing before the checks pass:

1. the environment's Glue job (``<prefix>-validation``, provisioned by ``migration-<env>`` with
   ``validation.glue: true``): none = one line naming ``validation.glue`` and the fix, exit 2, nothing
   started; a job of that name tagged for another environment, or of another Glue release, is refused too;
2. the job package of this version that the build module shipped (:func:`.job_package.verified_for_glue`:
   present, from this code, complete, and its entry script at the job's script location);
3. one job run with ``--request`` and the digest's ``--extra-py-files``/``--extra-jars``, followed state by state;
4. its ``report.json``/``report.html`` copied to ``--validation-report`` (:func:`.emr_run.fetch_report`);
   the exit code is the report's verdict (0 / 1).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from ..config.environment import EnvironmentConfig
from .emr_run import fetch_report
from .request import ValidationRequest

OPTION = "--on glue"


def environment(kw: dict[str, Any]) -> EnvironmentConfig:
    """The ``--env`` environment (the job, its role and the bucket are named after it)."""
    from .emr_run import environment as env_of

    return env_of(kw, OPTION, "Glue job")


def run_job(cfg: EnvironmentConfig, document: Callable[[str], str], progress: Callable[[str], None], *,
            sleep: Callable[[float], None] | None = None) -> tuple[dict[str, Any], Any]:
    """Check the job and the package, start one run of ``document(report_uri)`` (the encoded request whose
    outputs go to the run's own prefix) and follow it to its end. Returns the run (as shown) and the S3 client."""
    from ..aws import emr_serverless as emr_mod
    from ..aws import glue as glue_mod
    from . import job_package

    run_name = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    report_uri = emr_mod.report_uri(cfg.config_bucket_name, run_name)
    encoded = document(report_uri)  # bad input: before any call
    glue, s3 = glue_mod.clients(cfg)
    progress(f"Glue: {cfg.stack_name}'s job {glue_mod.job_name(cfg)} (account {cfg.account_id}, {cfg.region})")
    glue_mod.find_job(glue, cfg)
    package = job_package.verified_for_glue(s3, cfg.config_bucket_name)
    progress(f"job package s3://{package.bucket}/{package.prefix}")
    run = glue_mod.submit(glue, cfg, package, encoded, report_uri=report_uri)
    progress(f"started job run {run.job_run_id} (report to {run.report_uri})")
    done = glue_mod.follow(glue, run, progress, sleep=sleep or time.sleep)
    return {"job_name": done.job_name, "job_run_id": done.job_run_id, "state": done.state, "details": done.details,
            "report_uri": done.report_uri}, s3


def run_on_glue(cfg: EnvironmentConfig, request: ValidationRequest, progress: Callable[[str], None], *,
                sleep: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Check, start, follow and fetch. Returns ``report.json`` as a dict (plus where it was written and the run)."""
    from .job_request import encode

    run, s3 = run_job(cfg, lambda uri: encode(dataclasses.replace(request, report_dir=uri)), progress, sleep=sleep)
    doc, written = fetch_report(s3, run["report_uri"], request.report_dir or "reports")
    return {"report": doc, "written": written, "job_run": run}


def validate_on_glue(cfg: EnvironmentConfig, request: ValidationRequest, output: str) -> int:
    """The command's ``--on glue`` branch: progress on the console, then the verdict (text) or the one JSON
    shape; returns the report's exit code (0 match / 1 mismatch)."""
    from .remote_run import show

    return show("Glue", "glue_job_run", lambda say: run_on_glue(cfg, request, say), output)
