"""The local clusters as MirrorMaker 2 and the operator tools see them, derived from the recorded state.

A secured source (SCRAM over TLS) is reached as MM2's user. Its endpoint says where that user's secrets
are: ``auth.secrets_from = "file"`` with the environment's 0600 secrets file (JSON by purpose: username,
password, ca), so every reader -- preflight, lag, validation, a ``--local`` command in another process --
resolves them from the endpoint itself, under whichever role it plays (the reverse flow reads the source
as its target). Nothing is put in a process's environment; the Connect worker alone gets the
``MM2_SOURCE_*`` variables, as on ECS (:func:`worker_secret_env`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..access.secrets import secret_env_name
from ..config.auth import AuthConfig
from ..config.migration import ClusterEndpoint
from .layout import bootstrap
from .state import LocalState

#: Stands where a Secrets Manager ARN of the source's private CA would be: the rendered connector configs then
#: trust ``${env:MM2_SOURCE_TLS_CA}``, which the harness sets on the worker (never read from AWS).
LOCAL_CA_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:msk-migrate-local-ca"


def cluster_endpoint(state: LocalState, role: str) -> ClusterEndpoint:
    """``role``'s endpoint: every broker's client listener, and the MM2 user's auth on a secured side."""
    side = state.side(role)
    layout = state.clusters.get(role)  # type: ignore[call-overload]
    if layout is None:
        raise RuntimeError(f"the {role} cluster was never started")
    auth = AuthConfig()
    if side.security == "scram-tls":
        if not state.secrets_file:
            raise RuntimeError(f"the {role} cluster is secured but its MM2 secrets file is not recorded yet")
        auth = AuthConfig(mode="scram", secrets_from="file", secrets_file=state.secrets_file, ca_secret_arn=LOCAL_CA_ARN)
    return ClusterEndpoint(alias=role, bootstrap_servers=bootstrap(side, layout), auth=auth)


def read_secrets(path: str | Path) -> dict[str, str]:
    """purpose -> value of a secrets file written by :func:`write_secrets`."""
    return dict(json.loads(Path(path).read_text()))


def write_secrets(path: Path, secrets: dict[str, str]) -> None:
    """``secrets`` (purpose -> value) into ``path``, created 0600 (replaced when its content changed)."""
    if path.exists() and read_secrets(path) == secrets:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(secrets, fh)


def worker_secret_env(role: str, secrets: dict[str, str]) -> dict[str, str]:
    """The Connect worker's ``MM2_<ROLE>_*`` variables for ``secrets`` (purpose -> value)."""
    return {secret_env_name(role, purpose): value for purpose, value in secrets.items()}
