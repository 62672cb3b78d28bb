"""What is left of a local Connect worker that does not answer: its process (alive or gone) and the tail of its
log, read from the harness's state file as data (the worker's spec, pid and log path) and from /proc.

Reads only; the decision is :func:`msk_migrate.connect_api.worker_down.classify_local`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ..config.migration import WorkerSpec
from ..connect_api.worker_down import LocalEvidence
from .procs import ProcRecord
from .state import StateFile, flow_worker_name
from .status import worker_name

#: How much of the end of a worker's log is read (a JVM's last words and the start line of its run).
TAIL_BYTES = 256 * 1024
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def log_tail(path: Path, max_bytes: int = TAIL_BYTES) -> tuple[list[str], datetime | None]:
    """The last lines of ``path`` (at most ``max_bytes`` of it) and when it was last written; ([], None) when
    it cannot be read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(size - max_bytes, 0))
            data = fh.read()
            written = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return [], None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return (lines[1:] if size > max_bytes else lines), written  # the first line of a cut is partial


def _workers(base_dir: Path) -> list[tuple[str, WorkerSpec, ProcRecord]]:
    """Every worker of the environment that has a process recorded: (process name, spec, record)."""
    store = StateFile(base_dir)
    if not store.exists():
        return []
    state = store.load()
    specs = [(worker_name(i), w) for i, w in enumerate(state.workers)]
    specs += [(flow_worker_name(name), fw.spec) for name, fw in state.flow_workers.items()]
    return [(name, spec, rec) for name, spec in specs if (rec := state.proc(name)) is not None]


def local_worker_evidence(base_dir: Path, url: str) -> LocalEvidence | None:
    """The evidence of the worker of the local environment under ``base_dir`` whose REST port is ``url``'s, or
    None (``url`` not on this machine, no such environment or worker, or a worker ``local down`` stopped)."""
    parts = urlsplit(url)
    if parts.hostname not in _LOOPBACK or not parts.port:
        return None
    for name, spec, rec in _workers(base_dir):
        if spec.rest_port == parts.port:
            lines, written = log_tail(Path(rec.log))
            return LocalEvidence(name=name, pid=rec.pid, alive=rec.alive(), log=rec.log, log_tail=tuple(lines),
                                 log_written=written, heap=spec.heap)
    return None
