"""Console tables that stay readable in logs: numbers never truncated, paths printed as paths."""

from __future__ import annotations

from typing import Iterable

from rich.table import Table


def table(title: str, columns: Iterable[str], numeric: Iterable[str] = ()) -> Table:
    """A table whose ``numeric`` columns never wrap or truncate (other columns fold instead)."""
    nums = set(numeric)
    t = Table(title=title, title_justify="left")
    for c in columns:
        if c in nums:
            t.add_column(c, justify="right", no_wrap=True, min_width=len(c))
        else:
            t.add_column(c, overflow="fold")
    return t


def colour(ok: bool, text: str) -> str:
    return f"[{'green' if ok else 'red'}]{text}[/]"
