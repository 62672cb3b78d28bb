"""`msk-migrate validate --env E --on emr-serverless` against moto's EMR Serverless and S3 APIs: the job run
is submitted to the environment's application with the clusters spelled out, followed to its end, and its
report is copied to --validation-report (where `cutover check` reads it); the exit code is the report's.

The job itself is tested on local Spark and a standalone cluster (test_validation_standalone.py). moto's
EMR Serverless accepts a job run and reports SUCCESS at once without running anything, so the shim below
(:class:`JobWritesReport`, test code only) plays the job's one visible effect: it writes the report a run
would write to the ``--validation-report`` prefix it was given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from msk_migrate import __version__
from msk_migrate.aws import emr_serverless as emr_mod
from msk_migrate.config.environment import load_environment
from msk_migrate.outcome import quiet
from msk_migrate.validation import job_package

TIERS = ("aws",)
REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "infra" / "environments" / "dev.yaml"
TARGET = "b-1.msk-migrate-dev.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"


class JobWritesReport:
    """moto limitation: EMR Serverless job runs run nothing. On StartJobRun, write ``report`` where the run was told."""

    def __init__(self, app) -> None:
        self.app = app
        self.report: dict = {}
        #: what a follow document's run writes (``follow.json``); None: the run writes nothing (it failed early)
        self.follow_result: dict | None = None
        self.documents: list[dict] = []

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] == "POST" and re.fullmatch(r"/applications/[^/]+/jobruns", environ.get("PATH_INFO", "")):
            import io

            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            args = json.loads(body)["jobDriver"]["sparkSubmit"]["entryPointArguments"]
            document = json.loads(args[args.index("--request") + 1])
            self.documents.append(document)
            from tests.infra.moto_shims import job_run_outputs

            job_run_outputs(document, self.report, self.follow_result)
        return self.app(environ, start_response)


@pytest.fixture
def aws(monkeypatch):
    from tests.infra.moto_shims import served

    cfg = load_environment(DEV)
    with served(monkeypatch, JobWritesReport, cfg.region, cfg.account_id) as shim:
        import boto3

        yield shim, boto3.client("s3"), boto3.client("emr-serverless"), cfg


def _bucket(s3, cfg) -> str:
    bucket = cfg.config_bucket_name
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": cfg.region})
    return bucket


def _application(emr, cfg, release: str = emr_mod.RELEASE_LABEL) -> str:
    found = [a for a in emr.list_applications()["applications"] if a["name"] == emr_mod.application_name(cfg)]
    if found:
        return found[0]["id"]
    return emr.create_application(name=emr_mod.application_name(cfg), releaseLabel=release, type="SPARK")["applicationId"]


def _deployed(s3, emr, cfg) -> str:
    """What migration-dev and the build module leave: the config bucket with this version's job package
    (shipped as ./build_images.py ships it), the application."""
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    return _application(emr, cfg)


def _runs(emr, app_id: str) -> list:
    """The application's job runs. moto limitation: ListJobRuns of an application that never ran a job answers
    ResourceNotFoundException (EMR answers an empty list)."""
    try:
        return emr.list_job_runs(applicationId=app_id)["jobRuns"]
    except emr.exceptions.ResourceNotFoundException:
        return []


def _package_objects(s3, cfg) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=cfg.config_bucket_name, Prefix="validation/job/").get("Contents", [])]


def _report(verdict: str, exit_code: int) -> dict:
    return {"schema_version": 1, "verdict": verdict, "verdict_reason": f"{verdict} (from the job)", "exit_code": exit_code,
            "source": {"bootstrap_servers": "kafka-1.dev.corp.example:9093"}, "target": {"bootstrap_servers": TARGET},
            "topics": [{"topic": "orders.created", "verdict": verdict}]}


def test_submits_follows_and_fetches_the_report_where_the_gate_reads_it(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    shim.report = _report("match", 0)
    dest = tmp_path / "validation-1"
    code, out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(dest), "--output", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "match" and doc["exit_code"] == 0
    assert doc["talked_to"]["target"] == TARGET
    assert doc["locations"] == [str(dest / "report.json"), str(dest / "report.html")]
    assert json.loads((dest / "report.json").read_text()) == shim.report  # the gate's --validation-report reads this
    assert "EMR Serverless job run" in err and "SUCCESS" in err and "msk-migrate-dev-validation" in err

    (run,) = emr.list_job_runs(applicationId=app_id)["jobRuns"]
    job = emr.get_job_run(applicationId=app_id, jobRunId=run["id"])["jobRun"]
    assert job["executionRole"] == f"arn:aws:iam::{cfg.account_id}:role/msk-migrate-dev-validation-job"
    driver = job["jobDriver"]["sparkSubmit"]
    manifest = job_package.read_manifest(s3, cfg.config_bucket_name)
    prefix = f"s3://{cfg.config_bucket_name}/validation/job/{__version__}/{manifest.digest}/"
    assert driver["entryPoint"] == prefix + "spark_entry.py"
    assert f"--py-files {prefix}msk_migrate.zip" in driver["sparkSubmitParameters"]
    assert "--jars " + ",".join(f"{prefix}{f}" for f in sorted(manifest.files) if f.startswith("jars/")) in driver["sparkSubmitParameters"]
    args = driver["entryPointArguments"]

    # One serialised value: the checked request (the job has no environment file: the clusters and their
    # Secrets Manager ARNs are in it, the flow's selection too), never re-spelled as options.
    assert len(args) == 2 and args[0] == "--request"
    doc = json.loads(args[1])
    assert doc["kind"] == "msk-migrate/validation-request" and doc["tool_version"] == __version__
    request = doc["request"]
    assert request["source"]["bootstrap_servers"] == cfg.source.bootstrap_servers
    assert request["source"]["auth"]["mode"] == "scram" and request["source"]["auth"]["secret_arn"] == cfg.source.auth.secret_arn
    assert request["source"]["auth"]["ca_secret_arn"] == cfg.source.auth.ca_secret_arn
    assert request["target"]["bootstrap_servers"] == TARGET and request["target"]["auth"]["mode"] == "iam"
    assert request["topic_regex"] == "|".join(f"(?:{r})" for r in cfg.migration.topics)
    assert request["engine"] == "spark"
    assert request["report_dir"].startswith(f"s3://{cfg.config_bucket_name}/validation/reports/")
    from msk_migrate.validation.job_request import decode

    assert decode(args[1]).request.source.bootstrap_servers == cfg.source.bootstrap_servers  # what the job reads back


def test_no_shipped_package_is_one_line_naming_the_build_module_and_nothing_is_uploaded_or_started(aws, msk_migrate_cli, tmp_path: Path) -> None:
    _shim, s3, emr, cfg = aws
    _bucket(s3, cfg)
    app_id = _application(emr, cfg)
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(tmp_path / "r"))
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: --on emr-serverless: no validation job package of msk-migrate {__version__} in s3://"), err
    assert "./build_images.py ACCOUNT REGION --env ENV" in last
    assert _package_objects(s3, cfg) == [] and _runs(emr, app_id) == []


def test_a_package_built_from_other_code_is_refused_before_submitting(aws, msk_migrate_cli, tmp_path: Path) -> None:
    _shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    key = f"validation/job/{__version__}/manifest.json"
    doc = json.loads(s3.get_object(Bucket=cfg.config_bucket_name, Key=key)["Body"].read())
    shipped = job_package.Manifest(doc["tool_version"], doc["release_label"], doc["spark_version"], doc["connector_spark"],
                                   {**doc["files"], "msk_migrate.zip": "0" * 64})  # the same version, other code
    s3.put_object(Bucket=cfg.config_bucket_name, Key=key, Body=shipped.to_json().encode())
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert "was built from other code than this msk-migrate" in err.strip().splitlines()[-1], err
    assert _runs(emr, app_id) == []


def test_a_package_for_another_release_than_the_applications_is_refused(aws, msk_migrate_cli, tmp_path: Path) -> None:
    _shim, s3, emr, cfg = aws
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    app_id = _application(emr, cfg, release="emr-7.8.0")
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(tmp_path / "r"))
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert f"is built for {emr_mod.RELEASE_LABEL}" in last and "runs emr-7.8.0" in last, err
    assert _runs(emr, app_id) == []


def test_shipping_twice_uploads_once_and_the_manifest_names_every_file_by_digest(aws) -> None:
    _shim, s3, _emr, cfg = aws
    first, uploaded = job_package.ship(s3, _bucket(s3, cfg), quiet)
    again, uploaded_again = job_package.ship(s3, cfg.config_bucket_name, quiet)
    assert uploaded and not uploaded_again and again.digest == first.digest  # reproducible: same code, same digest
    keys = set(_package_objects(s3, cfg))
    # the files by digest, the manifest, and the entry script again at the Glue job's digest-free script location
    assert keys == ({f"validation/job/{__version__}/manifest.json", f"validation/job/{__version__}/spark_entry.py"}
                    | {first.prefix() + f for f in first.files})
    assert {"msk_migrate.zip", "spark_entry.py"} <= set(first.files) and any(f.startswith("jars/spark-sql-kafka") for f in first.files)
    assert first.files["msk_migrate.zip"] == job_package.local_code_digest()


def test_a_mismatch_in_the_jobs_report_is_exit_1(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, emr, cfg = aws
    _deployed(s3, emr, cfg)
    shim.report = _report("mismatch", 1)
    code, out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(tmp_path / "r"))
    assert code == 1, err
    assert "verdict: mismatch" in out and json.loads((tmp_path / "r" / "report.json").read_text())["verdict"] == "mismatch"


def test_an_environment_whose_stack_has_no_application_is_one_line_and_nothing_starts(aws, msk_migrate_cli, tmp_path: Path) -> None:
    _shim, _s3, emr, _cfg = aws
    doc = yaml.safe_load(DEV.read_text())
    doc["name"] = "stage"
    env_file = tmp_path / "stage.yaml"
    env_file.write_text(yaml.safe_dump(doc))
    before = {a["id"]: len(emr.list_job_runs(applicationId=a["id"])["jobRuns"]) for a in emr.list_applications()["applications"]}
    code, _out, err = msk_migrate_cli("validate", "--env", str(env_file), "--on", "emr-serverless", "--target-bootstrap", TARGET,
                                     "--validation-report", str(tmp_path / "r"))
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: --on emr-serverless: migration-stage has no EMR Serverless application msk-migrate-stage-validation"), err
    assert "deploy migration-stage" in lines[-1]
    after = {a["id"]: len(emr.list_job_runs(applicationId=a["id"])["jobRuns"]) for a in emr.list_applications()["applications"]}
    assert after == before and not (tmp_path / "r").exists()


def test_on_emr_serverless_needs_an_environment_before_any_call(monkeypatch, msk_migrate_cli, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens: a call would fail differently
    code, _out, err = msk_migrate_cli("validate", "--on", "emr-serverless", "--source-bootstrap", "a:9092",
                                     "--target-bootstrap", "b:9092", "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert err.strip().splitlines() == ["error: --on emr-serverless: needs --env NAME (the environment whose stack provisions "
                                        "the application) (fix: add --env NAME)"]


def _follow_result(cfg, verdict: str = "proven", exit_code: int = 0) -> dict:
    """What a chained run writes (validation/follow/chained.py), as the job would for this environment."""
    from msk_migrate.validation.follow.chained import ChainedResult

    mark = f"s3://{cfg.config_bucket_name}/proof/{cfg.migration.name}/proof-mark.json"
    rows = [{"topic": "orders.created", "partition": 0, "state": "following" if exit_code == 0 else "mismatch",
             "source_verified_up_to": 120, "target_verified_up_to": 120, "compared": 120, "proven_this_run": 20}]
    return ChainedResult(verdict, exit_code, cfg.migration.name, mark, rows,
                         {"source": cfg.source.bootstrap_servers, "target": TARGET, "mark": mark}).to_dict()


def test_follow_once_on_emr_serverless_is_one_chained_run_on_the_stacks_mark(aws, msk_migrate_cli) -> None:
    shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    shim.follow_result = _follow_result(cfg)
    code, out, err = msk_migrate_cli("validate", "--env", "dev", "--follow", "--once", "--engine", "spark", "--on", "emr-serverless",
                                     "--target-bootstrap", TARGET, "--output", "json")
    assert code == 0, err
    doc = json.loads(out)
    mark = f"s3://{cfg.config_bucket_name}/proof/{cfg.migration.name}/proof-mark.json"
    assert doc["verdict"] == "proven" and doc["mark"] == mark and doc["engine"] == "spark"
    assert doc["rows"][0]["proven_this_run"] == 20
    (run,) = _runs(emr, app_id)
    assert doc["talked_to"]["emr_serverless_job_run"] == run["id"] and [r["job_run_id"] for r in doc["job_runs"]] == [run["id"]]
    (sent,) = shim.documents
    # the job continues the stack's mark for this environment's migration; its result goes to the run's own prefix
    assert sent["follow"] == {"mark": mark, "migration": cfg.migration.name}
    assert sent["request"]["report_dir"].startswith(f"s3://{cfg.config_bucket_name}/validation/reports/")
    assert sent["request"]["target"]["bootstrap_servers"] == TARGET


def test_follow_without_once_chains_runs_each_from_the_last_mark_until_interrupted(aws) -> None:
    import signal

    from msk_migrate.config.migration import ClusterEndpoint
    from msk_migrate.validation.remote_follow import follow_on, mark_location
    from msk_migrate.validation.request import ValidationRequest

    shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    shim.follow_result = _follow_result(cfg)
    request = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=cfg.source.bootstrap_servers),
                                target=ClusterEndpoint(alias="target", bootstrap_servers=TARGET), topics=["orders.created"])
    said: list[str] = []

    def between_runs(_seconds: float) -> None:  # the operator presses Ctrl-C while the third run's wait goes on
        if len(shim.documents) == 3:
            signal.raise_signal(signal.SIGINT)

    callers = signal.getsignal(signal.SIGINT)  # the process's own (a Spark session of an earlier test replaces Python's)
    outcome = follow_on("emr-serverless", cfg, request, mark_location(cfg, None), once=False, interval=1.0, say=said.append,
                        sleep=between_runs)
    assert len(_runs(emr, app_id)) == 3 and len(outcome.extra["job_runs"]) == 3
    assert [d["follow"]["mark"] for d in shim.documents] == [mark_location(cfg, None)] * 3
    assert len({d["request"]["report_dir"] for d in shim.documents}) == 3  # each run its own result
    assert outcome.verdict == "proven" and any(m.startswith("run 3 (") for m in said)
    assert signal.getsignal(signal.SIGINT) is callers  # the caller's handler is back


@pytest.mark.parametrize("argv, field", [
    (["--mark", "s3://someone-elses-bucket/proof/mm2/"], "--mark"),
    (["--mark", "s3://{bucket}/validation/job/"], "--mark"),
    (["--mark", "s3://{bucket}/proof/other-migration/proof-mark.json"], "--mark"),
    (["--mark", "/tmp/proof-mark.json"], "--mark"),
    (["--metrics-port", "9400"], "--metrics-port"),
])
def test_a_follow_run_on_emr_serverless_the_role_cannot_serve_is_refused_before_submitting(aws, msk_migrate_cli, argv, field) -> None:
    shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    argv = [a.replace("{bucket}", cfg.config_bucket_name) for a in argv]
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--follow", "--once", "--engine", "spark", "--on", "emr-serverless",
                                      "--target-bootstrap", TARGET, *argv)
    assert code == 2 and err.strip().splitlines()[-1].startswith(f"error: {field}: "), err
    assert _runs(emr, app_id) == [] and shim.documents == []


def test_the_native_follower_is_not_a_job_run(aws, msk_migrate_cli) -> None:
    _shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--follow", "--once", "--on", "emr-serverless",
                                      "--target-bootstrap", TARGET)
    assert code == 2 and "error: --on: a job run on emr-serverless is the follower's chained Spark run" in err
    assert "add --engine spark" in err and _runs(emr, app_id) == []


def test_a_follow_run_that_wrote_no_result_is_one_line_naming_the_run_and_its_driver_log(aws, msk_migrate_cli) -> None:
    shim, s3, emr, cfg = aws
    app_id = _deployed(s3, emr, cfg)
    shim.follow_result = None  # the job refused its request or failed before a result
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--follow", "--once", "--engine", "spark", "--on", "emr-serverless",
                                      "--target-bootstrap", TARGET)
    (run,) = _runs(emr, app_id)
    last = err.strip().splitlines()[-1]
    assert code == 2 and f"job run {run['id']} ended SUCCESS" in last and "follow.json" in last, err
    assert f"s3://{cfg.config_bucket_name}/validation/logs/" in last
