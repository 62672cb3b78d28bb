"""Typed configuration, validated once, with one-line errors that name the field and the fix."""

from .auth import MSK_PORTS, AuthConfig, AuthMode
from .loader import load_yaml_model
from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec

__all__ = [
    "MSK_PORTS",
    "AuthConfig",
    "AuthMode",
    "ClusterEndpoint",
    "MigrationSpec",
    "WorkerSpec",
    "load_yaml_model",
]
