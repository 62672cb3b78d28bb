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

The migration's ledger lives here too (``ledger/<migration>/``, msk_migrate.ledger), and two invariants
hold for it whatever client writes (docs/infra.md, "The ledger's bucket"):

- **append-only events**: the bucket policy denies ``s3:PutObject`` under ``ledger/<migration>/events/``
  without ``If-None-Match`` (condition key ``s3:if-none-match`` null; this also refuses CopyObject and
  multipart uploads there), and ``s3:DeleteObject`` there (a delete marker would hide an event). The other
  prefixes are replaced on purpose: ``current.json`` (a cache rebuilt from the events), the evidence under
  ``ledger/<migration>/evidence/`` (rewritten under the same name when a step is re-run), the follower's
  mark under ``proof/<migration>/``, connector configs, validation reports;
- **every version kept**: S3 Object Lock, default retention GOVERNANCE for ``ledger_retention_days`` on
  every new object version, so a replaced evidence document, mark or view keeps its earlier versions.
  GOVERNANCE, not COMPLIANCE: the hand-over deletes the bucket after copying the ledger out, with
  ``s3:BypassGovernanceRetention`` that only the deployer holds; COMPLIANCE would keep the bucket, and the
  stack that owns it, until the last version's retention ends.

Object Lock is enabled by the lock configuration resource, not by the bucket's ``object_lock_enabled``
(which forces a new bucket: an existing environment's bucket, holding its ledger, would be replaced); S3
enables Object Lock on an existing versioned bucket through PutObjectLockConfiguration.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdktf import TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.data_aws_elb_service_account import DataAwsElbServiceAccount
from cdktf_cdktf_provider_aws.s3_bucket import S3Bucket
from cdktf_cdktf_provider_aws.s3_bucket_lifecycle_configuration import (
    S3BucketLifecycleConfiguration,
    S3BucketLifecycleConfigurationRule,
    S3BucketLifecycleConfigurationRuleAbortIncompleteMultipartUpload,
    S3BucketLifecycleConfigurationRuleExpiration,
    S3BucketLifecycleConfigurationRuleFilter,
    S3BucketLifecycleConfigurationRuleNoncurrentVersionExpiration,
)
from cdktf_cdktf_provider_aws.s3_bucket_logging import S3BucketLoggingA
from cdktf_cdktf_provider_aws.s3_bucket_notification import S3BucketNotification
from cdktf_cdktf_provider_aws.s3_bucket_object_lock_configuration import (
    S3BucketObjectLockConfigurationA,
    S3BucketObjectLockConfigurationRuleA,
    S3BucketObjectLockConfigurationRuleDefaultRetentionA,
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
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.config.flow import ledger_key_prefix

from .checkov import skip
from .tfjson import tf_json, tf_text
from .util import policy_json

#: Days the S3 server access logs of the config bucket are kept.
ACCESS_LOG_DAYS = 365
#: Incomplete multipart uploads are aborted after this many days (both buckets).
ABORT_MULTIPART_DAYS = 7

CONNECTORS_PREFIX = "connectors/"
WORKER_ENV_KEY = "worker/connect-worker.env"
#: The ledger's append-only part, under its prefix (msk_migrate.ledger.book.EVENTS).
LEDGER_EVENTS = "events/"
#: Object Lock mode of the default retention (see the module docstring for why not COMPLIANCE).
LOCK_MODE = "GOVERNANCE"


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


def deny_insecure_transport(bucket_arn: str) -> dict:
    """Bucket-policy statement: every request without TLS is denied."""
    return {
        "Sid": "DenyInsecureTransport",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [bucket_arn, f"{bucket_arn}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }


def ledger_append_only(bucket_arn: str, migration: str) -> list[dict]:
    """Bucket-policy statements: an event of the ledger is created only if absent, and never hidden.

    Deny (to every principal, the bucket owner's roles included) ``s3:PutObject`` under
    ``ledger/<migration>/events/`` when the request carries no ``If-None-Match`` (S3 accepts only ``*`` there,
    so a present header means create-if-absent), and ``s3:DeleteObject`` there. Deleting a *version*
    (``s3:DeleteObjectVersion``) is left to Object Lock, which refuses it during the retention."""
    events = f"{bucket_arn}/{ledger_key_prefix(migration)}{LEDGER_EVENTS}*"
    return [
        {"Sid": "LedgerEventsOnlyIfAbsent", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
         "Resource": [events], "Condition": {"Null": {"s3:if-none-match": "true"}}},
        {"Sid": "LedgerEventsNeverDeleted", "Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject",
         "Resource": [events]},
    ]


@dataclass(frozen=True)
class BucketSettings:
    """The bucket-level resources of :func:`private_versioned`: what a bucket policy and the first object
    written must wait for (a first apply creates them in parallel otherwise)."""

    versioning: S3BucketVersioningA
    encryption: S3BucketServerSideEncryptionConfigurationA
    public_access: S3BucketPublicAccessBlock
    ownership: S3BucketOwnershipControls


def private_versioned(scope: Construct, bucket: str, encryption_rule: dict) -> BucketSettings:
    """Versioning, default encryption, every public access blocked, ACLs disabled (every bucket)."""
    versioning = S3BucketVersioningA(scope, "versioning", bucket=bucket, versioning_configuration={"status": "Enabled"})
    encryption = S3BucketServerSideEncryptionConfigurationA(
        scope, "encryption", bucket=bucket, rule=[S3BucketServerSideEncryptionConfigurationRuleA(**encryption_rule)]
    )
    access = S3BucketPublicAccessBlock(
        scope, "public_access", bucket=bucket, block_public_acls=True, block_public_policy=True,
        ignore_public_acls=True, restrict_public_buckets=True,
    )
    ownership = S3BucketOwnershipControls(scope, "ownership", bucket=bucket, rule={"object_ownership": "BucketOwnerEnforced"})
    return BucketSettings(versioning, encryption, access, ownership)


def expiring(scope: Construct, bucket: str, rule_id: str, *, noncurrent_days: int, expiration_days: int | None = None) -> None:
    """One lifecycle rule: old versions (and, with ``expiration_days``, current objects) expire;
    incomplete multipart uploads are aborted."""
    S3BucketLifecycleConfiguration(
        scope, "lifecycle", bucket=bucket,
        rule=[
            S3BucketLifecycleConfigurationRule(
                id=rule_id,
                status="Enabled",
                filter=[S3BucketLifecycleConfigurationRuleFilter(prefix="")],
                **({"expiration": [S3BucketLifecycleConfigurationRuleExpiration(days=expiration_days)]} if expiration_days else {}),
                noncurrent_version_expiration=[S3BucketLifecycleConfigurationRuleNoncurrentVersionExpiration(noncurrent_days=noncurrent_days)],
                abort_incomplete_multipart_upload=[
                    S3BucketLifecycleConfigurationRuleAbortIncompleteMultipartUpload(days_after_initiation=ABORT_MULTIPART_DAYS)
                ],
            )
        ],
    )


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
        skip(self.bucket, "CKV_AWS_144", "no cross-region replica: every object is rendered from the environment "
             "file and rewritten by the next apply; the environment files in git are the copy")
        b = self.bucket.id
        self.access_logs = AccessLogBucket(self, "access_logs", cfg, source_bucket_arn=self.bucket.arn)
        # Only after the log bucket admits the logging service: S3 checks the target when logging is
        # enabled, and a first apply would otherwise race it (InvalidTargetBucketForLogging).
        S3BucketLoggingA(self, "logging", bucket=b, target_bucket=self.access_logs.bucket.id, target_prefix="configs/",
                         depends_on=self.access_logs.ready)
        # Object events (who changed a connector config, when) go to EventBridge for the account's audit rules.
        S3BucketNotification(self, "events", bucket=b, eventbridge=True)
        settings = private_versioned(
            self, b, {"apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": kms_key_arn},
                      "bucket_key_enabled": True},
        )
        # Lifecycle never removes a locked version: old versions go once both 90 days and the lock have passed.
        expiring(self, b, "expire-noncurrent-versions", noncurrent_days=90)
        # S3 enables Object Lock only on a versioned bucket.
        self.object_lock = S3BucketObjectLockConfigurationA(
            self, "object_lock", bucket=b, object_lock_enabled="Enabled",
            rule=S3BucketObjectLockConfigurationRuleA(default_retention=S3BucketObjectLockConfigurationRuleDefaultRetentionA(
                mode=LOCK_MODE, days=cfg.ledger_retention_days)),
            depends_on=[settings.versioning],
        )
        bucket_arn = self.bucket.arn
        policy = S3BucketPolicy(
            self,
            "policy",
            bucket=b,
            policy=policy_json(
                [
                    deny_insecure_transport(bucket_arn),
                    *ledger_append_only(bucket_arn, cfg.migration.name),
                ]
            ),
            depends_on=[settings.public_access],
        )
        # Objects only once versioning is on, every version is locked and the policy holds: the first upload
        # then has a real version id (kept by the noncurrent-version rule) instead of the "null" version.
        objects_after = [settings.versioning, settings.encryption, settings.ownership, self.object_lock, policy]
        # The bucket's default retention locks each object; the provider reads that lock back into the object's
        # own lock attributes, which the configuration leaves unset: managed here, every plan would try to remove
        # the retention (refused by Object Lock without the governance bypass).
        bucket_locked = TerraformResourceLifecycle(ignore_changes=["object_lock_mode", "object_lock_retain_until_date"])

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
                depends_on=objects_after,
                lifecycle=bucket_locked,
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
            depends_on=objects_after,
            lifecycle=bucket_locked,
        )


#: Where the operator load balancer's access logs land in the access-log bucket (ELB appends AWSLogs/<account>/).
ALB_LOG_PREFIX = "operator-alb"


class AccessLogBucket(Construct):
    """Target of the config bucket's S3 server access logs and of the operator load balancer's access logs:
    private, versioned, SSE-S3, expiring; emptied by ``destroy`` itself (``force_destroy``, see below).

    S3 and ELB log delivery write only to SSE-S3 buckets (not SSE-KMS with a customer key), hence AES256 here.
    The bucket policy admits exactly the S3 logging service for the config bucket of this account under
    ``configs/``, and ELB log delivery (the service principal of newer regions and the regional ELB account
    of older ones, both as AWS documents them) under ``operator-alb/AWSLogs/<account>/``: the access log
    names the client address, the authenticated path and the time of every operator request (docs/infra.md).
    """

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, source_bucket_arn: str) -> None:
        super().__init__(scope, id_)
        name = f"{cfg.resource_prefix}-s3logs-{cfg.account_id}"
        # force_destroy: S3 delivers access logs minutes after the requests, so the log records of the
        # teardown itself (emptying the config bucket) land after any hand-emptying; Terraform empties
        # this bucket at the moment it deletes it. Logs to keep are copied out first (runbooks/deploy.md).
        self.bucket = S3Bucket(self, "bucket", bucket=name, force_destroy=True)
        skip(self.bucket, "CKV_AWS_145", "S3 server access log delivery supports only SSE-S3 destination buckets, "
             "not SSE-KMS with a customer-managed key")
        skip(self.bucket, "CKV_AWS_144", "access logs of a migration's config bucket need no second region; they "
             "expire after a year")
        skip(self.bucket, "CKV2_AWS_62", "log deliveries would notify on every delivery; events of the audited "
             "bucket itself go to EventBridge")
        b = self.bucket.id
        settings = private_versioned(self, b, {"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}})
        expiring(self, b, "expire-access-logs", noncurrent_days=30, expiration_days=ACCESS_LOG_DAYS)
        bucket_arn = self.bucket.arn
        policy = S3BucketPolicy(
            self, "policy", bucket=b,
            policy=policy_json([
                {
                    "Sid": "S3ServerAccessLogsOfTheConfigBucket",
                    "Effect": "Allow",
                    "Principal": {"Service": "logging.s3.amazonaws.com"},
                    "Action": "s3:PutObject",
                    "Resource": [f"{bucket_arn}/configs/*"],
                    "Condition": {
                        "ArnLike": {"aws:SourceArn": source_bucket_arn},
                        "StringEquals": {"aws:SourceAccount": cfg.account_id},
                    },
                },
                *alb_log_statements(self, cfg, bucket_arn),
                deny_insecure_transport(bucket_arn),
            ]),
            depends_on=[settings.public_access],
        )
        #: What a bucket logging into this one must wait for: the policy admitting the logging service,
        #: on a bucket whose encryption and ownership S3 log delivery accepts.
        self.ready = [policy, settings.encryption, settings.ownership]


def alb_log_statements(scope: Construct, cfg: EnvironmentConfig, bucket_arn: str) -> list[dict]:
    """ELB access-log delivery into ``<bucket>/operator-alb/AWSLogs/<account>/``: the delivery service (regions
    launched since August 2022) and the region's ELB account (the provider's own table, no API call)."""
    elb_account = DataAwsElbServiceAccount(scope, "elb_account")
    resource = [f"{bucket_arn}/{ALB_LOG_PREFIX}/AWSLogs/{cfg.account_id}/*"]
    return [
        {"Sid": "OperatorAlbAccessLogsDelivery", "Effect": "Allow",
         "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}, "Action": "s3:PutObject", "Resource": resource},
        {"Sid": "OperatorAlbAccessLogsRegionalElbAccount", "Effect": "Allow",
         "Principal": {"AWS": elb_account.arn}, "Action": "s3:PutObject", "Resource": resource},
    ]
