"""Where an environment's YAML lives: ``--env NAME`` is ``infra/environments/NAME.yaml``, or a path.

Its own module (standard library only) so that every reader of an environment file finds it without importing
the flow or the environment model: the config floor has no import cycle."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..paths import REPO_ROOT

ENVIRONMENTS_DIR = REPO_ROOT / "infra" / "environments"


def environment_path(env: str) -> Path:
    """The YAML of ``--env``: a path as given (``.yaml``/``.yml`` or with a ``/``), else ``NAME.yaml`` among the
    repository's environments (an unknown name is bad input listing the known ones)."""
    if env.endswith((".yaml", ".yml")) or "/" in env:
        return Path(env)
    path = ENVIRONMENTS_DIR / f"{env}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in ENVIRONMENTS_DIR.glob("*.yaml"))) or "none"
        raise UsageError("--env", f"no environment {env!r} in {ENVIRONMENTS_DIR}", f"use one of: {known}")
    return path
