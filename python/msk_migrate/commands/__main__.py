"""``python -m msk_migrate.commands``: the ``msk-migrate`` command line."""

from .root import main

main()
