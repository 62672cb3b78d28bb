"""Fixtures of the monitoring tests: Prometheus tools from the Debian package (scripts/setup-monitoring.sh)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL_HINT = "install prometheus: scripts/setup-monitoring.sh"


def _tool(name: str) -> str:
    for candidate in (f"/usr/bin/{name}", shutil.which(name)):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail(f"{name} not found: {INSTALL_HINT}", pytrace=False)


@pytest.fixture(scope="session")
def promtool() -> str:
    return _tool("promtool")


@pytest.fixture(scope="session")
def prometheus_bin() -> str:
    return _tool("prometheus")


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
