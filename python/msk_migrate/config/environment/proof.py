"""The proof follower as a service of the stack (``proof``): ``msk-migrate validate --follow`` on Fargate.

Off by default. On, the stack runs one task of the operator image that follows replication, keeps its
verified-up-to mark in the config bucket under :func:`proof_key_prefix` and serves its proof-lag metrics on
:data:`PROOF_METRICS_PORT` to the stack's Prometheus only (docs/follow.md, "As a service of the stack").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...bucket_layout import proof_prefix
from .services import check_fargate

#: The follower's metrics port: prometheus/prometheus.yml's ``msk-migrate-proof`` job scrapes it.
PROOF_METRICS_PORT = 9405
#: Cloud Map label of the follower's task (``proof.<namespace>``, the scrape job's DNS name).
PROOF_DNS_LABEL = "proof"


def proof_key_prefix(migration_name: str) -> str:
    """The config bucket's key prefix of a migration's proof mark (:func:`msk_migrate.bucket_layout.proof_prefix`)."""
    return proof_prefix(migration_name)


class ProofService(BaseModel):
    """The follower service (``validate --follow``): one task, never two (both would write one mark)."""

    model_config = ConfigDict(extra="forbid")

    follower: bool = Field(False, description="Run `msk-migrate validate --follow` as a Fargate service of the stack (one "
                           "task): proof lag on Prometheus/Grafana, its mark in the config bucket under "
                           "proof/<migration.name>/ for `cutover check --validation-report`.")
    cpu: int = Field(1024, description="Fargate CPU units of the follower's task.")
    memory: int = Field(2048, description="Fargate memory of the follower's task (MiB).")
    interval_seconds: float = Field(10.0, ge=1, le=300, description="Seconds between passes once caught up (`--interval`).")

    @model_validator(mode="after")
    def _check(self) -> ProofService:
        check_fargate(self.cpu, self.memory)
        return self
