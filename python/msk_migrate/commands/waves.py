"""``--wave NAME`` for every runbook command: one option, one check.

API: ``@wave_option`` adds ``--wave`` (value ``wave``: ``None`` = the whole migration); :func:`check_wave`
``(flow, wave)`` refuses an unknown wave (one line listing the known ones, exit 2) before any network call;
:func:`msk_migrate.config.waves.wave_topics` and :func:`msk_migrate.runbook.waves.plan_waves` then say which
topics and groups the wave holds on the source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..config.flow import Flow
from ..config.waves import WAVE_NAME, check_wave_name
from ..errors import UsageError
from ..outcome import Outcome

if TYPE_CHECKING:
    from ..runbook.session import MigrationSession


def _wave_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A malformed wave name is refused where it is parsed; whether the migration defines it, once the flow is read."""
    if value is not None and not WAVE_NAME.match(value):
        raise UsageError("--wave", f"{value!r} is not a wave name ([A-Za-z0-9_-]{{1,64}})", "pass a wave of migration.waves")
    return value


wave_option = click.option(
    "--wave", "wave", default=None, metavar="NAME", callback=_wave_name,
    help="Only this wave's topics and groups (migration.waves in the environment YAML; default: the whole migration).",
)


def check_wave(flow: Flow, wave: str | None) -> str | None:
    """``wave`` when the flow's migration defines it (or None); otherwise UsageError naming --wave and the known waves."""
    check_wave_name(flow.migration, wave)
    return wave


def open_in_wave(kw: dict, output: str, wave: str | None, flow: Flow | None = None, **needs: Any) -> MigrationSession:
    """The command's one session: its flow (``flow`` when the command resolved it first, to read its registries
    before any connection; else from the options), ``--wave`` checked against it (an unknown wave is one line,
    exit 2, before any cluster is asked), stated on the console, then opened
    (:func:`msk_migrate.runbook.session.open_session` with ``needs``)."""
    from ..runbook.session import open_session
    from .flow import announce, flow_from_kwargs

    flow = flow if flow is not None else flow_from_kwargs(kw)
    check_wave(flow, wave)
    announce(flow, output)
    return open_session(flow, **needs)


def session_in_wave(kw: dict, output: str, wave: str | None, flow: Flow | None = None,
                    **needs: Any) -> tuple[MigrationSession, WaveScope | None]:
    """:func:`open_in_wave` and the wave's scope on the source (None without ``--wave``)."""
    s = open_in_wave(kw, output, wave, flow, **needs)
    return s, wave_scope(s, wave)


class WaveScope:
    """The topics and groups one wave holds on the source now (runbook.waves.plan_waves): what ``--wave`` limits a
    command to. A group moves with the latest wave it reads (docs/runbooks/migration.md, waves)."""

    def __init__(self, wave: str, topics: list[str], groups: list[str]):
        self.wave, self.topics, self.groups = wave, topics, groups

    def narrow(self, given: tuple[str, ...] | list[str], option: str, kind: str) -> list[str]:
        """``given`` (the command's --topic/--group values) when each is in the wave, else the wave's own; a value
        outside the wave is bad input naming ``option`` (exit 2)."""
        mine = self.topics if kind == "topic" else self.groups
        outside = [g for g in given if g not in mine]
        if outside:
            moves = "is not a topic of" if kind == "topic" else "does not move with"
            raise UsageError(option, f"{outside[0]} {moves} wave {self.wave} (its {kind}s: {', '.join(mine[:10]) or 'none'})",
                             f"drop {option} {outside[0]}, or name its wave")
        return list(given) or list(mine)


def wave_scope(s: MigrationSession, wave: str | None) -> WaveScope | None:
    """The scope of ``wave`` on ``s``'s source (None: the whole migration)."""
    if wave is None:
        return None
    from ..runbook.waves import plan_waves

    plan = plan_waves(s.source, s.migration)
    return WaveScope(wave, plan.topics_of(wave), plan.groups_of(wave))


def nothing_in_wave(command: str, s: MigrationSession, scope: WaveScope, kind: str) -> Outcome:
    """The outcome of a command whose wave holds no ``kind`` on the source: nothing compared is never a pass."""
    return Outcome(command, "nothing-in-wave", 1, talked_to=s.talked_to(), extra={"wave": scope.wave},
                   notes=[f"wave {scope.wave}: no {kind} of the migration moves with it on the source; nothing compared"])
