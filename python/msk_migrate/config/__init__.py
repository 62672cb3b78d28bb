"""Typed configuration, validated once, with one-line errors that name the field and the fix."""

from .auth import AuthConfig, AuthMode, MSK_PORTS
from .loader import load_yaml_model
from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec

__all__ = [
    "AuthConfig",
    "AuthMode",
    "MSK_PORTS",
    "ClusterEndpoint",
    "MigrationSpec",
    "WorkerSpec",
    "load_yaml_model",
]
