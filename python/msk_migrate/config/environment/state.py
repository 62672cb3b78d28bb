"""Where Terraform keeps state, and the ECR repositories' lifecycle."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..identifiers import KMS_KEY_ARN
from ._fields import field_error

#: The images (and ECR repositories) of a migration, in build order: the three services and the operator
#: image (msk-migrate itself, run as one-off tasks by ``--in-vpc``).
ECR_COMPONENTS: tuple[str, ...] = ("kafka-connect", "prometheus", "grafana", "operator")
#: The components that run as ECS services behind the operator load balancer.
SERVICE_COMPONENTS: tuple[str, ...] = ("kafka-connect", "prometheus", "grafana")


def default_prefix(env_name: str) -> str:
    """Name prefix of an environment's resources when ``prefix`` is not set."""
    return f"msk-migrate-{env_name}"


def ecr_repository_names(prefix: str) -> dict[str, str]:
    """``{component: repository name}``; build_images.py and the stack both use this."""
    return {component: f"{prefix}-{component}" for component in ECR_COMPONENTS}


class BackendConfig(BaseModel):
    """Remote state: S3 with locking. Absent = local state under .local/terraform/."""

    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(description="State bucket (exists already; versioned, encrypted).")
    key: str | None = Field(None, description="State object key. Default: msk-migrate/<env>/terraform.tfstate.")
    target_key: str | None = Field(
        None,
        description="State object key of the target-<env> stack (created clusters only). Default: msk-migrate/<env>/target.tfstate.",
    )
    region: str | None = Field(None, description="Bucket region. Default: the environment's region.")
    dynamodb_table: str | None = Field(None, description="DynamoDB lock table (LockID hash key).")
    use_lockfile: bool = Field(False, description="S3-native locking (Terraform >= 1.10) instead of / besides DynamoDB.")
    kms_key_id: str | None = Field(None, description="KMS key ARN for the state object. Default: SSE-S3/bucket default.")

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str) -> str:
        if not re.match(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", v):
            raise ValueError(f"bucket {v!r} is not an S3 bucket name")
        return v

    @field_validator("kms_key_id")
    @classmethod
    def _kms(cls, v: str | None) -> str | None:
        if v is not None and not KMS_KEY_ARN.match(v):
            raise ValueError(f"kms_key_id {v!r} is not a KMS key ARN")
        return v

    @model_validator(mode="after")
    def _lock(self) -> BackendConfig:
        if not self.dynamodb_table and not self.use_lockfile:
            raise ValueError("shared state needs locking: set dynamodb_table or use_lockfile: true")
        if self.key is not None and self.key == self.target_key:
            raise field_error(
                "BackendConfig", ("target_key",), self.target_key,
                "the target stack's state would overwrite the migration's (same object as key); give target_key its own object",
            )
        return self


class EcrConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keep_images: int = Field(30, ge=1, le=1000, description="Tagged images kept per repository (older expire).")
    untagged_expire_days: int = Field(7, ge=1, le=365, description="Untagged images expire after this many days.")
