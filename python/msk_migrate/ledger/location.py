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
from typing import Any

from ..errors import UsageError
from .book import Ledger, open_ledger

#: A directory or s3://bucket/prefix that replaces the flow's own ledger (tests, a shared lab ledger).
LEDGER_ENV = "MSK_MIGRATE_LEDGER"

def ledger_location(flow: Any) -> str:
    """The ledger of ``flow`` (:class:`~msk_migrate.config.flow.Flow`), per the table above: the variable,
    else the location the flow was read with (``read_flow`` and ``local_flow`` set it from the same file or
    directory the flow came from)."""
    explicit = os.environ.get(LEDGER_ENV) or getattr(flow, "ledger_location", None)
    if explicit:
        return str(explicit)
    raise UsageError(LEDGER_ENV, f"no ledger location for {flow.origin}", f"export {LEDGER_ENV}=DIRECTORY or s3://bucket/prefix")


def ledger_for(flow: Any) -> Ledger:
    """The ledger of ``flow``'s migration (refuses one that records another migration's name)."""
    return open_ledger(ledger_location(flow), flow.migration.name)
