"""Waves: the sets of topics a migration moves together, and which wave a topic belongs to.

API (pure: no connection, no click):

- ``migration.waves`` (:class:`~msk_migrate.config.migration.MigrationSpec`): wave name -> topic names or
  regexes, in the order the waves move (the YAML's order). Checked when the config loads by
  :func:`check_wave_entries` (names, regexes) and :func:`check_waves_against_selection` (a literal topic name
  outside the migration's selection, or the same topic in two waves: one line naming ``waves.<wave>``).
- :func:`wave_topics` ``(migration, source_topics, wave)``: the topics of one wave (``None``: the whole
  migration) among the source's topics; an unknown wave, an entry that names no selected topic, or a topic
  matched by two waves is a :class:`~msk_migrate.errors.UsageError` (exit 2) naming the field and the fix.
- :func:`assign_waves` ``(migration, source_topics)``: every selected topic -> its wave (or ``None``).
- :func:`wave_order`: the waves in moving order, for "a group that reads two waves moves with the later one".

Invariants: a topic of the selection is in at most one wave; a wave names only topics of the selection
(``topics`` minus ``topics_exclude``, MM2's full-match semantics); topics in no wave belong to the whole
migration only (``--wave`` omitted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..errors import UsageError
from ..kafka.selection import NameFilter, topic_selection

#: A wave's name: it appears in commands (``--wave``), ledger records and file names.
WAVE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: An entry made only of topic-name characters is a literal topic name (``.`` then matches itself too).
_LITERAL = re.compile(r"^[A-Za-z0-9._-]+$")

FIELD = "migration.waves"


def is_literal(entry: str) -> bool:
    """True when ``entry`` is a plain topic name rather than a regex."""
    return bool(_LITERAL.match(entry))


def _error(loc: tuple[str, ...], value: object, message: str) -> ValidationError:
    """A validation error located at ``waves.<...>`` (so the one error line names the wave)."""
    return ValidationError.from_exception_data(
        "MigrationSpec",
        [InitErrorDetails(type=PydanticCustomError("value_error", "{message}", {"message": message}), loc=loc, input=value)],
    )


def check_wave_entries(waves: dict[str, list[str]]) -> dict[str, list[str]]:
    """Wave names are ``[A-Za-z0-9_-]{1,64}``; each wave names at least one topic; every entry compiles as a
    regex. Raise ValueError naming the wave and the entry."""
    for name, entries in waves.items():
        if not WAVE_NAME.match(name):
            raise ValueError(f"wave name {name!r} must match [A-Za-z0-9_-]{{1,64}} (rename the wave)")
        if not entries:
            raise ValueError(f"wave {name!r} names no topic (list its topics or regexes, or remove the wave)")
        for entry in entries:
            if not entry.strip():
                raise ValueError(f"wave {name!r} has an empty entry (remove it)")
            try:
                re.compile(entry)
            except re.error as exc:
                raise ValueError(f"wave {name!r}: entry {entry!r} is not a valid regex: {exc} (fix the regex)") from None
    return waves


def check_waves_against_selection(waves: dict[str, list[str]], topics: Iterable[str], topics_exclude: Iterable[str]) -> None:
    """What can be told without the source: a literal topic name outside the selection (``topics`` minus
    ``topics_exclude``), or one literal name in two waves (named twice, or named in one wave and matched
    by a regex of another). Raise a ValidationError located at ``waves.<wave>``."""
    selection = NameFilter(tuple(topics), tuple(topics_exclude))
    for name, entries in waves.items():
        for entry in entries:
            if is_literal(entry) and not selection.matches(entry):
                raise _error(("waves", name), entry,
                             f"topic {entry!r} of wave {name!r} is outside the migration's selection (topics minus "
                             "topics_exclude); add it to migration.topics or remove it from the wave")
        for other, other_entries in waves.items():
            if other == name:
                continue
            for entry in entries:
                if is_literal(entry) and any(re.fullmatch(o, entry) for o in other_entries):
                    raise _error(("waves", name), entry,
                                 f"topic {entry!r} is in wave {name!r} and in wave {other!r}; keep it in one wave")


def wave_order(migration: Any) -> list[str]:
    """The waves in the order they move (as the YAML lists them)."""
    return list(migration.waves)


def assign_waves(migration: Any, source_topics: Iterable[str]) -> dict[str, str | None]:
    """Every topic of the migration's selection among ``source_topics`` -> its wave (``None``: in no wave).
    A topic that entries of two waves match: UsageError naming both waves."""
    selected = topic_selection(migration).select(source_topics)
    waves: Mapping[str, list[str]] = migration.waves
    out: dict[str, str | None] = {}
    for topic in selected:
        hits = [w for w, entries in waves.items() if any(re.fullmatch(e, topic) for e in entries)]
        if len(hits) > 1:
            raise UsageError(f"{FIELD}.{hits[1]}", f"topic {topic!r} is in wave {hits[0]!r} and in wave {hits[1]!r}",
                             "make the waves' names or regexes disjoint (each topic in one wave)")
        out[topic] = hits[0] if hits else None
    return out


def check_wave_name(migration: Any, wave: str | None, field: str = "--wave") -> None:
    """An unknown wave is bad input: one line listing the known ones."""
    if wave is None or wave in migration.waves:
        return
    known = ", ".join(migration.waves) or "none defined"
    raise UsageError(field, f"no wave {wave!r} in {FIELD} (waves: {known})",
                     f"pass one of: {known}" if migration.waves else f"define the wave under {FIELD} in the environment YAML")


def unmatched_entries(migration: Any, source_topics: Iterable[str], wave: str) -> list[str]:
    """Entries of ``wave`` that name no topic of the selection among ``source_topics``."""
    selected = topic_selection(migration).select(source_topics)
    return [e for e in migration.waves[wave] if not any(re.fullmatch(e, t) for t in selected)]


def wave_topics(migration: Any, source_topics: Iterable[str], wave: str | None) -> list[str]:
    """The topics of ``wave`` (``None``: the whole selection) among ``source_topics``, sorted.

    Bad input (UsageError, exit 2, checked before anything acts): an unknown wave; a topic two waves
    match; an entry of the wave that names no topic of the selection on the source (a typo, a topic
    outside ``topics``/``topics_exclude``, or one not created yet)."""
    names = list(source_topics)
    check_wave_name(migration, wave)
    assignment = assign_waves(migration, names)
    if wave is None:
        return sorted(assignment)
    missing = unmatched_entries(migration, names, wave)
    if missing:
        raise UsageError(f"{FIELD}.{wave}", f"{missing[0]!r} names no topic of the migration's selection on the source",
                         "fix the topic name or regex, or add the topic to migration.topics")
    return sorted(t for t, w in assignment.items() if w == wave)
