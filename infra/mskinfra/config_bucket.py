"""The connector-config bucket and its objects.

Objects (no secret values anywhere: secrets are ``${env:MM2_...}`` references resolved in the worker):

- ``connectors/<connector>.json``: the body of ``PUT /connectors/<connector>/config``, exactly what
  :func:`msk_migrate.connectors.render_connectors` returns for this environment (sorted keys, 2-space
  indent), with the target's real bootstrap string.
- ``worker/connect-worker.env``: the Connect workers' plain environment
  (:func:`msk_migrate.connectors.worker_environment`) as ``KEY=value`` lines, for reference; the names
  of the variables ECS injects from Secrets Manager are listed as comments.

The target bootstrap string is only known at apply time. The renderer validates ``host:port`` lists,
so it renders with :data:`BOOTSTRAP_PLACEHOLDER`; the placeholder is then replaced by the Terraform
reference in the object content (see :mod:`.tfjson`).
"""

from __future__ import annotations

from constructs import Construct
from cdktf_cdktf_provider_aws.s3_bucket import S3Bucket
from cdktf_cdktf_provider_aws.s3_bucket_lifecycle_configuration import (
    S3BucketLifecycleConfiguration,
    S3BucketLifecycleConfigurationRule,
    S3BucketLifecycleConfigurationRuleFilter,
    S3BucketLifecycleConfigurationRuleNoncurrentVersionExpiration,
)
from cdktf_cdktf_provider_aws.s3_bucket_ownership_controls import S3BucketOwnershipControls
from cdktf_cdktf_provider_aws.s3_bucket_policy import S3BucketPolicy
from cdktf_cdktf_provider_aws.s3_bucket_public_access_block import S3BucketPublicAccessBlock
from cdktf_cdktf_provider_aws.s3_bucket_server_side_encryption_configuration import (
    S3BucketServerSideEncryptionConfigurationA,
    S3BucketServerSideEncryptionConfigurationRuleA,
)
from cdktf_cdktf_provider_aws.s3_bucket_versioning import S3BucketVersioningA
from cdktf_cdktf_provider_aws.s3_object import S3Object

from msk_migrate.config.environment import EnvironmentConfig

from .tfjson import tf_json, tf_text
from .util import policy_json

CONNECTORS_PREFIX = "connectors/"
WORKER_ENV_KEY = "worker/connect-worker.env"


def worker_env_text(env: dict[str, str], secret_env: dict[str, str]) -> str:
    lines = [
        "# Kafka Connect worker environment (plain part), as set on the ECS task. Reference only:",
        "# images/kafka-connect/entrypoint.sh renders worker.properties from these variables.",
    ]
    lines += [f"{k}={v}" for k, v in sorted(env.items())]
    if secret_env:
        lines.append("# Injected by ECS from Secrets Manager (names only):")
        lines += [f"# {k}" for k in sorted(secret_env)]
    return "\n".join(lines) + "\n"


class ConfigBucket(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        kms_key_arn: str,
        connectors: dict[str, dict[str, str]],
        worker_env: dict[str, str],
        worker_secret_env: dict[str, str],
        substitutions: dict[str, str],
    ) -> None:
        super().__init__(scope, id_)
        self.bucket = S3Bucket(self, "bucket", bucket=cfg.config_bucket_name, force_destroy=False)
        b = self.bucket.id
        S3BucketVersioningA(self, "versioning", bucket=b, versioning_configuration={"status": "Enabled"})
        S3BucketServerSideEncryptionConfigurationA(
            self,
            "encryption",
            bucket=b,
            rule=[
                S3BucketServerSideEncryptionConfigurationRuleA(
                    apply_server_side_encryption_by_default={"sse_algorithm": "aws:kms", "kms_master_key_id": kms_key_arn},
                    bucket_key_enabled=True,
                )
            ],
        )
        access = S3BucketPublicAccessBlock(
            self,
            "public_access",
            bucket=b,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
        )
        S3BucketOwnershipControls(self, "ownership", bucket=b, rule={"object_ownership": "BucketOwnerEnforced"})
        S3BucketLifecycleConfiguration(
            self,
            "lifecycle",
            bucket=b,
            rule=[
                S3BucketLifecycleConfigurationRule(
                    id="expire-noncurrent-versions",
                    status="Enabled",
                    filter=[S3BucketLifecycleConfigurationRuleFilter(prefix="")],
                    noncurrent_version_expiration=[
                        S3BucketLifecycleConfigurationRuleNoncurrentVersionExpiration(noncurrent_days=90)
                    ],
                )
            ],
        )
        bucket_arn = self.bucket.arn
        S3BucketPolicy(
            self,
            "policy",
            bucket=b,
            policy=policy_json(
                [
                    {
                        "Sid": "DenyInsecureTransport",
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "s3:*",
                        "Resource": [bucket_arn, f"{bucket_arn}/*"],
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                    }
                ]
            ),
            depends_on=[access],
        )

        self.connector_keys: dict[str, str] = {}
        for name, config in sorted(connectors.items()):
            key = f"{CONNECTORS_PREFIX}{name}.json"
            S3Object(
                self,
                f"connector_{name}",
                bucket=b,
                key=key,
                content=tf_json(config, substitutions),
                content_type="application/json",
                server_side_encryption="aws:kms",
                kms_key_id=kms_key_arn,
                bucket_key_enabled=True,
            )
            self.connector_keys[name] = key
        S3Object(
            self,
            "worker_env",
            bucket=b,
            key=WORKER_ENV_KEY,
            content=tf_text(worker_env_text(worker_env, worker_secret_env), substitutions),
            content_type="text/plain",
            server_side_encryption="aws:kms",
            kms_key_id=kms_key_arn,
            bucket_key_enabled=True,
        )
