"""`msk-migrate validate` end to end: exit codes 0/1/2, JSON/HTML/console output, S3 output (moto
server), bad input that writes nothing, and the spark-submit entry file."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.kafka_helpers import Pair, create_pairs, records
from validation_helpers import cli_args

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.commands.validate import run_cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cli_topics(clusters):
    run = uuid.uuid4().hex[:6]
    same = Pair(clusters["source"], clusters["target"], f"cli-same-{run}", partitions=1)
    diff = Pair(clusters["source"], clusters["target"], f"cli-diff-{run}", partitions=1)
    create_pairs([same, diff])
    recs = records(12, partitions=1)
    same.write(recs)
    diff.write(recs, recs[:-1])
    return {"same": same.topic, "diff": diff.topic}


class SummaryParser(HTMLParser):
    """Collects the verdict, the summary table and the order of the page's landmarks."""

    def __init__(self) -> None:
        super().__init__()
        self.verdict: str | None = None
        self.order: list[str] = []
        self.summary: dict[str, str] = {}
        self.topics: dict[str, str] = {}
        self._row: str | None = None
        self._in_td = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") in ("verdict", "summary", "topics"):
            self.order.append(a["id"])
        if a.get("id") == "verdict":
            self.verdict = a.get("data-verdict")
        if tag == "tr" and "data-key" in a:
            self._row = a["data-key"]
        if tag == "tr" and "data-topic" in a:
            self.topics[a["data-topic"]] = a["data-status"]
        self._in_td = tag == "td" and self._row is not None

    def handle_data(self, data):
        if self._in_td and self._row:
            self.summary[self._row] = data.strip()
            self._row = None
            self._in_td = False


def parse_html(text: str) -> SummaryParser:
    p = SummaryParser()
    p.feed(text)
    return p


def test_identical_topic_exits_0_and_writes_json_and_html(clusters, spark, cli_topics, tmp_path, capsys):
    out_dir = tmp_path / "report"
    rc = run_cli(
        cli_args(clusters, "--topic", cli_topics["same"], "--validation-report", str(out_dir), "--output", "json"), spark=spark
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["verdict"] == "match" and doc["exit_code"] == 0
    assert not json_shape_problems(doc) and doc["rows"][0]["topic"] == cli_topics["same"]
    assert doc["summary"]["source_records"] == 12
    assert json.loads((out_dir / "report.json").read_text())["verdict"] == "match"
    html = parse_html((out_dir / "report.html").read_text())
    assert html.verdict == "match"
    assert html.order[:2] == ["verdict", "summary"]  # the summary comes first
    assert html.summary["source_records"] == "12" and html.summary["topics_mismatched"] == "0"


def test_mismatch_exits_1_and_prints_the_table(clusters, spark, cli_topics, tmp_path, capsys):
    rc = run_cli(
        cli_args(clusters, "--topic", f"{cli_topics['same']},{cli_topics['diff']}", "--validation-report", str(tmp_path / "r")),
        spark=spark,
    )
    out = capsys.readouterr().out
    assert rc == 1
    assert "MISMATCH" in out and cli_topics["diff"] in out
    assert "1 record(s) missing on the target" in out
    html = parse_html((tmp_path / "r" / "report.html").read_text())
    assert html.verdict == "mismatch"
    assert html.topics == {cli_topics["same"]: "match", cli_topics["diff"]: "mismatch"}
    assert html.summary["missing_on_target"] == "1"


@pytest.mark.parametrize(
    "case,args,expect",
    [
        ("no source", ["--target-bootstrap", "127.0.0.1:9", "--topic", "t"], "--source-bootstrap: required"),
        ("bad regex", ["--topic-regex", "("], "--topic-regex: '(' is not a regular expression"),
        ("unknown topic", ["--topic", "no-such-topic-anywhere"], "--topic: topic 'no-such-topic-anywhere' does not exist"),
        ("window", ["--topic", "x", "--from-timestamp", "2025-01-02T00:00:00Z", "--until-timestamp", "2025-01-01T00:00:00Z"],
         "--from-timestamp/--until-timestamp: the window [1735776000000, 1735689600000) is empty"),
        ("window after default until", ["--topic", "x", "--from-timestamp", "2999-01-01T00:00:00Z"],
         "--from-timestamp: 2999-01-01T00:00:00"),
        ("seconds", ["--topic", "x", "--from-timestamp", "1700000000"], "--from-timestamp: 1700000000 looks like epoch seconds"),
        ("snapshot", ["--offsets-snapshot", "/nonexistent/snap.json"], "--offsets-snapshot: /nonexistent/snap.json is not a file"),
        ("security option", ["--topic", "x", "--kafka-option", "security.protocol=SSL"], "--kafka-option: security.protocol is a security setting"),
        ("scram secret", ["--topic", "x", "--source-auth", "scram"], "MM2_SOURCE_SASL_USERNAME is not set"),
        ("bad arn", ["--topic", "x", "--source-auth", "scram", "--source-secret-arn", "nope"], "--source-secret-arn: secret 'nope' is not a Secrets"),
        ("no bucket", ["--topic", "x", "--validation-report", "s3://"], "--validation-report: 's3://' has no bucket"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(clusters, tmp_path, capsys, monkeypatch, case, args, expect):
    monkeypatch.delenv("MM2_SOURCE_SASL_USERNAME", raising=False)
    base = [] if case == "no source" else ["--source-bootstrap", clusters["source"], "--target-bootstrap", clusters["target"]]
    report_dir = tmp_path / "report"
    extra = [] if "--validation-report" in args else ["--validation-report", str(report_dir)]
    rc = run_cli([*base, *args, *extra])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert err.startswith("error: ") and "\n" not in err, err
    assert expect in err
    assert not report_dir.exists()


def test_window_error_names_both_flags_and_the_fix(clusters, tmp_path, capsys):
    rc = run_cli(cli_args(clusters, "--topic", "x", "--from-timestamp", "1700000000000", "--until-timestamp",
                          "1700000000000", "--validation-report", str(tmp_path / "r")))
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.startswith("error: --from-timestamp/--until-timestamp: ")
    assert "(fix: give a --from-timestamp earlier than --until-timestamp" in err


def test_wrong_bootstrap_port_prints_only_the_one_line_error(clusters, tmp_path):
    """librdkafka writes its log lines to file descriptor 2 itself: only a real process shows them."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).with_name("msk-migrate")
    args = [str(exe), "validate", "--source-bootstrap", f"127.0.0.1:{port}", "--target-bootstrap",
            clusters["target"], "--topic", "t", "--metadata-timeout", "3", "--validation-report", str(tmp_path / "r")]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: source.bootstrap_servers (127.0.0.1:{port}): cluster unreachable")
    verbose = subprocess.run([*args, "--verbose"], capture_output=True, text=True, timeout=120)
    assert verbose.returncode == 2
    assert len(verbose.stderr.strip().splitlines()) > 1 and "Connection refused" in verbose.stderr


def test_a_real_run_keeps_spark_log_lines_off_stderr_unless_verbose(clusters, cli_topics, tmp_path):
    """A process of its own (its own local Spark): Spark's start-up WARN lines and PySpark's "Setting
    default log level" notice are not printed; the verdict is on stdout."""
    exe = Path(sys.executable).with_name("msk-migrate")
    args = [str(exe), "validate", *cli_args(clusters, "--topic", cli_topics["same"], "--mode", "checksum",
                                            "--no-report")]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.strip() == "", proc.stderr[-2000:]
    assert "MATCH" in proc.stdout


def test_unreachable_cluster_exits_2_naming_the_field(clusters, tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc = run_cli([
        "--source-bootstrap", f"127.0.0.1:{port}", "--target-bootstrap", clusters["target"],
        "--topic", "t", "--metadata-timeout", "3", "--validation-report", str(tmp_path / "r"),
    ])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.startswith(f"error: source.bootstrap_servers (127.0.0.1:{port}): cluster unreachable")
    assert "fix:" in err
    assert not (tmp_path / "r").exists()


@pytest.fixture
def moto_s3(monkeypatch):
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    for k, v in {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    import boto3

    client = boto3.client("s3")
    bucket = f"validation-reports-{uuid.uuid4().hex[:8]}"  # moto's state is per process, not per server
    client.create_bucket(Bucket=bucket)
    client.bucket = bucket
    yield client
    server.stop()


def test_report_is_written_to_s3(clusters, spark, cli_topics, moto_s3, capsys):
    rc = run_cli(
        cli_args(clusters, "--topic", cli_topics["diff"], "--mode", "checksum",
                 "--validation-report", f"s3://{moto_s3.bucket}/runs/42", "--output", "json"),
        spark=spark,
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert doc["locations"] == [f"s3://{moto_s3.bucket}/runs/42/report.json", f"s3://{moto_s3.bucket}/runs/42/report.html"]
    keys = sorted(o["Key"] for o in moto_s3.list_objects_v2(Bucket=moto_s3.bucket)["Contents"])
    assert keys == ["runs/42/report.html", "runs/42/report.json"]
    stored = json.loads(moto_s3.get_object(Bucket=moto_s3.bucket, Key="runs/42/report.json")["Body"].read())
    assert stored["verdict"] == "mismatch" and stored["topics"][0]["partitions"][0]["differences"]
    page = moto_s3.get_object(Bucket=moto_s3.bucket, Key="runs/42/report.html")
    assert page["ContentType"].startswith("text/html")
    assert parse_html(page["Body"].read().decode()).verdict == "mismatch"


def test_missing_bucket_exits_2_before_any_work(clusters, cli_topics, moto_s3, capsys):
    rc = run_cli(cli_args(clusters, "--topic", cli_topics["same"], "--validation-report", "s3://no-such-bucket/x"))
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("error: --validation-report: cannot write to bucket 'no-such-bucket'")
    assert "Contents" not in moto_s3.list_objects_v2(Bucket=moto_s3.bucket)


def test_msk_migrate_validate_command_exits_2_on_bad_input(tmp_path, msk_migrate_cli):
    code, _, err = msk_migrate_cli("validate", "--source-bootstrap", "not a host", "--target-bootstrap", "h:1",
                                   "--topic", "t", "--validation-report", str(tmp_path / "r"))
    assert code == 2, err
    assert err.strip().startswith("error: --source-bootstrap: 'not a host' is not host:port")
    assert not (tmp_path / "r").exists()


def test_spark_submit_runs_the_request_validate_wrote_with_the_packaged_entry_file(clusters, cli_topics, tmp_path):
    """The EMR path by hand: `validate --job-request FILE` checks everything and writes the one document; spark-submit
    runs it with the package zipped via --py-files and the Maven-resolved jars."""
    from msk_migrate.validation.spark_local import job_jars

    request_file = tmp_path / "request.json"
    assert run_cli(cli_args(clusters, "--topic", cli_topics["same"], "--mode", "full", "--validation-report", str(tmp_path / "r"),
                            "--job-request", str(request_file))) == 0
    assert not (tmp_path / "r").exists()  # written, nothing run
    pkg = tmp_path / "msk_migrate.zip"
    with zipfile.ZipFile(pkg, "w") as zf:
        for f in (REPO / "python" / "msk_migrate").rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                zf.write(f, f.relative_to(REPO / "python"))
    submit = Path(sys.executable).with_name("spark-submit")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK")}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable  # the venv has the driver's deps
    proc = subprocess.run(
        [
            str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.shuffle.partitions=2", "--driver-memory", "768m",
            "--jars", ",".join(job_jars()), "--py-files", str(pkg),
            str(REPO / "python" / "msk_migrate" / "validation" / "spark_entry.py"),
            "--JOB_NAME", "glue-style-arg", "--TempDir", "s3://ignored/tmp",  # platform args are ignored
            "--request", request_file.read_text(),
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert doc["verdict"] == "match" and doc["run"]["mode"] == "full"
    assert (tmp_path / "r" / "report.html").exists()
