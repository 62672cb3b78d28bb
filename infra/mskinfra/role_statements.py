"""The statements of each role the stack makes, assembled from the documents of :mod:`.iam_policy`,
:mod:`.proof_policy` and :mod:`.task_self_check` (plain data: no jsii, so unit tests read them in milliseconds).

One function per role; each returns its statements in the order the policy lists them, so a role's policy
text only changes when what it allows does. :mod:`.iam` makes the roles and attaches these.
"""

from __future__ import annotations

from collections.abc import Sequence

from msk_migrate.config.environment import EnvironmentConfig, parse_msk_arn

from .iam_policy import (
    ECR_PULL_ACTIONS,
    OPERATOR_OWN_GROUPS,
    SOURCE_CLUSTER_ACTIONS,
    SOURCE_GROUP_ACTIONS,
    SOURCE_TOPIC_ACTIONS,
    TARGET_CLUSTER_ACTIONS,
    TARGET_GROUP_ACTIONS,
    TARGET_TOPIC_ACTIONS,
    ledger_statements,
    msk_statements,
    operator_statements,
    source_group_patterns,
    source_topic_patterns,
    target_group_patterns,
    target_topic_patterns,
    transactional_id_statement,
)
from .proof_policy import mark_statements
from .task_self_check import self_check_statements
from .util import dns_suffix


def _via(cfg: EnvironmentConfig, service: str) -> dict:
    """A KMS key used only through ``service`` in this environment's region."""
    return {"StringEquals": {"kms:ViaService": f"{service}.{cfg.region}.{dns_suffix(cfg)}"}}


def execution_statements(cfg: EnvironmentConfig, *, repository_arn: str, log_group_arn: str, secrets: Sequence[str],
                         secret_kms_keys: Sequence[str], init_repository_arns: Sequence[str]) -> list[dict]:
    """A service's execution role (the ECS agent's): pull its own image (and its init containers'), write its own
    log group, read exactly the secrets its task definition injects."""
    statements: list[dict] = [
        # GetAuthorizationToken has no resource-level scope: "*" is the only valid Resource.
        {"Sid": "EcrAuthorizationToken", "Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
        {"Sid": "PullOwnImage", "Effect": "Allow", "Action": ECR_PULL_ACTIONS, "Resource": [repository_arn]},
    ]
    if init_repository_arns:
        statements.append({"Sid": "PullInitImages", "Effect": "Allow", "Action": ECR_PULL_ACTIONS,
                           "Resource": list(init_repository_arns)})
    statements.append({"Sid": "WriteOwnLogs", "Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                       "Resource": [f"{log_group_arn}:log-stream:*"]})
    if secrets:
        statements.append({"Sid": "ReadOwnSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                           "Resource": list(secrets)})
    if secrets and secret_kms_keys:
        statements.append({"Sid": "DecryptOwnSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                           "Resource": list(secret_kms_keys), "Condition": _via(cfg, "secretsmanager")})
    return statements


def _source_msk_read(cfg: EnvironmentConfig, sid: str, group_actions: list[str], groups: list[str]) -> list[dict]:
    """Read-only MSK IAM on an MSK-IAM source: its cluster, the migration's topics and ``groups``."""
    src = parse_msk_arn(cfg.source.msk_cluster_arn)
    src_arn = f"arn:{cfg.partition}:kafka:{src['region']}:{src['account']}"
    return msk_statements(
        sid, cfg.source.msk_cluster_arn,
        f"{src_arn}:topic/{src['name']}/{src['uuid']}", f"{src_arn}:group/{src['name']}/{src['uuid']}",
        SOURCE_CLUSTER_ACTIONS, SOURCE_TOPIC_ACTIONS, group_actions, source_topic_patterns(cfg), groups,
    )


def connect_task_statements(cfg: EnvironmentConfig, *, target_cluster_arn: str, target_topic_arn_prefix: str,
                            target_group_arn_prefix: str, bucket_arn: str, stack_key_arn: str) -> list[dict]:
    """The Connect workers: MSK IAM on this migration's target topics and groups (and its transactional ids under
    exactly-once), read-only on an MSK-IAM source, read of the connector-config bucket."""
    statements: list[dict] = []
    if cfg.target.auth.mode == "iam":
        statements += msk_statements(
            "TargetMsk", target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix,
            TARGET_CLUSTER_ACTIONS, TARGET_TOPIC_ACTIONS, TARGET_GROUP_ACTIONS,
            target_topic_patterns(cfg), target_group_patterns(cfg),
        )
        if cfg.migration.exactly_once:
            statements.append(transactional_id_statement(cfg, target_topic_arn_prefix))
    if cfg.source.auth.mode == "iam":
        statements += _source_msk_read(cfg, "SourceMskRead", SOURCE_GROUP_ACTIONS, source_group_patterns(cfg))
    statements += [
        {"Sid": "ReadConnectorConfigs", "Effect": "Allow", "Action": ["s3:GetObject", "s3:GetObjectVersion"], "Resource": [f"{bucket_arn}/*"]},
        {"Sid": "ListConnectorConfigs", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": [bucket_arn]},
        {"Sid": "DecryptConnectorConfigs", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": [stack_key_arn],
         "Condition": _via(cfg, "s3")},
    ]
    return statements


def operator_task_statements(cfg: EnvironmentConfig, *, target_cluster_arn: str, target_topic_arn_prefix: str,
                             target_group_arn_prefix: str, bucket_arn: str, stack_key_arn: str,
                             cleanup_role_arn: str | None, secrets: Sequence[str], secret_kms_keys: Sequence[str]) -> list[dict]:
    """The operator task (``msk-migrate … --in-vpc``): what the runbook's commands need and nothing more. Deleting is
    no standing right: with ``cleanup_role_arn`` it may assume the cleanup role for the minutes ``cleanup --yes``
    deletes."""
    op = operator_statements(cfg, target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix)
    op += self_check_statements(cfg, "OperatorTask")  # the entrypoint reads how ECS started it
    if cleanup_role_arn is not None:
        op.append({"Sid": "AssumeCleanupRole", "Effect": "Allow", "Action": "sts:AssumeRole", "Resource": [cleanup_role_arn]})
    if cfg.source.auth.mode == "iam":
        op += _source_msk_read(cfg, "OperatorSourceMskRead", [*SOURCE_GROUP_ACTIONS, "kafka-cluster:AlterGroup"],
                               [*source_group_patterns(cfg), OPERATOR_OWN_GROUPS])
    op += ledger_statements(cfg, bucket_arn, stack_key_arn)
    if cfg.proof.follower:  # the gates read the follower's mark (cutover check --validation-report s3://…/proof/…)
        op += mark_statements(cfg, bucket_arn, stack_key_arn, write=False)
    if secrets:
        op.append({"Sid": "ReadOperatorSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                   "Resource": sorted(set(secrets))})
    if secrets and secret_kms_keys:
        op.append({"Sid": "DecryptOperatorSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                   "Resource": sorted(set(secret_kms_keys)), "Condition": _via(cfg, "secretsmanager")})
    return op
