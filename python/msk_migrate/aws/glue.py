"""The validation job on AWS Glue 5.0: where the stack puts it, how a run is started, followed and checked.

With ``validation.glue: true`` the stack ``migration-<env>`` provisions (``infra/mskinfra/glue_validation.py``);
the names below are the contract between it and ``msk-migrate validate --on glue``:

- Spark job ``<prefix>-validation`` (Glue :data:`GLUE_VERSION`: Spark :data:`GLUE_SPARK`, Python 3.11,
  Java 17), tagged ``environment=<env>`` by the stack's default tags; its script is the version's entry
  script at a path that does not change with the package's digest (:func:`entry_key`: a Glue job's script
  is a property of the job, which only the stack writes), the digest's zip and jars travel per run as
  ``--extra-py-files`` / ``--extra-jars``;
- network connection ``<prefix>-validation`` (type NETWORK) in the first of the environment's subnets with
  the validation security group of the EMR Serverless home;
- role ``<prefix>-validation-glue`` (trusted by Glue of this account only): the EMR execution role's
  S3/secrets/MSK permissions plus the connection's network interfaces and ``/aws-glue/*`` logs.

The job package and the reports are the EMR Serverless ones (:mod:`.emr_serverless`): one package per
version, shipped by the build module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config.environment import EnvironmentConfig
from ..errors import UnreachableError, UsageError
from .emr_serverless import JOB_PREFIX, JobPackage
from .job_runs import RUN_TIMEOUT_MINUTES, poll_until_final

#: Glue release of the job: Spark 3.5 (the job's tested line), Scala 2.12, Python 3.11, Java 17.
GLUE_VERSION = "5.0"
#: Spark of :data:`GLUE_VERSION` (AWS Glue 5.0 release notes).
GLUE_SPARK = "3.5.4"
WORKER_TYPE = "G.1X"
#: Job run states (Glue API): the ones after which nothing changes any more.
FINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "TIMEOUT", "ERROR", "STOPPED", "EXPIRED"})
#: The option naming this platform (for error lines).
OPTION = "--on glue"
#: The setting that provisions the job (for error lines).
SETTING = "validation.glue"
#: The tag (the stack's default tags) naming the environment a job belongs to.
ENVIRONMENT_TAG = "environment"
#: Glue's own log groups (/aws-glue/jobs/output, /error, /logs-v2 ...).
LOG_GROUP_PREFIX = "/aws-glue/"
#: Minutes after which Glue stops a run (the job's timeout in the stack).
TIMEOUT_MINUTES = RUN_TIMEOUT_MINUTES


def job_name(cfg: EnvironmentConfig) -> str:
    return f"{cfg.resource_prefix}-validation"


def connection_name(cfg: EnvironmentConfig) -> str:
    return f"{cfg.resource_prefix}-validation"


def role_name(cfg: EnvironmentConfig) -> str:
    return f"{cfg.resource_prefix}-validation-glue"


def role_arn(cfg: EnvironmentConfig) -> str:
    return f"arn:{cfg.partition}:iam::{cfg.account_id}:role/{role_name(cfg)}"


def job_arn(cfg: EnvironmentConfig) -> str:
    return f"arn:{cfg.partition}:glue:{cfg.region}:{cfg.account_id}:job/{job_name(cfg)}"


def entry_key(version: str) -> str:
    """The entry script of ``version`` at a digest-free key: the Glue job's ``ScriptLocation``."""
    return f"{JOB_PREFIX}{version}/spark_entry.py"


def run_arguments(package: JobPackage, request_document: str) -> dict[str, str]:
    """The job run's ``Arguments``: the request document, the digest's zip and jars (per run, since the
    job's default arguments are the stack's and the digest changes with every build)."""
    args = {"--request": request_document, "--extra-py-files": package.uri(package.zip)}
    if package.jars:
        args["--extra-jars"] = ",".join(package.uri(j) for j in package.jars)
    return args


def find_job(glue: Any, cfg: EnvironmentConfig) -> dict[str, Any]:
    """The environment's Glue job; UsageError (exit 2, nothing started) when its stack has none, or when the
    job of that name belongs to another environment or runs another Glue release."""
    name = job_name(cfg)
    try:
        job = glue.get_job(JobName=name)["Job"]
    except Exception as exc:
        if getattr(exc, "response", {}).get("Error", {}).get("Code") == "EntityNotFoundException":
            raise UsageError(SETTING, f"{cfg.stack_name} has no Glue job {name} in account {cfg.account_id}, {cfg.region}",
                             f"set validation.glue: true in the environment file and deploy {cfg.stack_name}, "
                             "or validate --on emr-serverless") from None
        raise UnreachableError(f"Glue in {cfg.region}: {str(exc).splitlines()[0]}") from None
    try:
        tags = glue.get_tags(ResourceArn=job_arn(cfg)).get("Tags") or {}
    except Exception as exc:
        raise UnreachableError(f"Glue in {cfg.region}: tags of {name}: {str(exc).splitlines()[0]}") from None
    owner = tags.get(ENVIRONMENT_TAG)
    if owner != cfg.name:
        raise UsageError(OPTION, f"the Glue job {name} in account {cfg.account_id}, {cfg.region} belongs to "
                         f"{'environment ' + repr(owner) if owner else 'no environment (no environment tag)'}, not {cfg.name!r}",
                         f"give --env the environment that deployed it, or a distinct prefix to {cfg.name}'s environment file")
    if job.get("GlueVersion") != GLUE_VERSION:
        raise UsageError(OPTION, f"the Glue job {name} runs Glue {job.get('GlueVersion')}; the job package is built for "
                         f"Glue {GLUE_VERSION} (Spark {GLUE_SPARK}, Scala 2.12)", f"deploy {cfg.stack_name} of this version")
    return job


@dataclass(frozen=True)
class JobRun:
    job_name: str
    job_run_id: str
    report_uri: str
    state: str = "STARTING"
    details: str = ""


def submit(glue: Any, cfg: EnvironmentConfig, package: JobPackage, request_document: str, *, report_uri: str,
           timeout_minutes: int = TIMEOUT_MINUTES) -> JobRun:
    """Start one run of the environment's job with the request document (whose report goes to ``report_uri``)."""
    try:
        response = glue.start_job_run(JobName=job_name(cfg), Arguments=run_arguments(package, request_document),
                                      Timeout=timeout_minutes)
    except Exception as exc:
        raise UnreachableError(f"Glue StartJobRun of {job_name(cfg)}: {str(exc).splitlines()[0]}") from None
    return JobRun(job_name(cfg), response["JobRunId"], report_uri)


def follow(glue: Any, run: JobRun, progress: Callable[[str], None], *, poll_seconds: float = 10.0,
           sleep: Callable[[float], None] = time.sleep) -> JobRun:
    """Poll the run until it ends, telling ``progress`` each new state; returns the final state."""
    def read() -> tuple[str, str]:
        job = glue.get_job_run(JobName=run.job_name, RunId=run.job_run_id)["JobRun"]
        return job.get("JobRunState", "?"), job.get("ErrorMessage") or ""

    state, details = poll_until_final(read, FINAL_STATES, f"Glue job run {run.job_run_id}", progress,
                                      poll_seconds=poll_seconds, sleep=sleep)
    return JobRun(run.job_name, run.job_run_id, run.report_uri, state, details)


def clients(cfg: EnvironmentConfig) -> tuple[Any, Any]:
    """boto3 clients (glue, s3) of the environment's region."""
    try:
        import boto3

        session = boto3.session.Session(region_name=cfg.region)
        return session.client("glue"), session.client("s3")
    except Exception as exc:  # botocore config errors: no region, bad profile
        raise UnreachableError(f"Glue in {cfg.region}: {exc}") from None
