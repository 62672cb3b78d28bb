"""The deploy half, applied: `make deploy-rehearse` (tests/infra/deploy_rehearsal.py) in `make test`.

target-dev (a created cluster), migration-dev and migration-prod (an existing cluster) are applied
against moto's server with the deployer's prerequisites created first, each in one pass; a second plan
changes nothing but the written list of attributes moto does not store; the teardown runs exactly as
docs/runbooks/deploy.md writes it and leaves both migration states empty, target-dev and both clusters
in place. Run as subprocesses: moto's state lives in its process, so nothing here meets another test's. The two
environments share nothing (each its own account), so each is rehearsed in its own process with its own moto
server, both at once: most of an apply is the provider's waits (an S3 lifecycle rule is read back three times
10 s apart), which overlap; `make deploy-rehearse` runs both in one process.
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
    lanes = {}
    for env in ("dev", "prod"):
        out = tmp_path / f"timings-{env}.json"
        lanes[env] = (out, subprocess.Popen(
            [sys.executable, str(HERE / "deploy_rehearsal.py"), "--env", env, "--workdir", str(tmp_path / f"work-{env}"),
             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    apply, destroy = set(), set()
    try:
        for env, (out, proc) in lanes.items():
            stdout, stderr = proc.communicate(timeout=2300)
            assert proc.returncode == 0, f"{env}: " + stdout[-3000:] + stderr[-8000:]
            timing = json.loads(out.read_text())
            apply |= set(timing["apply"])
            destroy |= set(timing["destroy"])
            print(stdout)
    finally:
        for _, proc in lanes.values():
            if proc.poll() is None:
                proc.kill()
    assert apply == {"target-dev", "migration-dev", "migration-prod"}
    assert destroy == {"migration-dev", "migration-prod"}
