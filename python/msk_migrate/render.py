"""The one place that prints an :class:`~msk_migrate.outcome.Outcome` and sets the exit code.

Text: the outcome's tables (or one table of its rows) and notes on stdout; JSON: one document of
:data:`~msk_migrate.cliutil.JSON_SHAPE` on stdout (human lines go to stderr, so stdout stays
machine-readable). :func:`html_page` makes a self-contained page of the same tables, which ``status``
writes beside the ledger (no command prints HTML on stdout: ``--output`` is text or json).
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from .cliutil import emit_json, emit_json_stream, human
from .outcome import Column, Outcome, Progress, View, col, to_json
from .tables import colour, table


def _views(o: Outcome, rows: Sequence[Any]) -> list[View]:
    if o.views:
        return o.views
    if not rows:
        return []
    first = to_json(rows[0])
    keys = list(first) if isinstance(first, dict) else []
    return [View(o.command, [col(k, k) for k in keys], [to_json(r) for r in rows])]


def _cell(c: Column, r: Any) -> str:
    text = c.text(r)
    return colour(c.ok(r), text) if c.ok is not None else text


def text_tables(o: Outcome, rows: Sequence[Any]) -> list[Any]:
    """The rich tables of the outcome's views (what text output and ``--watch`` show)."""
    out = []
    for v in _views(o, rows):
        if not v.columns:
            continue
        t = table(v.title, [c.header for c in v.columns], numeric=[c.header for c in v.columns if c.numeric])
        for r in (v.rows if v.rows is not None else rows):
            t.add_row(*(_cell(c, r) for c in v.columns))
        out.append(t)
    return out


def print_text(o: Outcome, rows: Sequence[Any]) -> None:
    con = human("text")
    for t in text_tables(o, rows):
        con.print(t)
    for line in o.notes:
        con.print(line, highlight=False, soft_wrap=True)


def html_page(o: Outcome, rows: Sequence[Any] | None = None) -> str:
    """A self-contained HTML page of the outcome's tables (no script, no external asset)."""
    rows = o.rows if rows is None else rows
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(o.command)}</title>",
             "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px}.ok{color:#070}.bad{color:#b00}</style>",
             f"<h1>{html.escape(o.command)}: <span class={'ok' if o.ok else 'bad'}>{html.escape(o.verdict)}</span></h1>"]
    if o.talked_to:
        parts.append("<p>" + "<br>".join(f"{html.escape(str(k))}: {html.escape(str(v))}" for k, v in o.talked_to.items() if v) + "</p>")
    for v in _views(o, rows):
        parts.append(f"<table><caption>{html.escape(v.title)}</caption><tr>"
                     + "".join(f"<th>{html.escape(c.header)}</th>" for c in v.columns) + "</tr>")
        for r in (v.rows if v.rows is not None else rows):
            cells = []
            for c in v.columns:
                cls = "" if c.ok is None else f" class={'ok' if c.ok(r) else 'bad'}"
                cells.append(f"<td{cls}>{html.escape(c.text(r))}</td>")
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    parts += [f"<p>{html.escape(n)}</p>" for n in o.notes]
    return "\n".join(parts) + "\n"


def _drain(o: Outcome, keep: bool) -> list[Any]:
    """Read ``o.stream`` once (keeping its rows only when ``keep``), then settle what only its end tells."""
    rows: list[Any] = list(o.rows)
    if o.stream is not None:
        for r in o.stream:
            if keep:
                rows.append(r)
        if o.tail is not None:
            end = o.tail()
            o.verdict, o.exit_code = str(end.get("verdict", o.verdict)), int(end.get("exit_code", o.exit_code))
    if o.end is not None:
        o.end(o)
    return rows


def render(o: Outcome, output: str = "text") -> NoReturn:
    """Print ``o`` as ``output`` and exit with its exit code (the only ``sys.exit`` of a command)."""
    if output == "json":
        if o.stream is not None:
            head = {"command": o.command, **o.extra, "talked_to": o.talked_to}
            emit_json_stream(head, o.stream, o.tail or (lambda: {"verdict": o.verdict, "exit_code": o.exit_code}))
            if o.tail is not None:
                o.exit_code = int(o.tail().get("exit_code", o.exit_code))
        else:
            emit_json(o.document())
    else:
        print_text(o, _drain(o, keep=o.end is None))  # with ``end`` the views hold what text shows: rows stay unheld
    if o.error:
        from .cliutil import fail

        fail(o.error, o.exit_code)
    sys.exit(o.exit_code)


def banner(line: str, output: str) -> None:
    """A line stated before the work (which clusters and worker a command acts on): text output only; a
    JSON document carries it as ``talked_to`` and stderr stays for the one error line."""
    if output != "json":
        human(output).print(line, highlight=False, soft_wrap=True)


@contextmanager
def progress(output: str, text: str) -> Iterator[Progress]:
    """A spinner (on stderr under ``--output json``) while an operation works; yields its :data:`Progress`."""
    with human(output).status(text) as sp:
        yield lambda line: sp.update(line)


def watch(measure: Callable[[], Outcome], output: str, interval: float, timeout: float) -> Outcome:
    """``--watch``: a live table of ``measure()`` refreshed every ``interval`` s until its outcome is ok
    (or ``timeout`` s pass; 0 = never); returns the last outcome, whose tables are already on screen
    (so it comes back with no views). JSON output does not watch: one measure."""
    o = measure()
    if output == "json":
        return o
    from rich.console import Group
    from rich.live import Live

    deadline = time.time() + timeout if timeout else None
    with Live(Group(*text_tables(o, o.rows)), console=human(output), refresh_per_second=2) as live:
        while not o.ok and (deadline is None or time.time() < deadline):
            time.sleep(interval)
            o = measure()
            live.update(Group(*text_tables(o, o.rows)))
    o.views = [View("", [], [])]
    return o
