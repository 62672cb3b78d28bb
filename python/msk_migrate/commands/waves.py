"""``--wave NAME`` for every runbook command: one option, one check.

API: ``@wave_option`` adds ``--wave`` (value ``wave``: ``None`` = the whole migration); :func:`check_wave`
``(flow, wave)`` refuses an unknown wave (one line listing the known ones, exit 2) before any network call;
:func:`msk_migrate.config.waves.wave_topics` and :func:`msk_migrate.runbook.waves.plan_waves` then say which
topics and groups the wave holds on the source.
"""

from __future__ import annotations

import click

from ..config.flow import Flow
from ..config.waves import WAVE_NAME, check_wave_name
from ..errors import UsageError


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
