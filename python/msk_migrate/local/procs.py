"""Processes started by the harness: launch detached, identify by pid + start time, stop cleanly.

A pid alone can be reused by the OS; pairing it with the kernel's start time (field 22 of
/proc/<pid>/stat) means ``down`` never signals a process that ``up`` did not start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

#: Every port :func:`free_port` handed out in this process.
_handed: set[int] = set()


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now and that this process has not handed out before. The
    kernel may give a port it just gave again once its socket is closed, so two calls in a row (a worker's REST
    and metrics ports, a broker's listeners) could return the same port, and the second server would not start."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _handed:
            _handed.add(port)
            return port


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


@dataclass
class ProcRecord:
    name: str
    pid: int
    started: int  #: kernel start time (clock ticks since boot)
    log: str

    def alive(self) -> bool:
        st = start_time(self.pid)
        if st is None or st != self.started:
            return False
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    def to_dict(self) -> dict:
        return asdict(self)


def launch(name: str, cmd: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> ProcRecord:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True,
        )
    for _ in range(50):
        st = start_time(proc.pid)
        if st is not None:
            break
        time.sleep(0.01)
    return ProcRecord(name=name, pid=proc.pid, started=st or 0, log=str(log))


def stop(rec: ProcRecord, timeout: float = 20.0) -> None:
    """SIGTERM the process group, SIGKILL after ``timeout``; no-op when it is not ours any more."""
    if not rec.alive():
        return
    try:
        os.killpg(rec.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not rec.alive():
            _reap(rec.pid)
            return
        _reap(rec.pid)
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(rec.pid, signal.SIGKILL)
    for _ in range(50):
        _reap(rec.pid)
        if not rec.alive():
            return
        time.sleep(0.1)


def kill(recs: list[ProcRecord]) -> None:
    """SIGKILL each process group of ``recs`` at once and reap them: for processes whose data is discarded
    right after (``local down --wipe``), where a graceful shutdown only waits (a broker's controlled shutdown
    while its peers go down too retries until its timeout)."""
    live = [r for r in recs if r.alive()]
    for rec in live:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(rec.pid, signal.SIGKILL)
    for _ in range(50):
        for rec in live:
            _reap(rec.pid)
        live = [r for r in live if r.alive()]
        if not live:
            return
        time.sleep(0.1)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def log_tail(path: str | Path, lines: int = 20) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_ready(rec: ProcRecord, probe: Callable[[], bool], timeout: float, interval: float = 0.5,
               log_lines: int = 30) -> None:
    """Poll ``probe`` until it is true; fail with the log tail if the process dies or time runs out.
    Exceptions from ``probe`` count as "not ready yet" (the server is still starting)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not rec.alive():
            raise RuntimeError(f"{rec.name} exited during start-up:\n{log_tail(rec.log, log_lines)}")
        try:
            if probe():
                return
        except Exception:
            pass
        time.sleep(interval)
    raise RuntimeError(f"{rec.name} not ready after {timeout:.0f}s:\n{log_tail(rec.log, log_lines)}")
