"""Console tables that stay readable in logs: numbers never truncated, paths printed as paths."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table


def table(title: str, columns: Iterable[str], numeric: Iterable[str] = ()) -> Table:
    """A table that keeps every number and name whole: ``numeric`` columns are right-aligned, and only
    the last column (free text: detail, evidence, result) wraps when the console is narrow."""
    nums = set(numeric)
    cols = list(columns)
    t = Table(title=title, title_justify="left")
    for i, c in enumerate(cols):
        if c in nums:
            t.add_column(c, justify="right", no_wrap=True, min_width=len(c), overflow="fold")
        elif i == len(cols) - 1 and len(cols) > 1:
            t.add_column(c, overflow="fold", ratio=1)
        else:
            t.add_column(c, no_wrap=True, overflow="fold")
    return t


def colour(ok: bool, text: str) -> str:
    return f"[{'green' if ok else 'red'}]{text}[/]"
