"""Where a flow's ledger lives: the same place for every operator of the migration.

======================== ==========================================================================================
flow                     ledger
======================== ==========================================================================================
``--env NAME``           ``s3://<the stack's config bucket>/ledger/<migration name>/`` (the bucket the stack already
                         owns, versioned, beside the connector configs: every operator with the environment's AWS
                         access reads the same ledger)
``--config FILE``        ``<FILE's directory>/<FILE's stem>-ledger/``
``--local``              ``<local environment directory>/ledger/`` (wiped with the environment)
``MSK_MIGRATE_LEDGER``   overrides all of the above: a directory or ``s3://bucket/prefix``
======================== ==========================================================================================

API: :func:`ledger_location` ``(flow) -> str`` and :func:`ledger_for` ``(flow) -> Ledger``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..paths import LOCAL_DIR
from .book import Ledger, open_ledger

#: A directory or s3://bucket/prefix that replaces the flow's own ledger (tests, a shared lab ledger).
LEDGER_ENV = "MSK_MIGRATE_LEDGER"

_ENV_ORIGIN = re.compile(r"^environment (?P<name>\S+) \((?P<path>.+)\)$")
_FILE_ORIGIN = re.compile(r"^flow file (?P<path>.+)$")


def _environment_ledger(flow: Any) -> str:
    from ..config.environment import load_environment
    from ..config.flow import environment_path

    m = _ENV_ORIGIN.match(str(flow.origin))
    path = Path(m.group("path")) if m else environment_path(str(flow.env_name))
    cfg = load_environment(path)
    return f"s3://{cfg.config_bucket_name}/ledger/{flow.migration.name}/"


def ledger_location(flow: Any) -> str:
    """The ledger of ``flow`` (:class:`~msk_migrate.config.flow.Flow`), per the table above."""
    explicit = os.environ.get(LEDGER_ENV) or getattr(flow, "ledger_location", None)
    if explicit:
        return str(explicit)
    if getattr(flow, "env_name", None):
        return _environment_ledger(flow)
    m = _FILE_ORIGIN.match(str(flow.origin))
    if m:
        path = Path(m.group("path")).resolve()  # the same ledger from any working directory
        return str(path.parent / f"{path.stem}-ledger")
    if str(flow.origin).startswith("local"):
        return str(Path(os.environ.get("MSK_MIGRATE_LOCAL_ENV_DIR") or LOCAL_DIR / "env") / "ledger")
    raise UsageError(LEDGER_ENV, f"no ledger location for {flow.origin}", f"export {LEDGER_ENV}=DIRECTORY or s3://bucket/prefix")


def ledger_for(flow: Any) -> Ledger:
    """The ledger of ``flow``'s migration (refuses one that records another migration's name)."""
    return open_ledger(ledger_location(flow), flow.migration.name)
