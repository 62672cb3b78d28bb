"""MirrorMaker 2 connector and worker rendering: the single source of every connector setting.

The CDKTF stacks upload exactly what :func:`render_connectors` returns; the local rehearsal and the
tests apply the same output to local clusters. Client security properties and secret references come
from :mod:`msk_migrate.access` (the same vocabulary the operator tools use).
"""

from .render import POLICY_CLASS, render_connectors
from .worker_env import worker_environment, worker_secret_env

__all__ = [
    "POLICY_CLASS",
    "render_connectors",
    "worker_environment",
    "worker_secret_env",
]
