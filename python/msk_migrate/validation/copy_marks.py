"""The validator's account of copy marks (:mod:`msk_migrate.topology.marks`): what a flow with ``mark_copies``
changes in a record, and nothing else.

A flow ``S -> T`` with marks on writes each source record to T unchanged except for exactly one header
``msk-migrate.copied-from.<S>`` with the value ``<S>`` (UTF-8) appended after the record's own headers. So:

- a target record is compared with its source record after :func:`strip_mark` removed that one trailing header;
  a target record without it, with another value, or with the mark anywhere but last is *not* stripped (its
  fingerprint then differs from every source record's: it shows as unexpected) and is counted as
  ``mark missing/wrong``;
- a source record that carries the target's mark (``copied-from.<T>`` anywhere: it came from T by the opposite
  flow, which the forward flow's filter skips) is not expected on T: left out and counted as ``origin: target``.

Invariants: only a header whose key and value are exactly the flow's mark, in the last position, is ever removed,
and at most one; every other header (another flow's earlier mark of a forwarded record included) is compared as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from ..topology.marks import mark_header, origins

Headers = list[tuple[str, bytes | None]]


class MarkState(StrEnum):
    """What :func:`strip_mark` found on one target record."""

    OK = "ok"  #: the flow's mark, last, with its value: removed
    MISSING = "missing"  #: no header with the mark's key
    WRONG = "wrong"  #: the mark's key with another value, or not in the last position


def strip_mark(headers: Sequence[tuple[str, bytes | None]] | None, alias: str) -> tuple[Headers | None, MarkState]:
    """``headers`` without the trailing mark of a copy from ``alias``, and what was found.

    When the state is not OK the headers are returned unchanged (the record is compared as it is, so it cannot
    match a source record). No headers left after the removal is ``None``, as the Kafka clients deliver a record
    without headers."""
    key = mark_header(alias)
    hs = list(headers or ())
    if hs and hs[-1][0] == key and hs[-1][1] == alias.encode():
        rest = hs[:-1]
        return (rest or None), MarkState.OK
    if any(k == key for k, _ in hs):
        return (hs or None), MarkState.WRONG
    return (hs or None), MarkState.MISSING


def came_from(headers: Sequence[tuple[str, bytes | None]] | None, alias: str) -> bool:
    """True when the record was copied from ``alias`` at some hop (it carries ``copied-from.<alias>``)."""
    return alias in origins(headers)
