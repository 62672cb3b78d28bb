"""Which topics and consumer groups a flow covers, matched exactly as MM2 matches them.

MM2's DefaultTopicFilter/DefaultGroupFilter join the configured regexes with ``|`` after splitting the
config value at commas, and match the whole name. A regex that itself contains a comma (``a{1,3}``)
would be cut in two by MM2, so :func:`check_mm2_regexes` refuses it up front.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


def check_mm2_regexes(values: Iterable[str], field_name: str) -> list[str]:
    """Raise ValueError naming ``field_name`` when an entry is not a regex MM2 can take as a list item."""
    out = list(values)
    for value in out:
        if "," in value:
            raise ValueError(
                f"{field_name} entry {value!r} contains a comma, which MM2 reads as a list separator "
                "(rewrite the regex without ',' e.g. a{{1,3}} as (a|aa|aaa), or give two entries)"
            )
        if not value.strip():
            raise ValueError(f"{field_name} has an empty entry")
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"{field_name} entry {value!r} is not a valid regex: {exc}") from None
    return out


@dataclass(frozen=True)
class NameFilter:
    """Full-match include regexes minus full-match exclude regexes (MM2's semantics)."""

    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()

    def matches(self, name: str) -> bool:
        return any(re.fullmatch(p, name) for p in self.include) and not any(re.fullmatch(p, name) for p in self.exclude)

    def select(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if self.matches(n))


@dataclass(frozen=True)
class TopicSelection(NameFilter):
    """Topics of a flow and their names on the target (identity unless renamed)."""

    renames: Mapping[str, str] = field(default_factory=dict)

    def target_name(self, source_topic: str) -> str:
        return self.renames.get(source_topic, source_topic)

    def source_name(self, target_topic: str) -> str:
        reverse = {v: k for k, v in self.renames.items()}
        return reverse.get(target_topic, target_topic)


def exact(names: Iterable[str]) -> list[str]:
    """Regexes matching exactly these names (for flows over a named set of topics)."""
    return [re.escape(n) for n in names]


def topic_selection(migration) -> TopicSelection:
    """The topic selection of a :class:`~msk_migrate.config.migration.MigrationSpec`."""
    return TopicSelection(tuple(migration.topics), tuple(migration.topics_exclude), dict(migration.topic_renames))


def group_selection(migration) -> NameFilter:
    return NameFilter(tuple(migration.groups), tuple(migration.groups_exclude))
