"""The deploy half, applied: `make deploy-rehearse` (tests/infra/deploy_rehearsal.py) in `make test`.

target-dev (a created cluster), migration-dev and migration-prod (an existing cluster) are applied
against moto's server with the deployer's prerequisites created first, each in one pass; a second plan
changes nothing but the written list of attributes moto does not store; the teardown runs exactly as
docs/runbooks/deploy.md writes it and leaves both migration states empty, target-dev and both clusters
in place. Run as a subprocess: moto's state lives in its process, so nothing here meets another test's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TIERS = ("infra", "aws")
HERE = Path(__file__).resolve().parent


@pytest.mark.timeout(2400)
def test_both_environments_apply_replan_empty_and_tear_down_as_the_runbook_says(tmp_path: Path) -> None:
    out = tmp_path / "timings.json"
    proc = subprocess.run([sys.executable, str(HERE / "deploy_rehearsal.py"), "--workdir", str(tmp_path / "work"), "--json", str(out)],
                          capture_output=True, text=True, timeout=2300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-8000:]
    timing = json.loads(out.read_text())
    assert set(timing["apply"]) == {"target-dev", "migration-dev", "migration-prod"}
    assert set(timing["destroy"]) == {"migration-dev", "migration-prod"}
    print(proc.stdout)
