"""`make lint`'s cycle contract (scripts/check_import_cycles.py) fails on a planted cycle, a function-level
import included, and names the lines that close it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_import_cycles.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def _package(root: Path, modules: dict[str, str]) -> None:
    """The package ``planted`` under ``root`` with these modules (name -> source)."""
    pkg = root / "planted"
    pkg.mkdir()
    for name, text in {"__init__": "", **modules}.items():
        (pkg / f"{name}.py").write_text(text)


def test_a_cycle_inside_one_package_fails_the_gate_with_the_lines_that_close_it(tmp_path: Path) -> None:
    _package(tmp_path, {"request": "from .sync import run\n",
                        "sync": "def run():\n    from .request import run as again  # a function-level import closes it\n    return again\n",
                        "alone": "from . import request\n"})
    r = _run("--path", str(tmp_path), "planted")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "import cycle among 2 modules: planted.request, planted.sync" in r.stdout
    assert "planted.sync -> planted.request (line 2:" in r.stdout and "planted.alone" not in r.stdout.split("\n")[0]


def test_the_same_package_without_the_cycle_passes(tmp_path: Path) -> None:
    _package(tmp_path, {"request": "X = 1\n", "sync": "from .request import X\n"})
    r = _run("--path", str(tmp_path), "planted")
    assert r.returncode == 0 and "no import cycle in planted" in r.stdout, r.stdout + r.stderr
