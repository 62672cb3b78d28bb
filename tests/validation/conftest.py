"""Fixtures of the validation suite: the shared local clusters (the harness's ``local_env`` when the
suite runs with it, else a brokers-only LocalEnvironment of our own), ONE SparkSession for the whole
session, and helpers to build requests.

Anything missing (Java, Maven, PySpark) fails with what to install: these tests never skip.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from msk_migrate.paths import LOCAL_DIR


def _require_tools() -> None:
    missing = []
    if not shutil.which("java"):
        missing.append("Java 17 (apt-get install openjdk-17-jre-headless)")
    if not shutil.which("mvn"):
        missing.append("Maven 3.8+ (apt-get install maven)")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing.append("PySpark (pip install -e '.[spark]' — pyspark==3.5.7)")
    if missing:
        pytest.fail("validation tests need " + ", ".join(missing), pytrace=False)


@pytest.fixture(scope="session")
def clusters(request: pytest.FixtureRequest) -> dict[str, str]:
    """{'source': bootstrap, 'target': bootstrap} of the shared local clusters."""
    _require_tools()
    from tests import kafka_helpers

    request.addfinalizer(kafka_helpers.close_all)
    env: Any = None
    try:
        env = request.getfixturevalue("local_env")
    except pytest.FixtureLookupError:
        env = None
    if env is not None:
        status = env if isinstance(env, dict) else env.status()
        return {r: status[r]["bootstrap_servers"] for r in ("source", "target")}
    from msk_migrate.local.harness import LocalEnvironment

    own = LocalEnvironment(Path(os.environ.get("MSK_MIGRATE_VALIDATION_ENV", LOCAL_DIR / "test-validation")), with_connect=False)
    status = own.up()
    request.addfinalizer(lambda: own.down(wipe=True))
    return {r: status[r]["bootstrap_servers"] for r in ("source", "target")}


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test session (local[2], spark-sql-kafka jars from Maven)."""
    _require_tools()
    from msk_migrate.validation.spark_local import local_spark

    session = local_spark("local[2]", driver_memory="1g")
    session.conf.set("spark.sql.shuffle.partitions", "4")
    yield session


@pytest.fixture
def uniq() -> str:
    return uuid.uuid4().hex[:8]
