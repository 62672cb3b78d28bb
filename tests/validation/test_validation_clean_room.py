"""The validation job as shipped, on a Spark that holds nothing but the pinned pyspark (as the EMR Serverless and
Glue images hold nothing of ours): the package the build module ships, spark-submitted with exactly the
parameters an EMR Serverless job run carries (entry point, --jars, --py-files, --conf, the one serialised
request), against the local clusters with mismatches planted. It must give the local engine's verdict and
counts, read nothing but what the request names, and write its report to S3 (moto) through its own JVM.

The clean room: a virtual environment without pip whose only packages are the installed pyspark and its one
dependency py4j (linked from this project's venv: the same pinned files, not a second download). Its interpreter
records the modules the driver imported; those of msk_migrate are then checked for the oldest Python a release
runs (EMR 7.9: Amazon Linux 2023's Python 3.9; Glue 5.0: Python 3.11) with vermin, on the code that runs
(annotations are never evaluated: every job module defers them, PEP 563).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tests.kafka_helpers import Pair, create_pairs, records
from validation_helpers import make_request

pytestmark = pytest.mark.timeout(1200)
TIERS = ("spark",)
#: The oldest Python of the releases the job runs on (EMR 7.9 / Amazon Linux 2023: 3.9; Glue 5.0: 3.11).
OLDEST_RELEASE_PYTHON = "3.9"
REGION = "eu-west-1"
#: What the job may import beyond the standard library: pyspark, its py4j, and the package itself.
ALLOWED_TOP_LEVEL = {"pyspark", "py4j", "msk_migrate"}


@pytest.fixture(scope="module")
def clean_room(tmp_path_factory) -> Path:
    """A venv holding only pyspark and py4j; its interpreter writes the modules it imported to $MODULES_OUT at exit."""
    import py4j
    import pyspark

    root = tmp_path_factory.mktemp("clean-room")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    only = root / "site"
    only.mkdir()
    for package in (pyspark, py4j):
        where = Path(package.__file__).parent
        (only / where.name).symlink_to(where)
        for dist in where.parent.glob(f"{where.name}-*.dist-info"):
            (only / dist.name).symlink_to(dist)
    site = next((root / "venv" / "lib").glob("python3*/site-packages"))
    recorder = ("import atexit, os, sys; out = os.environ.get('MODULES_OUT'); "
                "out and atexit.register(lambda out=out: open(out, 'w').write('\\n'.join("
                "f'{k} {getattr(v, \"__file__\", None)}' for k, v in sorted(sys.modules.items()) if v is not None)))")
    (site / "clean_room.pth").write_text(f"{only}\n{recorder}\n")
    python = root / "venv" / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import pyspark, importlib.util as u; "
                            "print(pyspark.__version__, [m for m in ('pydantic', 'confluent_kafka', 'boto3', 'yaml', 'click', "
                            "'rich', 'requests', 'cryptography', 'xxhash', 'msk_migrate') if u.find_spec(m)])"],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, check=True)
    assert probe.stdout.split(" ", 1)[1].strip() == "[]", probe.stdout  # nothing but pyspark and py4j
    return python


@pytest.fixture(scope="module")
def moto_s3():
    """moto's S3 over plain HTTP behind the shim the Java SDK's uploads need (tests/infra/moto_shims.py)."""
    import boto3
    from tests.infra.moto_shims import PlainHttp, S3AwsChunkedPut

    with PlainHttp(S3AwsChunkedPut) as url:
        client = boto3.client("s3", region_name=REGION, endpoint_url=url, aws_access_key_id="testing",
                              aws_secret_access_key="testing")
        yield url, client


@pytest.fixture(scope="module")
def planted(clusters) -> list[str]:
    run = uuid.uuid4().hex[:6]
    base = records(60, partitions=3)
    pairs = [Pair(clusters["source"], clusters["target"], f"clean-same-{run}", partitions=3),
             Pair(clusters["source"], clusters["target"], f"clean-planted-{run}", partitions=3)]
    create_pairs(pairs)
    pairs[0].write(base)
    changed = [r.with_(value=b"planted") if i == 17 else r for i, r in enumerate(base)]
    pairs[1].write(base, [r for i, r in enumerate(changed) if i != 31])  # one record changed, one missing
    return [p.topic for p in pairs]


def _submit_like_emr(python: Path, built: Path, request_doc: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """spark-submit with the job run's own parameters (aws/emr_serverless.py builds them for the bucket; here the
    package's S3 prefix is this directory)."""
    from msk_migrate.aws import emr_serverless as emr_mod
    from msk_migrate.validation.job_package import Manifest
    from msk_migrate.validation.job_request import ARGUMENT
    from msk_migrate.versions import spark_version

    package = Manifest.of_directory(built, emr_mod.RELEASE_LABEL, emr_mod.RELEASE_SPARK, spark_version()).package("clean-room")
    here = f"s3://clean-room/{package.prefix}"
    params = package.spark_submit_parameters().replace(here, f"{built}/")
    entry = package.uri(package.entry).replace(here, f"{built}/")
    spark_home = Path(python.parent.parent.parent / "site" / "pyspark")
    cmd = [str(spark_home / "bin" / "spark-submit"), "--master", "local[2]", "--driver-memory", "768m",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4",
           *shlex.split(params), entry, ARGUMENT, request_doc]
    run_env = {"PATH": "/usr/bin:/bin", "HOME": env["HOME"], "JAVA_HOME": os.environ.get("JAVA_HOME", ""),
               "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": str(python), "PYSPARK_DRIVER_PYTHON": str(python), **env}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={k: v for k, v in run_env.items() if v})


def test_the_shipped_job_on_a_spark_with_nothing_but_pyspark_gives_the_local_verdict(
    clean_room, clusters, planted, moto_s3, spark, tmp_path
):
    from msk_migrate.validation import run_validation
    from msk_migrate.validation.job_request import encode
    from msk_migrate.validation.package import build

    built = tmp_path / "package"
    build(built)
    url, s3 = moto_s3
    bucket = f"configs-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    report_uri = f"s3://{bucket}/validation/reports/clean-room/"
    request = make_request(clusters, topics=planted, mode="auto", report_dir=report_uri)
    modules = tmp_path / "modules.txt"
    proc = _submit_like_emr(clean_room, built, encode(request), {
        "HOME": str(tmp_path), "MODULES_OUT": str(modules), "AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION})
    assert proc.returncode == 1, proc.stderr[-4000:]  # the planted mismatch fails the run, on purpose

    shipped = json.loads(s3.get_object(Bucket=bucket, Key="validation/reports/clean-room/report.json")["Body"].read())
    assert s3.get_object(Bucket=bucket, Key="validation/reports/clean-room/report.html")["ContentType"].startswith("text/html")
    printed, _end = json.JSONDecoder().raw_decode(proc.stdout, proc.stdout.index("{"))
    assert printed["locations"] == [report_uri + "report.json", report_uri + "report.html"]
    assert {k: v for k, v in printed.items() if k != "locations"} == shipped
    local = run_validation(dataclasses.replace(request, report_dir=None, engine="spark"), spark=spark).to_dict()
    assert shipped["verdict"] == local["verdict"] == "mismatch" and shipped["exit_code"] == 1
    assert shipped["run"]["engine"] == "spark" and shipped["run"]["tool_version"] == local["run"]["tool_version"]
    assert _counts(shipped) == _counts(local)
    by_topic = {t["topic"]: t for t in shipped["topics"]}
    assert by_topic[planted[0]]["status"] == "match"
    mismatch = by_topic[planted[1]]
    # the removed record is missing; the changed one is missing and unexpected, paired as changed
    assert mismatch["status"] == "mismatch", mismatch
    assert (mismatch["missing"], mismatch["unexpected"], mismatch["changed"]) == (2, 1, 1), mismatch

    _only_the_release_is_imported(modules, tmp_path / "stripped")


def _only_the_release_is_imported(modules: Path, out: Path) -> list[str]:
    """The driver imported the standard library, pyspark and msk_migrate's job modules only (no command), and those
    run on the oldest release Python; returns the msk_migrate modules."""
    loaded = dict(line.split(" ", 1) for line in modules.read_text().splitlines())
    imported = sorted(loaded)
    # a module without a file is a namespace package: a directory of the jars PySpark puts on sys.path
    # (``org`` of org/apache/...), which holds no Python code
    outside = sorted({m.split(".")[0] for m in imported if loaded[m] != "None"} - set(sys.stdlib_module_names)
                     - ALLOWED_TOP_LEVEL - {m for m in imported if m.startswith("_")})
    assert outside == [], f"the driver imported {[(m, loaded[m]) for m in outside]} beyond the standard library and pyspark"
    assert [m for m in imported if m.startswith("msk_migrate.commands")] == []
    ours = [m for m in imported if m.split(".")[0] == "msk_migrate"]
    _runs_on_oldest_release_python(ours, out)
    return ours


def test_the_shipped_job_continues_the_followers_mark_in_s3_and_finds_a_record_only_on_the_target(
    clean_room, clusters, moto_s3, spark, tmp_path
):
    """``validate --follow --engine spark --on emr-serverless|glue`` as the job runs it: a mark started here (the
    confluent client, boto3) is continued by the shipped job on the clean room (the Kafka Java admin, the AWS SDK
    for Java): the same topic ids and cluster ids, every new pair proven once, and a record written only on the
    target at the tail stops its partition as ``unexpected``; the job exits 1 and its result sits beside the
    run's prefix, equal to what it printed."""
    from msk_migrate.access.secrets import SecretResolver
    from msk_migrate.validation.follow.chained import chained_run
    from msk_migrate.validation.follow.mark import Mark
    from msk_migrate.validation.job_request import FollowTarget, encode
    from msk_migrate.validation.package import build
    from msk_migrate.validation.plan import confluent_metadata

    run = uuid.uuid4().hex[:6]
    pair = Pair(clusters["source"], clusters["target"], f"clean-follow-{run}", partitions=2)
    create_pairs([pair])
    first = records(40, partitions=2, prefix="a")
    pair.write(first)
    url, s3 = moto_s3
    bucket = f"configs-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    mark = f"s3://{bucket}/proof/mm2/proof-mark.json"
    request = make_request(clusters, topics=[pair.topic], mode="full", show_keys=False)
    started = chained_run(request, mark, "mm2", spark, confluent_metadata, SecretResolver(), s3=s3)
    assert started.exit_code == 0 and sum(r["compared"] for r in started.rows) == 40

    more = records(30, partitions=2, prefix="b")
    extra = records(1, partitions=2, prefix="only-on-target")[0]
    pair.write(more, [*more, extra])  # the target's last record of its partition has no source record
    built = tmp_path / "package"
    build(built)
    report_uri = f"s3://{bucket}/validation/reports/follow-run/"
    document = encode(dataclasses.replace(request, report_dir=report_uri), FollowTarget(mark, "mm2"))
    modules = tmp_path / "modules.txt"
    proc = _submit_like_emr(clean_room, built, document, {
        "HOME": str(tmp_path), "MODULES_OUT": str(modules), "AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION})
    assert proc.returncode == 1, proc.stderr[-4000:]
    ours = _only_the_release_is_imported(modules, tmp_path / "stripped")
    assert "msk_migrate.validation.follow.chained" in ours and "msk_migrate.validation.follow.follower" not in ours

    result = json.loads(s3.get_object(Bucket=bucket, Key="validation/reports/follow-run/follow.json")["Body"].read())
    printed, _end = json.JSONDecoder().raw_decode(proc.stdout, proc.stdout.index("{"))
    assert printed == result and result["verdict"] == "mismatch" and result["mark"] == mark
    rows = {r["partition"]: r for r in result["rows"]}
    p = extra.partition
    assert rows[p]["state"] == "mismatch" and rows[p]["mismatch"]["category"] == "unexpected"
    assert rows[p]["mismatch"]["target_offset"] == rows[p]["target_verified_up_to"]
    assert rows[1 - p]["state"] == "following"
    written = Mark.from_dict(json.loads(s3.get_object(Bucket=bucket, Key="proof/mm2/proof-mark.json")["Body"].read()))
    assert written.migration == "mm2" and sum(pm.compared for _, pm in written.items()) == 70  # 40 before, 30 now, none twice
    assert sum(r["proven_this_run"] for r in result["rows"]) == 30


def _counts(report: dict) -> dict:
    keys = ("status", "source_count", "target_count", "missing", "unexpected", "duplicates", "changed", "reordered")
    return {(t["topic"], p["partition"]): {k: p.get(k) for k in keys} for t in report["topics"] for p in t["partitions"]}


class _NoAnnotations(ast.NodeTransformer):
    """Annotations are never evaluated in a module with ``from __future__ import annotations``, nor is a
    ``TYPE_CHECKING`` block: left out, so the check sees the code a release's interpreter runs."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> ast.If:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return ast.If(test=node.test, body=[ast.Pass()], orelse=[self.visit(n) for n in node.orelse])
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return ast.Pass()
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def _runs_on_oldest_release_python(modules: list[str], out: Path) -> None:
    import importlib.util

    out.mkdir()
    files = []
    for name in modules:
        origin = importlib.util.find_spec(name).origin
        source = Path(origin).read_text()
        tree = ast.parse(source)
        deferred = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
                       for n in tree.body)
        annotated = any(isinstance(n, ast.AnnAssign) or (isinstance(n, ast.arg) and n.annotation is not None)
                        or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None) for n in ast.walk(tree))
        assert deferred or not annotated, f"{name} has annotations its interpreter evaluates (add `from __future__ import annotations`)"
        target = out / (name.replace(".", "/") + ".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(ast.unparse(ast.fix_missing_locations(_NoAnnotations().visit(tree))))
        files.append(str(target))
    vermin = Path(sys.executable).with_name("vermin")
    proc = subprocess.run([str(vermin), "--no-tips", "--violations", "--feature", "union-types", f"-t={OLDEST_RELEASE_PYTHON}-",
                           *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
