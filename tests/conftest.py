"""Shared fixtures. The local environment (source 3.9 + target 4.1 KRaft clusters and one Connect
worker with MM2) is started ONCE per test session and shared by every suite that needs Kafka."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def require(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if not path:
        pytest.fail(f"{tool} is required for this test: {hint}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def local_env():
    """Started once; torn down at the end of the session (processes stopped, data wiped)."""
    require("java", "install a Java 17 JDK (make setup does not install Java)")
    require("mvn", "install Maven (apt-get install maven)")
    from msk_migrate.local.harness import LocalEnvironment

    # One directory per pytest process, so concurrent sessions never stop each other's clusters.
    base = Path(os.environ.get("MSK_MIGRATE_TEST_ENV_DIR", REPO / ".local" / "test-env" / f"session-{os.getpid()}"))
    env = LocalEnvironment(base)
    env.down(wipe=True)
    env.up()
    yield env
    env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") != "1")


@pytest.fixture
def unique():
    """A short unique suffix for topic and group names, so tests never share data."""
    return uuid.uuid4().hex[:8]
