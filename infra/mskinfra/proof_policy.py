"""IAM policy documents of the proof follower service, as plain data (no jsii; :mod:`.proof_follower` makes the role).

The follower (``msk-migrate validate --follow`` in the operator image) reads both clusters and writes its
verified-up-to mark; it changes nothing on either cluster. So its task role holds:

- MSK IAM read (Connect, DescribeCluster; DescribeTopic, ReadData) on this migration's topics of an IAM
  target and an IAM source, and DescribeGroup on its own consumers' groups (``msk-migrate-follow-*``: they
  assign partitions and never commit);
- the clusters' secrets (SCRAM/TLS sources: the follower resolves them itself, like the operator task) and
  their KMS keys through Secrets Manager only;
- GetObject/PutObject on the migration's proof prefix of the config bucket (``proof/<migration>/``), ListBucket
  restricted to that prefix, and the stack key through S3 only. Nothing else of the bucket.
"""

from __future__ import annotations

from msk_migrate.config.environment import EnvironmentConfig, parse_msk_arn, proof_key_prefix

from .iam_policy import msk_statements, source_topic_patterns, target_topic_patterns
from .task_self_check import self_check_statements
from .util import dns_suffix

PROOF_CLUSTER_ACTIONS = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"]
PROOF_TOPIC_ACTIONS = ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"]
PROOF_GROUP_ACTIONS = ["kafka-cluster:DescribeGroup"]
#: The follower's consumers' group ids (python/msk_migrate/validation/follow/follower.py: msk-migrate-follow-<side>).
PROOF_GROUPS = ["msk-migrate-follow-*"]


def mark_statements(cfg: EnvironmentConfig, bucket_arn: str, key_arn: str, *, write: bool, key: bool = True) -> list[dict]:
    """The mark under ``proof/<migration>/``: read (and with ``write`` replace) the object, list that prefix only;
    with ``key``, the stack key through S3 (a role that holds it already passes ``key=False``)."""
    prefix = proof_key_prefix(cfg.migration.name)
    sid = "ProofMark" if write else "ReadProofMark"
    statements: list[dict] = [
        {"Sid": f"{sid}Objects", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"] if write else ["s3:GetObject"],
         "Resource": [f"{bucket_arn}/{prefix}*"]},
        {"Sid": f"{sid}List", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": [bucket_arn],
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
    ]
    if key:
        statements.append({"Sid": f"{sid}Encryption", "Effect": "Allow",
                           "Action": ["kms:Decrypt", "kms:GenerateDataKey"] if write else ["kms:Decrypt"], "Resource": [key_arn],
                           "Condition": {"StringEquals": {"kms:ViaService": f"s3.{cfg.region}.{dns_suffix(cfg)}"}}})
    return statements


def follower_statements(cfg: EnvironmentConfig, *, bucket_arn: str, key_arn: str, target_cluster_arn: str,
                        target_topic_arn_prefix: str, target_group_arn_prefix: str) -> list[dict]:
    """The follower task role's whole policy (see the module doc)."""
    out: list[dict] = []
    if cfg.target.auth.mode == "iam":
        out += msk_statements("ProofTargetMskRead", target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix,
                              PROOF_CLUSTER_ACTIONS, PROOF_TOPIC_ACTIONS, PROOF_GROUP_ACTIONS,
                              target_topic_patterns(cfg), PROOF_GROUPS)
    if cfg.source.auth.mode == "iam":
        src = parse_msk_arn(cfg.source.msk_cluster_arn)
        src_arn = f"arn:{cfg.partition}:kafka:{src['region']}:{src['account']}"
        out += msk_statements("ProofSourceMskRead", cfg.source.msk_cluster_arn,
                              f"{src_arn}:topic/{src['name']}/{src['uuid']}", f"{src_arn}:group/{src['name']}/{src['uuid']}",
                              PROOF_CLUSTER_ACTIONS, PROOF_TOPIC_ACTIONS, PROOF_GROUP_ACTIONS,
                              source_topic_patterns(cfg), PROOF_GROUPS)
    secrets = cfg.secret_arns()
    if secrets:
        out.append({"Sid": "ReadClusterSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                    "Resource": secrets})
        if cfg.secrets_kms_key_arns:
            out.append({"Sid": "DecryptClusterSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                        "Resource": sorted(set(cfg.secrets_kms_key_arns)),
                        "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{cfg.region}.{dns_suffix(cfg)}"}}})
    out += mark_statements(cfg, bucket_arn, key_arn, write=True)
    out += self_check_statements(cfg, "ProofFollower")  # the entrypoint reads how ECS started it (task_self_check.py)
    return out
