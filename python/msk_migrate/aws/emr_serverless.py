"""The validation job on EMR Serverless: where the stack puts it, how a run is submitted, followed and fetched.

The stack ``migration-<env>`` provisions one EMR Serverless application per environment
(``infra/mskinfra/emr_serverless.py``); the names below are the contract between it and
``msk-migrate validate --on emr-serverless`` (no output file to carry around):

- application ``<prefix>-validation`` (release :data:`RELEASE_LABEL`: Spark :data:`RELEASE_SPARK`), in the
  environment's subnets, with a security group that reaches both clusters;
- execution role ``<prefix>-validation-job``, scoped to the config bucket's ``validation/`` prefixes;
- the job package (``msk_migrate.validation.package``: zip, entry script, jars) under
  ``s3://<config bucket>/validation/job/<version>/<digest>/`` with its ``manifest.json``, shipped by the
  build module (``./build_images.py``, :mod:`msk_migrate.validation.job_package`) and never by a run;
- each run's report under ``s3://<config bucket>/validation/reports/<run>/``, then copied to
  ``--validation-report`` (where ``cutover check`` reads it) by the command that submitted it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..bucket_layout import JOB_PREFIX, LOGS_PREFIX, REPORTS_PREFIX
from ..config.environment import EnvironmentConfig
from ..errors import UnreachableError, UsageError
from .job_runs import RUN_TIMEOUT_MINUTES, poll_until_final

#: EMR release of the application: Spark 3.5 (the job's tested Spark line), Scala 2.12, Java 17.
RELEASE_LABEL = "emr-7.9.0"
#: Spark of :data:`RELEASE_LABEL` (the job package's jars are built for it).
RELEASE_SPARK = "3.5.5"
#: Job run states (EMR Serverless API): done ones, and the ones that passed the job's verdict on.
FINAL_STATES = frozenset({"SUCCESS", "FAILED", "CANCELLED"})
#: The option naming this platform (for error lines).
OPTION = "--on emr-serverless"


def application_name(cfg: EnvironmentConfig) -> str:
    return f"{cfg.resource_prefix}-validation"


def execution_role_name(cfg: EnvironmentConfig) -> str:
    return f"{cfg.resource_prefix}-validation-job"


def execution_role_arn(cfg: EnvironmentConfig) -> str:
    return f"arn:{cfg.partition}:iam::{cfg.account_id}:role/{execution_role_name(cfg)}"


def job_prefix(version: str) -> str:
    return f"{JOB_PREFIX}{version}/"


@dataclass(frozen=True)
class JobPackage:
    """Where a built job package lives in S3 (``s3://bucket/validation/job/<version>/``)."""

    bucket: str
    prefix: str
    entry: str
    zip: str
    jars: tuple[str, ...]

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def spark_submit_parameters(self) -> str:
        from ..access.spark_options import REDACTION_REGEX

        params = [f"--py-files {self.uri(self.zip)}", f"--conf spark.redaction.regex={REDACTION_REGEX}"]
        if self.jars:
            params.insert(0, "--jars " + ",".join(self.uri(j) for j in self.jars))
        return " ".join(params)


def report_uri(bucket: str, run_name: str) -> str:
    """Where one run writes its report (the job's request names it; the submitter fetches from it)."""
    return f"s3://{bucket}/{REPORTS_PREFIX}{run_name}/"


def find_application(emr: Any, cfg: EnvironmentConfig) -> dict[str, Any]:
    """The environment's application; UsageError (exit 2, nothing started) when its stack has none."""
    name = application_name(cfg)
    found = [a for page in emr.get_paginator("list_applications").paginate() for a in page.get("applications", [])
             if a.get("name") == name and a.get("state") != "TERMINATED"]
    if not found:
        raise UsageError(OPTION, f"{cfg.stack_name} has no EMR Serverless application {name} in account {cfg.account_id}, {cfg.region}",
                         f"deploy {cfg.stack_name} (it provisions the application), or validate without --on")
    return found[0]


@dataclass(frozen=True)
class JobRun:
    application_id: str
    job_run_id: str
    report_uri: str
    state: str = "SUBMITTED"
    details: str = ""


def submit(emr: Any, cfg: EnvironmentConfig, application_id: str, package: JobPackage, arguments: list[str],
           *, report_uri: str, run_name: str, timeout_minutes: int = RUN_TIMEOUT_MINUTES) -> JobRun:
    """Start one job run of the validation job with ``arguments`` (the request document, whose report goes
    to ``report_uri``)."""
    response = emr.start_job_run(
        applicationId=application_id,
        clientToken=str(uuid.uuid4()),
        executionRoleArn=execution_role_arn(cfg),
        name=f"msk-migrate-validate-{run_name}",
        jobDriver={"sparkSubmit": {"entryPoint": package.uri(package.entry), "entryPointArguments": arguments,
                                   "sparkSubmitParameters": package.spark_submit_parameters()}},
        configurationOverrides={"monitoringConfiguration": {"s3MonitoringConfiguration": {
            "logUri": f"s3://{package.bucket}/{LOGS_PREFIX}"}}},
        executionTimeoutMinutes=timeout_minutes,
        tags={"msk-migrate:environment": cfg.name},
    )
    return JobRun(application_id, response["jobRunId"], report_uri)


def follow(emr: Any, run: JobRun, progress: Callable[[str], None], *, poll_seconds: float = 10.0,
           sleep: Callable[[float], None] = time.sleep) -> JobRun:
    """Poll the run until it ends, telling ``progress`` each new state; returns the final state."""
    def read() -> tuple[str, str]:
        job = emr.get_job_run(applicationId=run.application_id, jobRunId=run.job_run_id)["jobRun"]
        return job.get("state", "?"), job.get("stateDetails") or ""

    state, details = poll_until_final(read, FINAL_STATES, f"EMR Serverless job run {run.job_run_id}", progress,
                                      poll_seconds=poll_seconds, sleep=sleep)
    return JobRun(run.application_id, run.job_run_id, run.report_uri, state, details)


def clients(cfg: EnvironmentConfig) -> tuple[Any, Any]:
    """boto3 clients (emr-serverless, s3) of the environment's region."""
    try:
        import boto3

        session = boto3.session.Session(region_name=cfg.region)
        return session.client("emr-serverless"), session.client("s3")
    except Exception as exc:  # botocore config errors: no region, bad profile
        raise UnreachableError(f"EMR Serverless in {cfg.region}: {exc}") from None
