"""Request and CLI-argument builders shared by the validation tests (a module of its own: test
modules must not import from conftest, whose name other suites share)."""

from __future__ import annotations

from typing import Any

from msk_migrate.config import ClusterEndpoint


def endpoints(clusters: dict[str, str]) -> tuple[ClusterEndpoint, ClusterEndpoint]:
    return (
        ClusterEndpoint(alias="source", bootstrap_servers=clusters["source"]),
        ClusterEndpoint(alias="target", bootstrap_servers=clusters["target"]),
    )


def make_request(clusters: dict[str, str], **kw: Any):
    from msk_migrate.validation import ValidationRequest

    source, target = endpoints(clusters)
    # The difference tests read the samples' keys: shown here (the product's default names them by sha256,
    # tests/unit/test_validation_key_digest.py).
    kw.setdefault("show_keys", True)
    return ValidationRequest(source=source, target=target, **kw)


def cli_args(clusters: dict[str, str], *extra: str) -> list[str]:
    return ["--source-bootstrap", clusters["source"], "--target-bootstrap", clusters["target"], *extra]
