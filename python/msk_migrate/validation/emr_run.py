"""``msk-migrate validate --env E --on emr-serverless``: the same validation, run as an EMR Serverless job.

The command line is checked exactly as for a local run
(:func:`msk_migrate.commands.validate_request.build_request`: every option, the environment, the clusters),
then this module takes the checked request; it travels to the job as one document
(:mod:`.job_request`: the clusters with their Secrets Manager ARNs, since the job has no environment
file). Then, in this order and nothing before the checks pass:

1. the environment's application (``<prefix>-validation``, provisioned by ``migration-<env>``): none =
   one line naming ``--on emr-serverless`` and the fix, exit 2, nothing started;
2. the job package of this version that the build module shipped (:mod:`.job_package`): missing,
   incomplete, built for another release or from other code = one line, exit 2, nothing started;
3. one job run, followed state by state on the console;
4. its ``report.json``/``report.html`` copied from the run's S3 prefix to ``--validation-report`` (where
   ``cutover check --validation-report`` reads it); the exit code is the report's verdict (0 / 1).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.environment import EnvironmentConfig
from ..errors import UnreachableError, UsageError
from ..s3uri import split_s3_uri
from .request import ValidationRequest

OPTION = "--on emr-serverless"
REPORT_FILES = ("report.json", "report.html")


def environment(kw: dict[str, Any], option: str = OPTION, home: str = "application") -> EnvironmentConfig:
    """The ``--env`` environment (the job's home, role and bucket are named after it)."""
    from ..config.environment import load_environment
    from ..config.environment_files import environment_path

    value = kw.get("env")
    if not value:
        raise UsageError(option, f"needs --env NAME (the environment whose stack provisions the {home})", "add --env NAME")
    for opt, key in (("--offsets-snapshot", "offsets_snapshot"), ("--no-report", "no_report")):
        if kw.get(key):
            raise UsageError(opt, f"not with {option}: the job reads no local file and its report is the result",
                             "drop it, or validate without --on")
    path = Path(value) if value.endswith((".yaml", ".yml")) or "/" in value else environment_path(value)
    return load_environment(path)


def fetch_report(s3: Any, report_uri: str, destination: str) -> tuple[dict[str, Any], list[str]]:
    """Copy the run's report files from ``report_uri`` to ``destination`` (directory or s3:// prefix);
    returns ``report.json`` parsed and where the copies went."""
    from ..store import in_directory

    bucket, prefix = split_s3_uri(report_uri, OPTION)
    written: list[str] = []
    doc: dict[str, Any] = {}
    for name in REPORT_FILES:
        key = f"{prefix.strip('/')}/{name}"
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except Exception as exc:
            if name == "report.json":
                raise UnreachableError(f"the job run wrote no s3://{bucket}/{key} ({str(exc).splitlines()[0]}); "
                                       f"its driver log is under s3://{bucket}/validation/logs/") from None
            continue
        if name == "report.json":
            doc = json.loads(body)
        content_type = "application/json" if name.endswith(".json") else "text/html"
        written.append(in_directory(destination, "--validation-report", name).write(body, content_type))
    return doc, written


def run_job(cfg: EnvironmentConfig, document: Callable[[str], str], progress: Callable[[str], None], *,
            sleep: Callable[[float], None] | None = None) -> tuple[dict[str, Any], Any]:
    """Check the home and the package, submit one run of ``document(report_uri)`` (the encoded request whose
    outputs go to the run's own prefix) and follow it to its end. Returns the run (as shown) and the S3 client."""
    from ..aws import emr_serverless as emr_mod
    from . import job_package
    from .job_request import ARGUMENT

    run_name = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    report_uri = emr_mod.report_uri(cfg.config_bucket_name, run_name)
    arguments = [ARGUMENT, document(report_uri)]  # bad input: before any call
    emr, s3 = emr_mod.clients(cfg)
    progress(f"EMR Serverless: {cfg.stack_name}'s application {emr_mod.application_name(cfg)} (account {cfg.account_id}, {cfg.region})")
    app = emr_mod.find_application(emr, cfg)
    package = job_package.verified(s3, cfg.config_bucket_name, app)
    progress(f"job package s3://{package.bucket}/{package.prefix}")
    run = emr_mod.submit(emr, cfg, app["id"], package, arguments, report_uri=report_uri, run_name=run_name)
    progress(f"submitted job run {run.job_run_id} (report to {run.report_uri})")
    done = emr_mod.follow(emr, run, progress, sleep=sleep or time.sleep)
    return {"application_id": done.application_id, "job_run_id": done.job_run_id, "state": done.state,
            "details": done.details, "report_uri": done.report_uri}, s3


def run_on_emr_serverless(cfg: EnvironmentConfig, request: ValidationRequest, progress: Callable[[str], None], *,
                          sleep: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Check, submit, follow and fetch. Returns ``report.json`` as a dict (plus where it was written and the run)."""
    from .job_request import encode

    run, s3 = run_job(cfg, lambda uri: encode(dataclasses.replace(request, report_dir=uri)), progress, sleep=sleep)
    doc, written = fetch_report(s3, run["report_uri"], request.report_dir or "reports")
    return {"report": doc, "written": written, "job_run": run}


def validate_on_emr_serverless(cfg: EnvironmentConfig, request: ValidationRequest, output: str) -> int:
    """The command's ``--on emr-serverless`` branch: progress on the console, then the verdict (text) or
    the one JSON shape; returns the report's exit code (0 match / 1 mismatch)."""
    from .remote_run import show

    return show("EMR Serverless", "emr_serverless_job_run", lambda say: run_on_emr_serverless(cfg, request, say), output)
