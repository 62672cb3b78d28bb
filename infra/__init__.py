"""The CDKTF app (``main.py``), the hand-over and scan scripts, and the stacks' constructs (``mskinfra``).

A package only so that import-linter can check what infra imports from ``msk_migrate`` (pyproject.toml,
``[tool.importlinter]``); the scripts run as scripts and import ``mskinfra`` from this directory."""
