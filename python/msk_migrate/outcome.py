"""What a command produces, as data: the one shape every command returns and one renderer prints.

A runbook operation (``runbook/``, ``offset_translation/``, ``cutover``, ``status`` …) returns an
:class:`Outcome`; the command that called it only declares options and hands the outcome to
:func:`msk_migrate.render.render`, which prints it as a table (text), one JSON document
(``--output json``, :data:`msk_migrate.cliutil.JSON_SHAPE`) or HTML, and exits with
:attr:`Outcome.exit_code`. No command checks the output format itself.

Invariants:

- ``exit_code`` is the verdict's code: 0 ok / ready / in sync, 1 not yet (a failed check, a mismatch),
  2 bad input. An outcome never carries a verdict on nothing as a pass: an operation that compared,
  moved or proved nothing returns a verdict that says so with exit code 1 (or raises a UsageError).
- ``rows`` are the command's detail in JSON form (objects; dataclasses with ``to_dict`` are converted
  by :meth:`Outcome.document`); ``views`` say how text output shows them (a table each, or a summary
  when there are too many rows), so JSON always carries every row.
- ``talked_to`` names every cluster, worker, registry or store the operation reached (role -> where).
- ``stream`` rows are read once, by the renderer: text output then shows ``views`` (set by ``end``,
  which runs after the last row, e.g. a per-topic summary) and holds no row the views do not keep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    """One column of a text table: its header, how to read a cell from a row, and whether it is a number
    (right-aligned, never cut) or a good/bad cell (coloured by ``ok``)."""

    header: str
    cell: Callable[[Any], Any]
    numeric: bool = False
    ok: Callable[[Any], bool] | None = None

    def text(self, row: Any) -> str:
        v = self.cell(row)
        return "-" if v is None else (f"{v:,}" if self.numeric and isinstance(v, int) and not isinstance(v, bool) else str(v))


def col(header: str, key: str | Callable[[Any], Any], numeric: bool = False,
        ok: Callable[[Any], bool] | None = None) -> Column:
    """A :class:`Column` reading ``key`` from a dict row (or calling ``key`` on the row)."""
    if callable(key):
        return Column(header, key, numeric, ok)

    def getter(r: Any) -> Any:
        return r.get(key) if isinstance(r, dict) else getattr(r, key, None)

    return Column(header, getter, numeric, ok)


@dataclass(frozen=True)
class View:
    """A table of the text output: title, columns, and the rows it shows (the outcome's rows unless given)."""

    title: str
    columns: Sequence[Column]
    rows: Sequence[Any] | None = None


@dataclass
class Outcome:
    """The result of one operation (see the module docstring for the invariants)."""

    command: str
    verdict: str
    exit_code: int
    rows: list[Any] = field(default_factory=list)
    talked_to: dict[str, Any] = field(default_factory=dict)
    #: Extra keys of the JSON document (beside talked_to, rows, verdict, exit_code).
    extra: dict[str, Any] = field(default_factory=dict)
    #: How text output shows the rows; none = one table of every key of the first row.
    views: list[View] = field(default_factory=list)
    #: Lines printed after the tables in text output (a summary, where the evidence was written, the next command).
    notes: list[str] = field(default_factory=list)
    #: Rows streamed rather than held (a 10,000-partition verify): consumed once by the renderer.
    stream: Iterator[Any] | None = None
    #: Called after ``stream`` is exhausted: keys known only at the end (verdict, exit_code, …).
    tail: Callable[[], dict[str, Any]] | None = None
    #: Called after ``stream`` is exhausted, before text is printed: the views and notes known only then.
    end: Callable[[Outcome], None] | None = None
    #: The one line on stderr of an outcome that is bad input found on a cluster (exit 2, e.g. a missing ACL).
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def document(self) -> dict[str, Any]:
        """The JSON document (:data:`msk_migrate.cliutil.JSON_SHAPE`)."""
        return json_document(self.talked_to, self.rows, self.verdict, self.exit_code, command=self.command, **self.extra)


#: How an operation says what it is doing (a spinner's text in a terminal; nothing under --output json).
Progress = Callable[[str], None]


def quiet(_: str) -> None:
    """The :data:`Progress` of a caller that shows none."""


def json_document(talked_to: dict[str, Any] | None, rows: Iterable[Any], verdict: str, exit_code: int,
                  **extra: Any) -> dict[str, Any]:
    """The one JSON document of every command (:data:`msk_migrate.cliutil.JSON_SHAPE`): ``extra`` first, then the
    four keys of the shape, which ``extra`` cannot override; rows with ``to_dict`` are converted."""
    return {**extra, "talked_to": talked_to or {}, "rows": [to_json(r) for r in rows], "verdict": verdict,
            "exit_code": exit_code}


def to_json(row: Any) -> Any:
    """A row as JSON data: ``to_dict()`` when it has one, else as is."""
    return row.to_dict() if hasattr(row, "to_dict") else row


def first_failure(checks: Iterable[tuple[str, bool]]) -> str | None:
    """The name of the first check that failed (for a verdict line), or None."""
    return next((name for name, ok in checks if not ok), None)
