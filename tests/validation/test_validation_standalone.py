"""The job the way EMR runs it: a real Spark standalone master and two workers on 127.0.0.1 (the
installed PySpark's own jars, each daemon its own JVM), the packaged artefacts (``package`` →
msk_migrate.zip, jars/, spark_entry.py) submitted with ``spark-submit --master spark://...`` exactly as
docs/validation.md tells EMR users, executors in JVMs the workers launch.

Executors need no Python code: they are given a Python that does not exist
(``spark.pyspark.python=/nonexistent/...``), so any Python task on them — importing msk_migrate or
anything else — would fail; a control app on the same cluster shows that it does. The verdicts equal
local mode's, partition by partition.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tests.kafka_helpers import Pair, create_pairs, records
from validation_helpers import make_request

NO_PYTHON = "/nonexistent/executor-python"
pytestmark = pytest.mark.timeout(1800)  # a standalone cluster and spark-submit on a loaded 2-core machine
#: Every test here starts a Spark standalone cluster (never the unit tier, even without the spark fixture).
TIERS = ("spark",)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    from msk_migrate.validation.spark_standalone import StandaloneCluster

    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1, memory="1g")
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory) -> Path:
    from msk_migrate.validation.package import build

    dest = tmp_path_factory.mktemp("dist") / "validation"
    build(dest)
    return dest


@pytest.fixture(scope="module")
def sa_topics(clusters) -> dict[str, str]:
    run = uuid.uuid4().hex[:6]
    base = records(40, partitions=4)
    p0 = [r for r in base if r.partition == 0]
    rest = [r for r in base if r.partition != 0]
    pairs = {
        "same": Pair(clusters["source"], clusters["target"], f"sa-same-{run}", partitions=4),
        "swap": Pair(clusters["source"], clusters["target"], f"sa-swap-{run}", partitions=4),
        "missing": Pair(clusters["source"], clusters["target"], f"sa-missing-{run}", partitions=4),
    }
    create_pairs(list(pairs.values()))
    pairs["same"].write(base)
    pairs["swap"].write(base, [*p0[:4], p0[5], p0[4], *p0[6:], *rest])
    pairs["missing"].write(base, [r for i, r in enumerate(base) if i != 9])
    return {k: p.topic for k, p in pairs.items()}


def _submit(cluster, artefacts: Path, tmp: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    jars = ",".join(str(j) for j in sorted((artefacts / "jars").glob("*.jar")))
    from msk_migrate.validation.spark_standalone import spark_home

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "PYTHONPATH", "SPARK_"))}
    env["SPARK_HOME"] = str(spark_home())  # spark-submit's own lookup would need pyspark on PATH's python
    submit = Path(sys.executable).with_name("spark-submit")
    cmd = [
        str(submit), "--master", cluster.url, "--deploy-mode", "client",
        "--conf", f"spark.pyspark.python={NO_PYTHON}", "--conf", f"spark.pyspark.driver.python={sys.executable}",
        "--conf", "spark.executor.memory=640m", "--conf", "spark.executor.cores=1", "--conf", "spark.cores.max=2",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4", "--driver-memory", "768m",
        "--jars", jars, "--py-files", str(artefacts / "msk_migrate.zip"), script, *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=tmp, env=env)


def _partitions(doc: dict) -> dict:
    out = {}
    for t in doc["topics"]:
        for p in t["partitions"]:
            out[(t["topic"], p["partition"])] = {
                k: p[k] for k in ("status", "method", "source_count", "target_count", "missing", "unexpected",
                                  "duplicates", "changed", "reordered")
            } | {f"{side}_{k}": (p[side] or {}).get(k) for side in ("source", "target")
                 for k in ("fingerprint", "order_fingerprint")}
    return out


def test_job_on_a_standalone_cluster_gives_the_local_verdicts_without_python_on_executors(
    clusters, spark, standalone, artefacts, sa_topics, tmp_path
):
    from msk_migrate.validation import run_validation
    from msk_migrate.validation.job_request import encode

    request = make_request(clusters, topics=sorted(sa_topics.values()), mode="auto", report_dir=str(tmp_path / "r"))
    proc = _submit(standalone, artefacts, tmp_path, str(artefacts / "spark_entry.py"), "--request", encode(request))
    assert proc.returncode == 1, proc.stderr[-3000:]  # a mismatch, on purpose
    doc = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert doc["verdict"] == "mismatch" and (tmp_path / "r" / "report.json").exists()

    # executors: JVMs of their own, launched by both workers, which ran the tasks
    executors = standalone.executor_dirs()
    assert len(executors) == 2 and {e.parts[-3] for e in executors} == {"worker-0", "worker-1"}
    for e in executors:
        log = (e / "stderr").read_text(errors="replace")
        assert "Finished task" in log, log[-2000:]
        # The executors' Python is a path that does not exist: a Python task there would fail to start
        # ("Cannot run program"). The zip is fetched like any --py-files file, but nothing runs it.
        assert "Cannot run program" not in log and "PythonRunner" not in log, log[-2000:]

    local = run_validation(dataclasses.replace(request, report_dir=None), spark=spark)
    assert _partitions(doc) == _partitions(local.to_dict())
    by_topic = {t["topic"]: t for t in doc["topics"]}
    assert by_topic[sa_topics["same"]]["status"] == "match"
    assert by_topic[sa_topics["swap"]]["reordered"] == 1
    assert by_topic[sa_topics["missing"]]["missing"] == 1


def test_python_tasks_fail_on_those_executors(standalone, artefacts, tmp_path):
    """The control: with the same settings a Python task (here: importing msk_migrate) cannot run."""
    script = tmp_path / "python_task.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        "def probe(_):\n"
        "    import importlib.util\n"
        "    return importlib.util.find_spec('msk_migrate') is not None\n"
        "print('RESULT', spark.sparkContext.parallelize([0, 1], 2).map(probe).collect())\n"
    )
    proc = _submit(standalone, artefacts, tmp_path, str(script))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "RESULT [" not in proc.stdout  # the probe never returned
    assert NO_PYTHON in out and ("No such file or directory" in out or "error=2" in out)
