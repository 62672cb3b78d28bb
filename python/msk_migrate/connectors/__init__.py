"""MirrorMaker 2 connector and worker rendering: the single source of every connector setting.

The CDKTF stacks upload exactly what :func:`render_connectors` returns; the local rehearsal and the
tests apply the same output to local clusters.
"""

from .client_props import client_properties
from .render import POLICY_CLASS, render_connectors
from .secrets import SecretRef, secret_refs
from .worker_env import worker_environment, worker_secret_env

__all__ = [
    "POLICY_CLASS",
    "SecretRef",
    "client_properties",
    "render_connectors",
    "secret_refs",
    "worker_environment",
    "worker_secret_env",
]
