"""The operator image's program (its ENTRYPOINT: ``python -I -m msk_migrate.commands.in_task``).

The entrypoint's mechanics live in :mod:`msk_migrate.aws.operator_entry`; the grammar that decides which of a
caller's options it takes needs the command line itself (:mod:`.operator_grammar`), so the two meet here, at the
top of the package's layers.
"""

from __future__ import annotations

import sys

from ..aws.operator_entry import main as entry_main
from .root import grammar


def main() -> int:
    return entry_main(check=grammar)


if __name__ == "__main__":
    sys.exit(main())
