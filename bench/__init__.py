"""The benchmarks (docs/PERFORMANCE.md). A package only so that import-linter can check what they import
from ``msk_migrate`` (pyproject.toml, ``[tool.importlinter]``); each bench runs as a script."""
