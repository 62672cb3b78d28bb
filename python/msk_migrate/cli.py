"""Transitional: the ``msk-migrate`` script of an environment installed before the commands moved to
:mod:`msk_migrate.commands` imports ``msk_migrate.cli:main``. ``[project.scripts]`` names
``msk_migrate.commands.root:main``; delete this file once every venv is reinstalled (``make setup``)."""

from .commands.root import main

__all__ = ["main"]
