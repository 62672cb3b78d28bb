"""What the stack keeps where in its config bucket, and the one rule for a migration's name and an MM2 alias.

Stdlib only: the validation job reads this to check a document before it reads or writes anything, and the
stack, the CLI and the IAM policies use the same prefixes (the job's execution role is granted exactly these).

Invariants: every prefix ends with ``/``; a migration's prefixes hold its name as one path segment, which
:data:`ALIAS` allows only of letters, digits, ``_`` and ``-`` (so never ``/`` or ``..``).
"""

from __future__ import annotations

import re

#: A migration's name, and an MM2 cluster alias (MM2 puts aliases in topic names: the same charset).
ALIAS = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: The validation job's package, the runs' reports and their driver logs.
JOB_PREFIX = "validation/job/"
REPORTS_PREFIX = "validation/reports/"
LOGS_PREFIX = "validation/logs/"


def proof_prefix(migration_name: str) -> str:
    """The prefix of a migration's proof mark: the follower writes its mark there, the gates read it, and the
    stack grants exactly this prefix (infra/mskinfra/proof_policy.py)."""
    return f"proof/{migration_name}/"


def within(key: str, prefix: str) -> bool:
    """True when ``key`` lies under ``prefix`` with no empty, ``.`` or ``..`` segment after it (a key S3 would
    store elsewhere than it reads, or a traversal a later join could follow)."""
    if not key.startswith(prefix):
        return False
    rest = key[len(prefix):].split("/")
    return all(seg not in (".", "..") for seg in rest) and all(rest[:-1])
