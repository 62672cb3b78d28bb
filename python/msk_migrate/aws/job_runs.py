"""Following one job run of a managed Spark home (EMR Serverless, Glue) to its end."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Minutes after which the home stops a validation run (EMR Serverless and Glue alike).
RUN_TIMEOUT_MINUTES = 720


def poll_until_final(read: Callable[[], tuple[str, str]], final_states: frozenset[str], label: str,
                     progress: Callable[[str], None], *, poll_seconds: float = 10.0,
                     sleep: Callable[[float], None] = time.sleep) -> tuple[str, str]:
    """Call ``read`` (-> state, details) until the state is final, telling ``progress`` each new state as
    ``<label>: STATE (details)``; returns the final state and its details."""
    last = ""
    while True:
        state, details = read()
        if state != last:
            progress(f"{label}: {state}" + (f" ({details})" if details else ""))
            last = state
        if state in final_states:
            return state, details
        sleep(poll_seconds)
