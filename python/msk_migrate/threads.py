"""Run a few blocking calls side by side and wait for all of them: the one place the start/join/raise
pattern lives (the local harness starts both clusters, a cluster's brokers, and waits for them this way).

Invariants: every call runs to its end before :func:`run_all` returns or raises (no thread is left behind);
the first failure *in the order the calls were given* is raised, with its own traceback, after all have
finished; results come back in the order the calls were given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def run_all(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Run each of ``calls`` in a thread of its own; return their results in order, or raise the first
    failure once every call has finished. One call runs in the caller's thread (no thread for nothing)."""
    if len(calls) <= 1:
        return [call() for call in calls]
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # handed to the caller below, whatever it is
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results  # type: ignore[return-value]  # every slot was filled: no call failed
