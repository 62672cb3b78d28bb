"""ECR repositories kafka-connect, prometheus, grafana: immutable tags, scan on push, KMS, lifecycle."""

from __future__ import annotations

import json

from cdktf_cdktf_provider_aws.ecr_lifecycle_policy import EcrLifecyclePolicy
from cdktf_cdktf_provider_aws.ecr_repository import EcrRepository, EcrRepositoryEncryptionConfiguration
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig


def lifecycle_policy(cfg: EnvironmentConfig) -> str:
    return json.dumps(
        {
            "rules": [
                {
                    "rulePriority": 1,
                    "description": f"expire untagged images after {cfg.ecr.untagged_expire_days} days",
                    "selection": {
                        "tagStatus": "untagged",
                        "countType": "sinceImagePushed",
                        "countUnit": "days",
                        "countNumber": cfg.ecr.untagged_expire_days,
                    },
                    "action": {"type": "expire"},
                },
                {
                    "rulePriority": 2,
                    "description": f"keep the newest {cfg.ecr.keep_images} images",
                    "selection": {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": cfg.ecr.keep_images},
                    "action": {"type": "expire"},
                },
            ]
        },
        sort_keys=True,
    )


class Repositories(Construct):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, kms_key_arn: str) -> None:
        super().__init__(scope, id_)
        self.repos: dict[str, EcrRepository] = {}
        for component, name in cfg.ecr_repository_names().items():
            cid = component.replace("-", "_")
            repo = EcrRepository(
                self,
                cid,
                name=name,
                image_tag_mutability="IMMUTABLE",
                image_scanning_configuration={"scan_on_push": True},
                encryption_configuration=[EcrRepositoryEncryptionConfiguration(encryption_type="KMS", kms_key=kms_key_arn)],
                force_delete=False,
            )
            EcrLifecyclePolicy(self, f"{cid}_lifecycle", repository=repo.name, policy=lifecycle_policy(cfg))
            self.repos[component] = repo
