"""One customer-managed KMS key per environment: MSK at rest, ECR, the config bucket, the Grafana
secret and (``log_kms``) the log groups. It lives in ``target-<env>`` when the environment creates its
cluster (the kept cluster needs it), else in ``migration-<env>``.

The key policy is a resource policy: its ``"Resource": "*"`` means *this key*. It delegates to IAM in
the account (the AWS default) and, for log encryption, lets CloudWatch Logs use the key only for this
environment's log groups (``/<prefix>/...``).
"""

from __future__ import annotations

from cdktf import TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.kms_alias import KmsAlias
from cdktf_cdktf_provider_aws.kms_key import KmsKey
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

from .util import arn, dns_suffix, policy_json


def log_group_name(cfg: EnvironmentConfig, component: str) -> str:
    return f"/{cfg.resource_prefix}/{component}"


class StackKey(Construct):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, prevent_destroy: bool = False) -> None:
        super().__init__(scope, id_)
        statements = [
            {
                "Sid": "AccountIamDelegation",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{cfg.partition}:iam::{cfg.account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            }
        ]
        if cfg.log_kms:
            statements.append(
                {
                    "Sid": "CloudWatchLogsOfThisEnvironment",
                    "Effect": "Allow",
                    "Principal": {"Service": f"logs.{cfg.region}.{dns_suffix(cfg)}"},
                    "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                    "Resource": "*",
                    "Condition": {
                        "ArnLike": {
                            "kms:EncryptionContext:aws:logs:arn": arn(cfg, "logs", f"log-group:/{cfg.resource_prefix}/*")
                        }
                    },
                }
            )
        self.key = KmsKey(
            self,
            "key",
            description=f"{cfg.resource_prefix}: MSK, ECR, connector configs, secrets, logs",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=policy_json(statements),
            # In target-<env> the key encrypts the kept cluster at rest: never schedule it for deletion by accident.
            lifecycle=TerraformResourceLifecycle(prevent_destroy=True) if prevent_destroy else None,
        )
        KmsAlias(self, "alias", name=f"alias/{cfg.resource_prefix}", target_key_id=self.key.key_id)
