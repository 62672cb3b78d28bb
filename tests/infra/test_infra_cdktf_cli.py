"""`npx cdktf synth` -- what users type -- works from the repository root with the pinned CLI.

The CLI comes from package.json + package-lock.json (cdktf-cli 0.21.0), installed by
scripts/setup-cdktf.sh into node_modules/ (git-ignored). One real synth per run (~90 s, most of it the
jsii runtime), into a temporary directory, with the shipped environments.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from infra_helpers import REPO, SHIPPED, env_config

CLI = REPO / "node_modules" / ".bin" / "cdktf"


def test_the_cdktf_cli_is_pinned_by_the_lockfile() -> None:
    package = json.loads((REPO / "package.json").read_text())
    lock = json.loads((REPO / "package-lock.json").read_text())
    assert package["devDependencies"] == {"cdktf-cli": "0.21.0"}
    assert lock["packages"]["node_modules/cdktf-cli"]["version"] == "0.21.0"
    assert lock["packages"]["node_modules/cdktf-cli"]["integrity"].startswith("sha512-")
    ignored = subprocess.run(["git", "check-ignore", "-q", "node_modules/"], cwd=REPO)
    assert ignored.returncode == 0, "node_modules/ must be git-ignored"


def test_npx_cdktf_synth_writes_every_stack_from_the_repository_root(tmp_path: Path) -> None:
    if not CLI.exists():
        pytest.fail("node_modules/.bin/cdktf is missing: run `make setup` (scripts/setup-cdktf.sh installs cdktf-cli 0.21.0)")
    out = tmp_path / "cdktf.out"
    env = {
        **os.environ,
        "CHECKPOINT_DISABLE": "1",
        "CI": "1",
        "MSK_MIGRATE_STATE_DIR": str(tmp_path / "state"),
        "MSK_MIGRATE_BUILD_DIR": str(tmp_path / "build"),
    }
    version = subprocess.run(["npx", "--no-install", "cdktf", "--version"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert version.stdout.strip().splitlines()[0] == "0.21.0", version.stdout + version.stderr
    proc = subprocess.run(
        ["npx", "--no-install", "cdktf", "synth", "--output", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    expected = {f"migration-{e}" for e in SHIPPED} | {f"target-{e}" for e in SHIPPED if env_config(e).target.create}
    assert set(manifest["stacks"]) == expected
    for name, stack in manifest["stacks"].items():
        doc = json.loads((out / stack["synthesizedStackPath"]).read_text())
        assert doc["terraform"]["required_providers"]["aws"]["version"] == "5.100.0", name
    dev = json.loads((out / manifest["stacks"]["target-dev"]["synthesizedStackPath"]).read_text())
    assert len(dev["resource"]["aws_msk_cluster"]) == 1
