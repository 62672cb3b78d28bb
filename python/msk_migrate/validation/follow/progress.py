"""The follower's progress line (rich): one spinner whose text is the latest pass summary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console


@contextmanager
def follow_progress(console: Console) -> Iterator[Any]:
    """Yields ``say(line)``; the line replaces the previous one (transient: gone when the run ends)."""
    with console.status("starting the follower") as status:
        yield lambda line: status.update(line)
