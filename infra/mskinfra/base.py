"""What every stack of an environment shares: the AWS provider, the state backend, and how one stack
reads another's outputs (``terraform_remote_state``, so the synthesized JSON stays plain Terraform).
"""

from __future__ import annotations

import os
from pathlib import Path

from cdktf import DataTerraformRemoteStateLocal, DataTerraformRemoteStateS3, LocalBackend, S3Backend, TerraformStack
from cdktf_cdktf_provider_aws.provider import AwsProvider, AwsProviderDefaultTags
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

#: Ephemeral resources and write-only arguments (`secret_string_wo`) need Terraform 1.11 (``removed``
#: blocks 1.7, the S3 lock file 1.10).
MIN_TERRAFORM = "1.11.0"


def local_state_path(stack_name: str, outdir: Path, local_state_dir: Path) -> str:
    """The state file of ``stack_name``, relative to its working directory ``<outdir>/stacks/<stack>``.

    Relative, so the state survives ``rm -rf cdktf.out`` and works for the cdktf CLI and plain
    ``terraform -chdir=...`` alike; every stack directory is a sibling, so one stack's path to another's
    state is the same string.
    """
    stack_dir = Path(outdir).resolve() / "stacks" / stack_name
    state = Path(local_state_dir).resolve() / f"{stack_name}.tfstate"
    return os.path.relpath(state, stack_dir)


def configure_stack(stack: TerraformStack, cfg: EnvironmentConfig, outdir: Path, local_state_dir: Path) -> None:
    """Backend, ``required_version`` and the AWS provider (account-locked, default tags)."""
    name = stack.node.id
    b = cfg.backend
    if b is None:
        LocalBackend(stack, path=local_state_path(name, outdir, local_state_dir))
        stack.add_override("terraform.required_version", f">= {MIN_TERRAFORM}")
    else:
        S3Backend(
            stack,
            bucket=b.bucket,
            key=cfg.state_key(name),
            region=b.region or cfg.region,
            encrypt=True,
            dynamodb_table=b.dynamodb_table,
            kms_key_id=b.kms_key_id,
        )
        if b.use_lockfile:
            stack.add_override("terraform.backend.s3.use_lockfile", True)
        stack.add_override("terraform.required_version", f">= {MIN_TERRAFORM}")
    AwsProvider(
        stack,
        "aws",
        region=cfg.region,
        allowed_account_ids=[cfg.account_id],
        default_tags=[AwsProviderDefaultTags(tags=cfg.default_tags())],
    )


def remote_state(scope: Construct, id_: str, cfg: EnvironmentConfig, stack_name: str, outdir: Path, local_state_dir: Path):
    """A ``terraform_remote_state`` data source reading ``stack_name``'s outputs (same backend kind)."""
    b = cfg.backend
    if b is None:
        # The reading stack's directory is a sibling of the written one's: the relative path is the same.
        return DataTerraformRemoteStateLocal(scope, id_, path=local_state_path(stack_name, outdir, local_state_dir))
    return DataTerraformRemoteStateS3(
        scope,
        id_,
        bucket=b.bucket,
        key=cfg.state_key(stack_name),
        region=b.region or cfg.region,
        encrypt=True,
        kms_key_id=b.kms_key_id,
    )
