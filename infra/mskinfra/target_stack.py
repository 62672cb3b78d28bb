"""The stack ``target-<env>``: a created MSK cluster and everything it needs to keep serving.

It exists only when the environment creates its cluster (``target.create``) and outlives the
migration: after cutover, ``migration-<env>`` (Connect, monitoring, ECR, config bucket, its own flows
to the brokers) is destroyed and this stack stays, holding

- the environment's KMS key (the cluster's encryption at rest -- a scheduled deletion would make the
  data unreadable -- and, while the migration runs, its ECR, bucket, secret and logs),
- the brokers' security group and the migrated clients' ingress rules,
- the broker log group, the MSK configuration, the cluster, the SCRAM secret association and the
  storage autoscaling.

``migration-<env>`` reads its outputs (:data:`~mskinfra.msk.TARGET_OUTPUTS`) with
``terraform_remote_state``. The construct ids are those the resources had when they lived in
``migration-<env>``, so their Terraform addresses are unchanged and an older deployment moves over
with ``terraform state mv`` (docs/runbooks/deploy.md).
"""

from __future__ import annotations

from pathlib import Path

from cdktf import TerraformElement, TerraformResource, TerraformStack
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

from .base import configure_stack
from .ecs import skip_short_retention
from .kms import StackKey
from .msk import CreatedMsk
from .network import TargetNetwork


class TargetStack(TerraformStack):
    def __init__(self, scope: Construct, cfg: EnvironmentConfig, *, outdir: Path, local_state_dir: Path) -> None:
        if not cfg.target.create:
            raise ValueError(f"{cfg.stack_name} uses an existing cluster: there is no target stack")
        super().__init__(scope, cfg.target_stack_name)
        configure_stack(self, cfg, outdir, local_state_dir)
        key = StackKey(self, "kms", cfg, prevent_destroy=True)
        network = TargetNetwork(self, "network", cfg)
        msk = CreatedMsk(
            self,
            "msk",
            cfg,
            kms_key_arn=key.key.arn,
            security_group_id=network.msk.id,
            log_kms_key_arn=key.key.arn if cfg.log_kms else None,
        )
        skip_short_retention(msk.log_group, cfg)  # the broker log group lives here since the split
        msk.add_outputs(self, security_group_id=network.msk.id, kms_key_arn=key.key.arn)

    def resource_addresses(self) -> list[str]:
        """``type.logical_id`` of every resource of this stack (also their addresses in older
        ``migration-<env>`` states)."""
        out = []
        for child in self.node.find_all():
            if isinstance(child, TerraformResource):
                element: TerraformElement = child
                out.append(f"{child.terraform_resource_type}.{self.get_logical_id(element)}")
        return sorted(out)
