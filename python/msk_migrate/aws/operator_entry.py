"""The operator image's entrypoint: runs one runbook command, named in the task's environment, and nothing else.

Why an entrypoint and not the container command: whoever may run the operator task could override the
command (``containerOverrides.command``) and run anything with the operator role's rights. ECS overrides
replace the command, never the entrypoint, so the image's entrypoint is this module, and it refuses any
command at all (:data:`ARGV_ENV` carries the request instead) and any subcommand outside :data:`RUNBOOK_COMMANDS`:
one line, exit 2, nothing run. ``msk-migrate … --in-vpc`` (:mod:`.operator_task`) and ``preflight --in-vpc``
(:mod:`.preflight_task`) send only environment overrides, never ``command`` or ``taskRoleArn``.

What it does for an accepted request: writes the flow file (:data:`CONFIG_ENV`) and the environment's record
(:data:`RECORD_ENV`) into ``/tmp`` (the image's only writable path), runs ``msk-migrate`` with the request, then
prints the command's stderr, the record it left (after :data:`RECORD_MARKER`), :data:`STDOUT_MARKER` and its
stdout, and exits with its exit code: the caller reads the task's log back in that order.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

#: The runbook's commands the operator task may run (``msk-migrate <command> …``); ``local``, ``rehearse`` and
#: ``build-images`` are laptop commands and are refused, as is anything else.
RUNBOOK_COMMANDS = ("acls", "cleanup", "connectors", "cutover", "lag", "offsets", "preflight", "rollback", "schemas", "status",
                    "validate")
#: The request: a JSON list of the words after ``msk-migrate``.
ARGV_ENV = "MSK_MIGRATE_OPERATOR_ARGV"
#: The environment whose record travels (its file name in the record directory), when there is one.
RECORD_NAME_ENV = "MSK_MIGRATE_OPERATOR_RECORD"
CONFIG_ENV = "MSK_MIGRATE_CONFIG_YAML"
IN_TASK_FLOW = "/tmp/msk-migrate-flow.yaml"
RECORD_ENV = "MSK_MIGRATE_RECORD_JSON"
IN_TASK_RECORDS = "/tmp/msk-migrate-recorded"
RECORD_MARKER = "--- msk-migrate environment record ---"
STDOUT_MARKER = "--- msk-migrate stdout ---"


class Refused(Exception):
    """A request the entrypoint does not run; the message is the one line it prints."""


def request(argv: list[str], environ: Mapping[str, str]) -> list[str]:
    """The ``msk-migrate`` words to run; :class:`Refused` for a command override or a command outside the list."""
    if argv:
        raise Refused("the operator task takes no command (a containerOverrides.command was given): "
                      f"send the runbook command in {ARGV_ENV}")
    raw = environ.get(ARGV_ENV)
    if not raw:
        raise Refused(f"{ARGV_ENV} is not set: send the runbook command as a JSON list, e.g. [\"lag\", \"--env\", ...]")
    try:
        words = json.loads(raw)
    except ValueError:
        raise Refused(f"{ARGV_ENV} is not JSON: send a JSON list of strings") from None
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise Refused(f"{ARGV_ENV} must be a non-empty JSON list of strings")
    if words[0] not in RUNBOOK_COMMANDS:
        raise Refused(f"{ARGV_ENV}: {words[0][:40]!r} is not a runbook command the operator task runs "
                      f"(allowed: {', '.join(RUNBOOK_COMMANDS)})")
    if any(w == "--in-vpc" or w.startswith("--in-vpc=") for w in words):
        raise Refused(f"{ARGV_ENV}: --in-vpc inside the operator task: the task already runs in the VPC")
    return words


def run(words: list[str], environ: Mapping[str, str], *, records: str = IN_TASK_RECORDS, flow: str = IN_TASK_FLOW) -> int:
    """Write the flow and record, run the command, print stderr / record / marker / stdout; its exit code.

    The command's stderr (its progress) reaches the task's log line by line as it is written: a service's
    long-running command (the proof follower) is read in CloudWatch while it runs, not when the task stops.
    Its stdout (the result the caller parses) is kept and printed after the markers, once it has exited."""
    if environ.get(CONFIG_ENV):
        Path(flow).write_text(environ[CONFIG_ENV])
    name = environ.get(RECORD_NAME_ENV)
    record = Path(records) / f"{name}.json" if name and "/" not in name and not name.startswith(".") else None
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        if environ.get(RECORD_ENV):
            record.write_text(environ[RECORD_ENV])
    exe = shutil.which("msk-migrate")
    cmd = [exe] if exe else [sys.executable, "-m", "msk_migrate.commands"]
    proc = subprocess.Popen([*cmd, *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(environ))
    out = sys.stdout
    kept: list[str] = []
    reader = threading.Thread(target=lambda: kept.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    with _passing_stop_signals_to(proc):
        assert proc.stderr is not None
        for line in proc.stderr:
            out.write(line if line.endswith("\n") else line + "\n")
            out.flush()
        reader.join()
        proc.wait()
    stdout = kept[0] if kept else ""
    if record is not None and record.is_file():
        out.write(f"{RECORD_MARKER}\n{record.read_text()}\n")
    out.write(f"{STDOUT_MARKER}\n{stdout}")
    out.flush()
    return proc.returncode


@contextlib.contextmanager
def _passing_stop_signals_to(proc: subprocess.Popen) -> Iterator[None]:
    """SIGTERM/SIGINT to this process go on to the command: ECS stops a task (a service's, such as the proof
    follower's ``validate --follow``) with SIGTERM to the entrypoint, and the command must get it to finish its
    work (persist its mark) and exit within the stop timeout, its output still printed here."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, lambda s, _f: proc.send_signal(s)) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        words = request(args, os.environ)
    except Refused as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return run(words, os.environ)


if __name__ == "__main__":
    sys.exit(main())
