"""Each wave's topics and consumer groups, as the source shows them now.

API:

- :func:`plan_waves` ``(source, migration) -> WavePlan``: every topic of the migration's selection with its
  wave (``migration.waves``, :mod:`msk_migrate.config.waves`), and every checkpointed group (the migration's
  group selection) that has committed offsets on a selected topic, with the waves of the topics it reads.
- :attr:`GroupWaves.wave`: the wave a group moves with. A group moves once and as a whole (its members read
  from one cluster), so a group that reads topics of two waves moves with the **later** one (waves move in
  the order the YAML lists them); until then the earlier wave lists it as read there but moving later. A
  group that reads only topics in no wave moves with the whole migration (``None``).
- :meth:`WavePlan.topics_of` / :meth:`WavePlan.groups_of` ``(wave)``: what ``--wave W`` acts on (``None``: all).
- :func:`check_waves`: preflight's rows (one per wave: its topics, groups, and the groups it shares).

Groups are derived from the source's committed offsets (OffsetFetch for every selected group, in flight
together), so a group that never committed is not seen: the ledger's ``abandoned`` records cover groups the
operator declares instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec
from ..config.waves import assign_waves, check_wave_name, unmatched_entries, wave_order
from ..kafka.selection import group_selection

#: The name shown for topics and groups that belong to no wave.
NO_WAVE = "(no wave)"


@dataclass
class GroupWaves:
    """One consumer group: the selected topics it has committed offsets on, their waves, and the wave it moves with."""

    group: str
    topics: list[str]
    waves: list[str]  #: the named waves of ``topics``, in moving order
    wave: str | None  #: the wave the group moves with: the latest of ``waves`` (None: only topics in no wave)

    @property
    def spans(self) -> bool:
        return len(self.waves) > 1

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "topics": self.topics, "waves": self.waves, "wave": self.wave}


@dataclass
class WavePlan:
    """The migration's waves over the source as it is now (see the module docstring)."""

    order: list[str]
    topic_wave: dict[str, str | None]  #: every selected source topic -> its wave
    groups: dict[str, GroupWaves] = field(default_factory=dict)

    def topics_of(self, wave: str | None) -> list[str]:
        return sorted(t for t, w in self.topic_wave.items() if wave is None or w == wave)

    def groups_of(self, wave: str | None) -> list[str]:
        """The groups that move with ``wave`` (None: every group of the migration)."""
        return sorted(g for g, gw in self.groups.items() if wave is None or gw.wave == wave)

    def shared_with(self, wave: str) -> list[GroupWaves]:
        """Groups that read topics of ``wave`` but move with a later wave."""
        return [gw for _, gw in sorted(self.groups.items()) if wave in gw.waves and gw.wave != wave]

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "topics": self.topic_wave, "groups": {g: gw.to_dict() for g, gw in sorted(self.groups.items())}}


def plan_waves(source: AdminSession, migration: MigrationSpec, topics: dict[str, int] | None = None) -> WavePlan:
    """The plan over ``source``'s topics (``topics``: its ``{name: partitions}`` when already read)."""
    assignment = assign_waves(migration, topics if topics is not None else source.topics())
    order = wave_order(migration)
    plan = WavePlan(order, assignment)
    rank = {w: i for i, w in enumerate(order)}
    chosen = group_selection(migration).select(source.groups())
    for group, committed in source.committed_many(chosen):  # OffsetFetch requests in flight together
        read = sorted({t for t, _ in committed if t in assignment})
        if not read:
            continue
        waves = sorted({w for t in read if (w := assignment[t]) is not None}, key=rank.__getitem__)
        plan.groups[group] = GroupWaves(group, read, waves, waves[-1] if waves else None)
    return plan


def wave_groups(source: AdminSession, migration: MigrationSpec, wave: str | None) -> list[str]:
    """The groups that move with ``wave`` (unknown wave: UsageError before any request)."""
    check_wave_name(migration, wave)
    return plan_waves(source, migration).groups_of(wave)


def wave_rows(plan: WavePlan, migration: MigrationSpec, source_topics: list[str]) -> list[tuple[str, str, str]]:
    """Preflight rows ``(check, status, detail)``: one per wave, then the topics in no wave."""
    rows: list[tuple[str, str, str]] = []
    for wave in plan.order:
        topics, groups = plan.topics_of(wave), plan.groups_of(wave)
        missing = unmatched_entries(migration, source_topics, wave)
        shared = plan.shared_with(wave)
        later = [gw for gw in plan.groups.values() if gw.wave == wave and gw.spans]
        detail = (f"{len(topics)} topic(s): {_names(topics)}; {len(groups)} group(s) move with it: {_names(groups)}")
        if later:
            detail += "; " + "; ".join(f"{gw.group} also reads wave(s) {', '.join(w for w in gw.waves if w != wave)} and moves "
                                       f"with {wave}, the later" for gw in later)
        if shared:
            detail += "; read here but moving with a later wave: " + "; ".join(f"{gw.group} (with {gw.wave})" for gw in shared)
        if missing:
            rows.append((f"wave {wave}", "fail", f"{', '.join(repr(m) for m in missing)} name(s) no topic of the selection on the "
                         f"source (fix the name or regex in migration.waves.{wave}); " + detail))
        else:
            rows.append((f"wave {wave}", "ok" if topics else "warn", detail))
    loose = plan.topics_of(None) if not plan.order else [t for t, w in plan.topic_wave.items() if w is None]
    if plan.order and loose:
        rows.append(("topics in no wave", "warn", f"{len(loose)} topic(s) move only with the whole migration (no --wave): "
                     f"{_names(sorted(loose))} (list them in a wave of migration.waves)"))
    return rows


def _names(items: list[str], limit: int = 10) -> str:
    return (", ".join(items[:limit]) + (f" … {len(items) - limit} more" if len(items) > limit else "")) or "none"


def check_waves(p: Any) -> None:
    """Preflight check (``p``: :class:`~msk_migrate.runbook.preflight.Preflight`): each wave's topics and groups,
    and the groups that read topics of two waves (they move with the later one). No waves: one ``skip`` row."""
    migration = p.migration
    if not migration.waves:
        p.report.add("waves", "skip", "no migration.waves: every command acts on the whole migration")
        return
    topics = p.source.topics()
    try:
        plan = plan_waves(p.source, migration, topics)
    except Exception as exc:  # a topic two waves match: the check names it (preflight reports, it does not stop)
        from ..errors import UsageError

        if not isinstance(exc, UsageError):
            raise
        p.report.add("waves", "fail", str(exc))
        return
    for row in wave_rows(plan, migration, list(topics)):
        if p.wave is None or row[0] == f"wave {p.wave}":
            p.report.add(*row)
