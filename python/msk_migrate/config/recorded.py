"""What an environment was first applied to: its target's cluster id, the source's, the bootstrap
servers and the Connect URL, recorded by the first ``connectors apply`` with ``--env`` and checked by
every later operator command of that environment (docs/design.md, "Which cluster an environment is").

The record is a small JSON file per environment, ``infra/environments/recorded/<env>.json`` by default:
beside the environment YAML the stack renders from, so it is committed, reviewed, and read by every
operator's checkout (``MSK_MIGRATE_RECORD_DIR`` points elsewhere, e.g. for tests). It holds no secret.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..paths import REPO_ROOT
from .identifiers import ENV_NAME

RECORD_DIR_ENV = "MSK_MIGRATE_RECORD_DIR"
DEFAULT_RECORD_DIR = REPO_ROOT / "infra" / "environments" / "recorded"


def record_dir() -> Path:
    return Path(os.environ.get(RECORD_DIR_ENV) or DEFAULT_RECORD_DIR)


def record_path(env: str, field: str = "environment") -> Path:
    """``<record dir>/<env>.json``, the one place a record's path is built: ``env`` must be an environment name
    (the rule of ``infra/environments/<env>.yaml``'s ``name``), so no name (``../x``, ``/abs``, ``a/b``) reaches
    outside the record directory. A bad name is a :class:`UsageError` naming ``field``."""
    # The environment model's rule (identifiers.ENV_NAME, as check_env_name applies it), matched in full: its
    # ``$`` alone would let a trailing newline through.
    if not isinstance(env, str) or not ENV_NAME.fullmatch(env):
        shown = repr(env[:40] + "..." if isinstance(env, str) and len(env) > 40 else env)  # one short line
        raise UsageError(field, f"{shown} is not an environment name",
                         "lowercase letters, digits and single '-', starting with a letter, at most 20 characters "
                         "(e.g. dev, prod-eu)")
    return record_dir() / f"{env}.json"


def load_record(env: str) -> dict[str, Any] | None:
    path = record_path(env)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        raise UsageError(str(path), "is not JSON", "restore it from git (it records the environment's clusters)") from None
    return data if isinstance(data, dict) else None


def all_records() -> dict[str, dict[str, Any]]:
    out = {}
    base = record_dir()
    if base.is_dir():
        for p in sorted(base.glob("*.json")):
            if not ENV_NAME.fullmatch(p.stem):
                continue  # not a record this module writes (every record is <environment name>.json)
            rec = load_record(p.stem)
            if rec:
                out[p.stem] = rec
    return out


def save_record(env: str, **fields: Any) -> Path:
    """Write the record once (first apply); later applies keep it (a different target is refused before)."""
    path = record_path(env)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"environment": env, "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **fields}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def adopt_record(env: str, data: dict[str, Any]) -> Path | None:
    """Keep a record written elsewhere (a first apply in an ``--in-vpc`` task) when this checkout has none
    for ``env``; the path written, or None when one exists (the existing record wins). ``env`` comes from what
    the task printed: a name that is not an environment name is refused (UsageError) before any path is built."""
    path = record_path(env, "environment (the record the operator task printed)")
    if path.is_file() or not data.get("target_cluster_id"):
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**data, "environment": env}, indent=2, sort_keys=True) + "\n")
    return path


def owner_of(key: str, value: str, but: str) -> str | None:
    """The environment (other than ``but``) whose record holds ``value`` under ``key``."""
    for env, rec in all_records().items():
        if env != but and rec.get(key) and str(rec[key]).rstrip("/") == value.rstrip("/"):
            return env
    return None
