"""``msk-migrate validate --env E --on emr-serverless``: the same validation, run as an EMR Serverless job.

The command line is checked here exactly as for a local run (:func:`.cli.build_request`: every option,
the environment, the clusters), then translated into the job's own ``validate`` arguments with the
clusters spelled out (the job has no environment file): bootstrap servers, auth mode and the Secrets
Manager ARNs. Then, in this order and nothing before the checks pass:

1. the environment's application (``<prefix>-validation``, provisioned by ``migration-<env>``): none =
   one line naming ``--on emr-serverless`` and the fix, exit 2, nothing started;
2. the job package of this version in the config bucket (built by :mod:`.package` for the application's
   Spark and uploaded here when this version's is not there yet);
3. one job run, followed state by state on the console;
4. its ``report.json``/``report.html`` copied from the run's S3 prefix to ``--validation-report`` (where
   ``cutover check --validation-report`` reads it); the exit code is the report's verdict (0 / 1).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.environment import EnvironmentConfig
from ..config.migration import ClusterEndpoint
from ..errors import UnreachableError, UsageError
from ..s3uri import split_s3_uri
from .request import ValidationRequest

OPTION = "--on emr-serverless"
REPORT_FILES = ("report.json", "report.html")


def environment(kw: dict[str, Any]) -> EnvironmentConfig:
    """The ``--env`` environment (the application, role and bucket are named after it)."""
    from ..config.environment import load_environment
    from ..config.environment_files import environment_path

    value = kw.get("env")
    if not value:
        raise UsageError(OPTION, "needs --env NAME (the environment whose stack provisions the application)", "add --env NAME")
    for opt, key in (("--offsets-snapshot", "offsets_snapshot"), ("--no-report", "no_report")):
        if kw.get(key):
            raise UsageError(opt, f"not with {OPTION}: the job reads no local file and its report is the result",
                             "drop it, or validate without --on")
    path = Path(value) if value.endswith((".yaml", ".yml")) or "/" in value else environment_path(value)
    return load_environment(path)


def _cluster_args(role: str, side: ClusterEndpoint) -> list[str]:
    auth = side.auth
    if auth.mode in ("scram", "mtls") and not auth.secret_arn:
        raise UsageError(f"{role}.auth.secret_arn", f"the job reads {auth.mode} credentials from Secrets Manager only",
                         "name the secret's ARN in the environment file")
    args = [f"--{role}-bootstrap-servers", side.bootstrap_servers, f"--{role}-auth", auth.mode]
    if auth.secret_arn:
        args += [f"--{role}-secret-arn", auth.secret_arn]
    if auth.ca_secret_arn:
        args += [f"--{role}-ca-secret-arn", auth.ca_secret_arn]
    if auth.mode == "scram":
        args += [f"--{role}-scram-mechanism", auth.scram_mechanism, f"--{role}-scram-tls" if auth.tls else f"--{role}-scram-no-tls"]
    return args


def job_arguments(request: ValidationRequest, kw: dict[str, Any]) -> list[str]:
    """``validate``'s arguments for the job: the clusters from the checked request, the selection and
    tuning options as given (with the flow's default selection that :func:`.cli.build_request` filled in)."""
    args = [*_cluster_args("source", request.source), *_cluster_args("target", request.target), "--engine", "spark"]
    for t in request.topics:
        args += ["--topics", t]
    if request.topic_regex:
        args += ["--topic-regex", request.topic_regex]
    for r in kw.get("exclude_regex") or ():
        args += ["--exclude-regex", r]
    for pair in kw.get("topic_map") or ():
        args += ["--topic-map", pair]
    for opt, key in (("--from-timestamp", "from_timestamp"), ("--until-timestamp", "until_timestamp"), ("--mode", "mode"),
                     ("--grace-seconds", "grace_seconds"), ("--timestamp-slack-seconds", "timestamp_slack_seconds"),
                     ("--compacted", "compacted"), ("--isolation-level", "isolation_level"), ("--sample-size", "sample_size"),
                     ("--min-partitions", "min_partitions"), ("--metadata-timeout", "metadata_timeout")):
        if kw.get(key) is not None:
            args += [opt, str(kw[key])]
    for name in kw.get("ignore_config") or ():
        args += ["--ignore-config", name]
    for pair in kw.get("kafka_option") or ():
        args += ["--kafka-option", pair]
    if kw.get("allow_duplicates"):
        args.append("--allow-duplicates")
    if request.marks is not None:  # from --marks or the flow: the job has no flow file
        args += ["--marks", ",".join(a for a in (request.marks.source_alias, request.marks.target_alias) if a)]
    return [*args, "--output", "json"]


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


def publish_job_package(cfg: EnvironmentConfig, s3: Any, progress: Callable[[str], None]) -> Any:
    """Build this version's job package (:mod:`.package`, jars for the application's Spark) and upload it to
    ``s3://<config bucket>/validation/job/<version>/``; returns the uploaded :class:`JobPackage`."""
    import tempfile

    from .. import __version__
    from ..aws import emr_serverless as emr_mod
    from .package import build

    with tempfile.TemporaryDirectory(prefix="msk-migrate-job-") as tmp:
        progress(f"building the validation job package {__version__} (Spark {emr_mod.RELEASE_SPARK})")
        build(Path(tmp), emr_mod.RELEASE_SPARK)
        progress(f"uploading it to s3://{cfg.config_bucket_name}/{emr_mod.job_prefix(__version__)}")
        try:
            return emr_mod.upload_package(s3, Path(tmp), cfg.config_bucket_name, __version__)
        except Exception as exc:
            raise UnreachableError(f"upload to s3://{cfg.config_bucket_name}/: {str(exc).splitlines()[0]}") from None


def ensure_job_package(cfg: EnvironmentConfig, s3: Any, progress: Callable[[str], None]) -> Any:
    """This version's uploaded package, published first when the bucket has none yet."""
    from .. import __version__
    from ..aws import emr_serverless as emr_mod

    try:
        return emr_mod.find_package(s3, cfg.config_bucket_name, __version__)
    except UsageError:
        return publish_job_package(cfg, s3, progress)


def run_on_emr_serverless(cfg: EnvironmentConfig, request: ValidationRequest, kw: dict[str, Any], progress: Callable[[str], None], *,
                          sleep: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Submit, follow and fetch. Returns ``report.json`` as a dict (plus where it was written and the run)."""
    from ..aws import emr_serverless as emr_mod

    arguments = job_arguments(request, kw)
    destination = request.report_dir or "reports"
    emr, s3 = emr_mod.clients(cfg)
    progress(f"EMR Serverless: {cfg.stack_name}'s application {emr_mod.application_name(cfg)} (account {cfg.account_id}, {cfg.region})")
    app = emr_mod.find_application(emr, cfg)
    package = ensure_job_package(cfg, s3, progress)
    run_name = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    run = emr_mod.submit(emr, cfg, app["id"], package, arguments, run_name=run_name)
    progress(f"submitted job run {run.job_run_id} (report to {run.report_uri})")
    done = emr_mod.follow(emr, run, progress, sleep=sleep or time.sleep)
    doc, written = fetch_report(s3, done.report_uri, destination)
    return {"report": doc, "written": written, "job_run": {"application_id": done.application_id, "job_run_id": done.job_run_id,
                                                          "state": done.state, "details": done.details, "report_uri": done.report_uri}}


def validate_on_emr_serverless(cfg: EnvironmentConfig, request: ValidationRequest, kw: dict[str, Any], output: str) -> int:
    """The command's ``--on emr-serverless`` branch: progress on the console, then the verdict (text) or
    the one JSON shape; returns the report's exit code (0 match / 1 mismatch)."""
    from ..cliutil import emit_json, human
    from ..outcome import json_document

    con = human(output)
    with con.status("EMR Serverless") as status:
        def say(message: str) -> None:
            status.update(message)
            con.print(message)

        result = run_on_emr_serverless(cfg, request, kw, say)
    doc = result["report"]
    code = int(doc.get("exit_code", 1))
    talked_to = {**{role: (doc.get(role) or {}).get("bootstrap_servers") for role in ("source", "target")},
                 "emr_serverless_job_run": result["job_run"]["job_run_id"]}
    if output == "json":
        emit_json({**doc, "locations": result["written"], "job_run": result["job_run"],
                   **json_document(talked_to, doc.get("topics", []), str(doc.get("verdict")), code)})
    else:
        con.print(f"verdict: {doc.get('verdict')} ({doc.get('verdict_reason', '')})")
        for where in result["written"]:
            con.print(f"report: {where}")
    return code
