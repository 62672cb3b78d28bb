"""Memory of a process tree, sampled: the rehearsal's peak (every broker, ZooKeeper, Connect worker and the
Spark JVM are descendants of the process that started them)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d.name))
    return kids


def descendants(root: int) -> set[int]:
    """Every process below ``root`` now."""
    kids, out, todo = _children(), set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def tree_rss_bytes(root: int, exclude: set[int] | frozenset[int] = frozenset()) -> int:
    """Sum of the resident set sizes of ``root`` and all its descendants but ``exclude`` (and theirs)."""
    kids, total, todo = _children(), 0, [root]
    while todo:
        pid = todo.pop()
        if pid in exclude:
            continue
        todo += kids.get(pid, [])
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


class PeakSampler:
    """Samples :func:`tree_rss_bytes` of ``root`` (default: this process) every ``interval`` seconds,
    leaving out the processes that ran below it already when sampling began (in a test session: the
    session's other clusters), so the peak is that of what started inside the ``with`` block."""

    def __init__(self, root: int | None = None, interval: float = 2.0):
        self.root, self.interval = root or os.getpid(), interval
        self.exclude: set[int] = set()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.root, self.exclude))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakSampler:
        self.exclude = descendants(self.root)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
