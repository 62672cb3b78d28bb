"""`msk-migrate validate --env E --on glue` against moto's Glue and S3 APIs: one run of the environment's Glue
5.0 job (provisioned by migration-<env> with validation.glue: true) with the request document and the
digest's zip and jars as run arguments, followed to its end, its report copied to --validation-report; the
exit code is the report's.

moto limitations met (test code only, each shim names it):

- Glue job runs run nothing and StartJobRun drops the run's ``Arguments`` (GetJobRun answers a placeholder
  ``{"runSpark": ...}``): :class:`GlueRunWritesReport` keeps the arguments each StartJobRun sent and plays
  the job's one visible effect, the report written where the request says;
- every Glue job run of moto has the id ``01`` (a job's second run reads as its first): each test starts one run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from msk_migrate import __version__
from msk_migrate.aws import glue as glue_mod
from msk_migrate.config.environment import load_environment
from msk_migrate.outcome import quiet
from msk_migrate.validation import job_package

TIERS = ("aws",)
REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "infra" / "environments" / "dev.yaml"
TARGET = "b-1.msk-migrate-dev.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"


class GlueRunWritesReport:
    """moto limitation: Glue job runs run nothing and StartJobRun does not keep the run's Arguments. On
    StartJobRun, keep its arguments (:attr:`started`) and write ``report`` where the request says."""

    def __init__(self, app) -> None:
        self.app = app
        self.report: dict = {}
        self.follow_result: dict | None = None  #: what a follow document's run writes (``follow.json``)
        self.started: list[dict] = []

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] == "POST" and environ.get("HTTP_X_AMZ_TARGET") == "AWSGlue.StartJobRun":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            sent = json.loads(body)
            self.started.append(sent)
            from tests.infra.moto_shims import job_run_outputs

            job_run_outputs(json.loads(sent["Arguments"]["--request"]), self.report, self.follow_result)
        return self.app(environ, start_response)


@pytest.fixture
def aws(monkeypatch):
    import os

    import requests
    from tests.infra.moto_shims import served

    cfg = load_environment(DEV)
    with served(monkeypatch, GlueRunWritesReport, cfg.region, cfg.account_id) as shim:
        import boto3

        base = os.environ["AWS_ENDPOINT_URL"]
        s3, glue = boto3.client("s3"), boto3.client("glue")
        yield shim, s3, glue, cfg, base
        requests.post(f"{base}/moto-api/state-manager/unset-transition", json={"model_name": "glue::job_run"}, timeout=10)


def _bucket(s3, cfg) -> str:
    bucket = cfg.config_bucket_name
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": cfg.region})
    return bucket


def _job(glue, cfg, *, environment: str | None = None, version: str = glue_mod.GLUE_VERSION) -> str:
    """The job as migration-<env> creates it (infra/mskinfra/glue_validation.py; the environment tag from the
    stack's default tags)."""
    name = glue_mod.job_name(cfg)
    glue.create_job(Name=name, Role=glue_mod.role_arn(cfg), GlueVersion=version, WorkerType=glue_mod.WORKER_TYPE, NumberOfWorkers=2,
                    Command={"Name": "glueetl", "PythonVersion": "3",
                             "ScriptLocation": f"s3://{cfg.config_bucket_name}/{glue_mod.entry_key(__version__)}"},
                    Connections={"Connections": [glue_mod.connection_name(cfg)]},
                    DefaultArguments={"--user-jars-first": "true"},
                    Tags={"environment": environment or cfg.name, "project": "msk-migrate"})
    return name


def _deployed(s3, glue, cfg) -> str:
    """What migration-dev (validation.glue: true) and the build module leave."""
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    return _job(glue, cfg)


def _report(verdict: str, exit_code: int) -> dict:
    return {"schema_version": 1, "verdict": verdict, "verdict_reason": f"{verdict} (from the job)", "exit_code": exit_code,
            "source": {"bootstrap_servers": "kafka-1.dev.corp.example:9093"}, "target": {"bootstrap_servers": TARGET},
            "topics": [{"topic": "orders.created", "verdict": verdict}]}


def _validate(cli, *extra: str, env: str = "dev") -> tuple[int, str, str]:
    return cli("validate", "--env", env, "--on", "glue", "--target-bootstrap", TARGET, *extra)


def test_starts_follows_and_fetches_the_report_where_the_gate_reads_it(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    _deployed(s3, glue, cfg)
    shim.report = _report("match", 0)
    dest = tmp_path / "validation-1"
    code, out, err = _validate(msk_migrate_cli, "--validation-report", str(dest), "--output", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "match" and doc["exit_code"] == 0 and doc["talked_to"]["target"] == TARGET
    assert doc["job_run"]["job_name"] == "msk-migrate-dev-validation" and doc["job_run"]["state"] == "SUCCEEDED"
    assert doc["locations"] == [str(dest / "report.json"), str(dest / "report.html")]
    assert json.loads((dest / "report.json").read_text()) == shim.report  # the gate's --validation-report reads this
    assert "Glue job run" in err and "SUCCEEDED" in err and "msk-migrate-dev-validation" in err

    (started,) = shim.started
    assert started["JobName"] == "msk-migrate-dev-validation"
    args = started["Arguments"]
    manifest = job_package.read_manifest(s3, cfg.config_bucket_name)
    prefix = f"s3://{cfg.config_bucket_name}/validation/job/{__version__}/{manifest.digest}/"
    assert set(args) == {"--request", "--extra-py-files", "--extra-jars"}
    assert args["--extra-py-files"] == prefix + "msk_migrate.zip"
    assert args["--extra-jars"] == ",".join(f"{prefix}{f}" for f in sorted(manifest.files) if f.startswith("jars/"))
    request = json.loads(args["--request"])
    assert request["kind"] == "msk-migrate/validation-request" and request["tool_version"] == __version__
    assert request["request"]["source"]["auth"]["secret_arn"] == cfg.source.auth.secret_arn
    assert request["request"]["report_dir"].startswith(f"s3://{cfg.config_bucket_name}/validation/reports/")
    # the job's script: the digest's entry script, at the key the stack's job names
    entry = s3.get_object(Bucket=cfg.config_bucket_name, Key=glue_mod.entry_key(__version__))["Body"].read()
    import hashlib

    assert hashlib.sha256(entry).hexdigest() == manifest.files["spark_entry.py"]


def test_the_run_is_followed_state_by_state(aws, tmp_path: Path) -> None:
    import requests

    shim, s3, glue, cfg, base = aws
    _deployed(s3, glue, cfg)
    shim.report = _report("match", 0)
    # moto's state manager: two GetJobRun calls per transition (STARTING -> RUNNING -> SUCCEEDED)
    requests.post(f"{base}/moto-api/state-manager/set-transition",
                  json={"model_name": "glue::job_run", "transition": {"progression": "manual", "times": 2}}, timeout=10).raise_for_status()
    said: list[str] = []
    slept: list[float] = []
    report_uri = f"s3://{cfg.config_bucket_name}/validation/reports/t/"
    run = glue_mod.submit(glue, cfg, job_package.verified_for_glue(s3, cfg.config_bucket_name),
                          json.dumps({"request": {"report_dir": report_uri}}), report_uri=report_uri)
    done = glue_mod.follow(glue, run, said.append, sleep=slept.append)
    assert done.state == "SUCCEEDED"
    assert [m.split(": ", 1)[1] for m in said] == ["STARTING", "RUNNING", "SUCCEEDED"]
    assert slept and all(s == 10.0 for s in slept)


def test_a_mismatch_in_the_jobs_report_is_exit_1(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    _deployed(s3, glue, cfg)
    shim.report = _report("mismatch", 1)
    code, out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 1, err
    assert "verdict: mismatch" in out and json.loads((tmp_path / "r" / "report.json").read_text())["verdict"] == "mismatch"


def test_an_environment_without_the_glue_job_is_one_line_naming_the_setting_and_nothing_starts(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, _glue, cfg, _base = aws
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: validation.glue: migration-dev has no Glue job msk-migrate-dev-validation in account "), err
    assert "set validation.glue: true in the environment file and deploy migration-dev" in last
    assert shim.started == [] and not (tmp_path / "r").exists()


def test_no_shipped_package_is_one_line_naming_the_build_module_and_nothing_starts(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    _bucket(s3, cfg)
    _job(glue, cfg)
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: --on glue: no validation job package of msk-migrate {__version__} in s3://"), err
    assert "./build_images.py ACCOUNT REGION --env ENV" in last
    assert shim.started == []
    assert s3.list_objects_v2(Bucket=cfg.config_bucket_name, Prefix="validation/job/").get("KeyCount") == 0  # nothing uploaded


def test_a_stale_entry_script_at_the_jobs_script_location_is_refused(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    _deployed(s3, glue, cfg)
    s3.put_object(Bucket=cfg.config_bucket_name, Key=glue_mod.entry_key(__version__), Body=b"# another build's entry\n")
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert "is missing or not the entry script of the package" in err.strip().splitlines()[-1], err
    assert shim.started == []
    # the build module puts it back without uploading the package again
    manifest, uploaded = job_package.ship(s3, cfg.config_bucket_name, quiet)
    assert uploaded and job_package.verified_for_glue(s3, cfg.config_bucket_name).prefix == manifest.prefix()


def test_a_glue_job_of_another_environment_is_refused(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    _job(glue, cfg, environment="stage")  # a job named like dev's, deployed by another environment's stack
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: --on glue: the Glue job msk-migrate-dev-validation in account ") and "belongs to environment 'stage', not 'dev'" in last, err
    assert shim.started == []


def test_a_glue_job_of_another_release_is_refused(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, s3, glue, cfg, _base = aws
    job_package.ship(s3, _bucket(s3, cfg), quiet)
    _job(glue, cfg, version="4.0")
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert "runs Glue 4.0; the job package is built for Glue 5.0" in err.strip().splitlines()[-1], err
    assert shim.started == []


def test_on_glue_needs_an_environment_before_any_call(monkeypatch, msk_migrate_cli, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens: a call would fail differently
    code, _out, err = msk_migrate_cli("validate", "--on", "glue", "--source-bootstrap", "a:9092",
                                     "--target-bootstrap", "b:9092", "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert err.strip().splitlines() == ["error: --on glue: needs --env NAME (the environment whose stack provisions the Glue job) "
                                        "(fix: add --env NAME)"]


def test_on_glue_refuses_a_local_offsets_snapshot_before_any_call(monkeypatch, msk_migrate_cli, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    snap = tmp_path / "snap.json"
    snap.write_text("{}")
    code, _out, err = msk_migrate_cli("validate", "--env", "dev", "--on", "glue", "--target-bootstrap", TARGET,
                                     "--offsets-snapshot", str(snap), "--validation-report", str(tmp_path / "r"))
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("error: --offsets-snapshot: not with --on glue"), err


def test_stage_environment_file_without_its_job(aws, msk_migrate_cli, tmp_path: Path) -> None:
    shim, _s3, _glue, _cfg, _base = aws
    doc = yaml.safe_load(DEV.read_text())
    doc["name"] = "stage"
    env_file = tmp_path / "stage.yaml"
    env_file.write_text(yaml.safe_dump(doc))
    code, _out, err = _validate(msk_migrate_cli, "--validation-report", str(tmp_path / "r"), env=str(env_file))
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("error: validation.glue: migration-stage has no Glue job msk-migrate-stage-validation"), err
    assert shim.started == []


def test_follow_once_on_glue_is_one_chained_run_on_the_stacks_mark(aws, msk_migrate_cli) -> None:
    from msk_migrate.validation.follow.chained import ChainedResult

    shim, s3, glue, cfg, _base = aws
    _deployed(s3, glue, cfg)
    mark = f"s3://{cfg.config_bucket_name}/proof/{cfg.migration.name}/proof-mark.json"
    rows = [{"topic": "orders.created", "partition": 0, "state": "mismatch", "source_verified_up_to": 40,
             "target_verified_up_to": 40, "compared": 40, "proven_this_run": 40,
             "mismatch": {"category": "unexpected", "source_offset": 40, "target_offset": 40}}]
    shim.follow_result = ChainedResult("mismatch", 1, cfg.migration.name, mark, rows,
                                       {"source": cfg.source.bootstrap_servers, "target": TARGET, "mark": mark}).to_dict()
    code, out, err = msk_migrate_cli("validate", "--env", "dev", "--follow", "--once", "--engine", "spark", "--on", "glue",
                                     "--target-bootstrap", TARGET, "--output", "json")
    assert code == 1, err  # the run's verdict: a record only on the target
    doc = json.loads(out)
    assert doc["verdict"] == "mismatch" and doc["mark"] == mark and doc["rows"][0]["mismatch"]["category"] == "unexpected"
    (started,) = shim.started
    sent = json.loads(started["Arguments"]["--request"])
    assert sent["follow"] == {"mark": mark, "migration": cfg.migration.name}
    assert doc["talked_to"]["glue_job_run"] == doc["job_runs"][0]["job_run_id"]
