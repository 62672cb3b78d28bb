"""The operator image's entrypoint passes ECS' SIGTERM on to the command it runs: a service's long-running
command (the proof follower, ``validate --follow``) finishes its work and exits within the stop timeout, and
what it printed on the way out still reaches the task's log after the marker. Its progress reaches the log while
it runs, not when it stops."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from msk_migrate.aws import operator_task

REPO = Path(__file__).resolve().parents[2]
#: A stand-in msk-migrate that runs until stopped: it says it started, and on SIGTERM persists and exits 0.
STAND_IN = """#!{python}
import signal, sys, time
stopped = []
signal.signal(signal.SIGTERM, lambda s, f: stopped.append(s))
print("following", file=sys.stderr, flush=True)
open("started", "w").close()  # the handler is in place
while not stopped:
    time.sleep(0.05)
print("mark persisted on SIGTERM", file=sys.stderr)
print('{{"verdict": "proven"}}')
"""


def test_sigterm_to_the_entrypoint_reaches_the_command_which_exits_cleanly_with_its_output(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "msk-migrate"
    fake.parent.mkdir()
    fake.write_text(STAND_IN.format(python=sys.executable))
    fake.chmod(0o755)
    # the entrypoint's run step in a process of its own (the process ECS signals), running the stand-in
    driver = ("import sys; from msk_migrate.aws import operator_entry; "
              f"sys.exit(operator_entry.run(['validate', '--follow'], {{'PATH': '/usr/bin:/bin'}}, command=[{str(fake)!r}], "
              f"records={str(tmp_path / 'records')!r}))")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen([sys.executable, "-c", driver], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (tmp_path / "started").exists():
            time.sleep(0.05)
        assert (tmp_path / "started").exists(), "the entrypoint did not start the command"
        # the command's progress is in the task's log while it runs (CloudWatch shows a live follower)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "nothing reached the task's log while the command ran"
        first = proc.stdout.readline()
        assert first == "following\n", first
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        out = first + out
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (out, err)
    task_err, task_out = operator_task.split_output(out.splitlines())
    assert task_err == ["following", "mark persisted on SIGTERM"], out
    assert task_out == ['{"verdict": "proven"}']

