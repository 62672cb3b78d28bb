"""A worker that runs short says so (issue 44), on a real worker of the local harness: started through the image's
entrypoint (the same JVM flags as on ECS, -XX:+ExitOnOutOfMemoryError among them) with a heap too small for Connect's
plugin scan (-Xmx10m: the reflections scan of the classpath needs more, a 16m worker gets as far as its Kafka
cluster), it dies of ``OutOfMemoryError: Java heap space`` within seconds, every time, before its herder starts.
`lag` and `connectors status` then name that, in one line and in their JSON document, instead of only
"unreachable"; the exit code stays 2.

The worker is recorded as the ``connect`` worker of a copy of the session's local state (its clusters), so
``--local --local-dir`` reaches it exactly as an operator's ``--local`` reaches the harness's own worker.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.local.connect_worker import local_worker_spec, rest_url, start_connect_worker
from msk_migrate.local.procs import stop
from msk_migrate.local.state import StateFile

RUN = uuid.uuid4().hex[:6]
HEAP = "10m"
HEADLINE = "error: worker died: OutOfMemoryError (Java heap space) at "


@pytest.fixture(scope="module")
def dead_worker(local_env, tmp_path_factory):
    """(local environment directory whose ``connect`` worker died of heap exhaustion, its REST URL, its log)."""
    base = tmp_path_factory.mktemp("oom-env")
    state = local_env.state()
    spec = local_worker_spec(group_id=f"oom-{RUN}").model_copy(
        update={"heap": HEAP, "replication_factor": state.side("target").replication_factor})
    rec = start_connect_worker(local_env.target(state), base / "connect", spec, name="connect", source=local_env.source(state),
                               credentials_dir=base / "connect", from_image=False)
    try:
        deadline = time.time() + 120
        while rec.alive() and time.time() < deadline:
            time.sleep(0.5)
        assert not rec.alive(), f"the -Xmx{HEAP} worker still runs after 120 s (log {rec.log})"
        # The session's clusters, this worker as the environment's only one (no other process of the session recorded).
        StateFile(base).save(state.model_copy(update={"workers": [spec], "procs": {"connect": rec}, "flow_workers": {},
                                                      "registries": {}, "prometheus_port": None}))
        yield base, rest_url(spec), Path(rec.log)
    finally:
        stop(rec)


def test_the_worker_jvm_exits_on_its_first_out_of_memory_error(dead_worker):
    _base, _url, log = dead_worker
    lines = log.read_text().splitlines()
    assert lines[-1] == "Terminating due to java.lang.OutOfMemoryError: Java heap space", lines[-5:]


def _one_line(code: int, err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, (code, err)
    return lines[0]


def test_connectors_status_names_the_out_of_memory_error(dead_worker, msk_migrate_cli):
    base, url, log = dead_worker
    code, _out, err = msk_migrate_cli("connectors", "status", "--local", "--local-dir", str(base))
    line = _one_line(code, err)
    assert line.startswith(HEADLINE), line
    assert f"the Connect worker at {url} is unreachable (process " in line and str(log) in line
    assert f"it ran with -Xmx{HEAP}" in line and "MSK_MIGRATE_LOCAL_WORKER_HEAP" in line
    code, out, err = msk_migrate_cli("connectors", "status", "--local", "--local-dir", str(base), "--output", "json")
    doc = json.loads(out)
    assert code == 2 and json_shape_problems(doc) == [] and (doc["verdict"], doc["exit_code"]) == ("bad-input", 2)
    down = doc["worker_down"]
    assert (down["cause"], down["died"], down["worker"], down["log"]) == ("heap", True, url, str(log))
    assert doc["error"] == _one_line(code, err).removeprefix("error: ")


def test_lag_names_the_out_of_memory_error(dead_worker, msk_migrate_cli):
    base, url, _log = dead_worker
    code, _out, err = msk_migrate_cli("lag", "--local", "--local-dir", str(base))
    assert _one_line(code, err).startswith(HEADLINE)
    code, out, err = msk_migrate_cli("lag", "--local", "--local-dir", str(base), "--output", "json")
    doc = json.loads(out)
    assert code == 2 and json_shape_problems(doc) == [] and doc["command"] == "lag"
    assert doc["worker_down"]["cause"] == "heap" and doc["worker_down"]["worker"] == url


def test_a_connect_url_on_this_machine_finds_the_recorded_worker(dead_worker, msk_migrate_cli, monkeypatch):
    base, url, _log = dead_worker
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(base))
    code, _out, err = msk_migrate_cli("connectors", "status", "--connect-url", url)
    assert _one_line(code, err).startswith(HEADLINE)
