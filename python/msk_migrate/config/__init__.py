"""Typed configuration, validated once, with one-line errors that name the field and the fix.

The models are imported on first use: the Spark job imports :mod:`.identifiers` (standard library only)
on a release's Python that has no pydantic or PyYAML, so importing the package must not load them.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MSK_PORTS",
    "AuthConfig",
    "AuthMode",
    "ClusterEndpoint",
    "MigrationSpec",
    "WorkerSpec",
    "load_yaml_model",
]

_HOME = {"MSK_PORTS": "auth", "AuthConfig": "auth", "AuthMode": "auth", "load_yaml_model": "loader",
         "ClusterEndpoint": "migration", "MigrationSpec": "migration", "WorkerSpec": "migration"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(name)
