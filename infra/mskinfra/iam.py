"""IAM: one execution role per service, one task role for Connect, nothing wider than needed.

Execution roles (used by the ECS agent, not by the application):
  - ``ecr:GetAuthorizationToken`` on ``*`` -- the only action here without a resource scope (the API has
    none); pulls themselves are allowed on the service's own repository only;
  - ``logs:CreateLogStream``/``PutLogEvents`` on the service's own log group;
  - ``secretsmanager:GetSecretValue`` on exactly the secrets that service's task definition injects
    (+ ``kms:Decrypt`` via Secrets Manager for their customer-managed keys). Grafana's also reads every
    person's own login (``connect.people``: their Grafana user, images/grafana/people.sh).

Connect task role (used by the workers):
  - MSK IAM (``kafka-cluster:*`` actions listed one by one) on this migration's target cluster, its
    topics and groups only, as ``arn:...:topic/<cluster>/<uuid>/<name>`` patterns derived from the
    migration's topic/group regexes (:mod:`.scope`): exact names for literal regexes, ``prefix*`` for
    prefixed ones, ``*`` under the cluster otherwise; plus the Connect and MM2 internal topics by name;
  - for an MSK-IAM source, read-only actions on the source cluster, its topics and groups;
  - read of the connector-config bucket (+ ``kms:Decrypt`` via S3).
Prometheus and Grafana get no task role: they call no AWS API.
The policy documents are plain data in :mod:`.iam_policy` (no jsii); this module makes the roles.
"""

from __future__ import annotations

from cdktf import TerraformOutput
from cdktf_cdktf_provider_aws.iam_policy import IamPolicy
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig, parse_msk_arn

from .iam_policy import (  # the policy documents, as plain data
    CLEANUP_SESSION_SECONDS,
    ECR_PULL_ACTIONS,
    OPERATOR_POLICY_NAME,
    SOURCE_CLUSTER_ACTIONS,
    SOURCE_GROUP_ACTIONS,
    SOURCE_TOPIC_ACTIONS,
    TARGET_CLUSTER_ACTIONS,
    TARGET_GROUP_ACTIONS,
    TARGET_TOPIC_ACTIONS,
    cleanup_statements,
    cleanup_trust_policy,
    ledger_statements,
    msk_statements,
    operator_statements,
    operator_user_statements,
    source_group_patterns,
    source_topic_patterns,
    target_group_patterns,
    target_topic_patterns,
    transactional_id_statement,
    trust_policy,
)
from .proof_policy import mark_statements
from .task_self_check import self_check_statements
from .util import dns_suffix, policy_json


class Roles(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        repository_arns: dict[str, str],
        log_group_arns: dict[str, str],
        service_secrets: dict[str, list[str]],
        service_secret_kms_keys: dict[str, list[str]],
        stack_key_arn: str,
        bucket_arn: str,
        target_cluster_arn: str,
        target_topic_arn_prefix: str,
        target_group_arn_prefix: str,
        operator_secrets: list[str] = (),
        operator_secret_kms_keys: list[str] = (),
        init_image_repository_arns: dict[str, list[str]] | None = None,
    ) -> None:
        """``init_image_repository_arns``: component -> repositories of its init containers' images (the
        serving-certificate container of Prometheus and Grafana runs the Connect image)."""
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        trust = trust_policy(cfg)
        self.execution: dict[str, IamRole] = {}
        #: component -> the inline policies its service must wait for
        self.policies: dict[str, list[IamRolePolicy]] = {}
        for component, repo_arn in repository_arns.items():
            cid = component.replace("-", "_")
            role = IamRole(
                self, f"{cid}_execution", name=f"{p}-{component}-execution", assume_role_policy=trust,
                description=f"ECS agent for {p} {component}: pull its image, write its logs, read its secrets",
            )
            statements = [
                # GetAuthorizationToken has no resource-level scope: "*" is the only valid Resource.
                {"Sid": "EcrAuthorizationToken", "Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
                {"Sid": "PullOwnImage", "Effect": "Allow", "Action": ECR_PULL_ACTIONS, "Resource": [repo_arn]},
                *([{"Sid": "PullInitImages", "Effect": "Allow", "Action": ECR_PULL_ACTIONS,
                    "Resource": (init_image_repository_arns or {})[component]}]
                  if (init_image_repository_arns or {}).get(component) else []),
                {
                    "Sid": "WriteOwnLogs",
                    "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": [f"{log_group_arns[component]}:log-stream:*"],
                },
            ]
            secrets = service_secrets.get(component) or []
            if secrets:
                statements.append(
                    {"Sid": "ReadOwnSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": secrets}
                )
            keys = service_secret_kms_keys.get(component) or []
            if secrets and keys:
                statements.append(
                    {
                        "Sid": "DecryptOwnSecrets",
                        "Effect": "Allow",
                        "Action": "kms:Decrypt",
                        "Resource": keys,
                        "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{cfg.region}.{dns_suffix(cfg)}"}},
                    }
                )
            self.policies[component] = [
                IamRolePolicy(self, f"{cid}_execution_policy", name="execution", role=role.id, policy=policy_json(statements))
            ]
            self.execution[component] = role

        self.connect_task = IamRole(
            self, "connect_task", name=f"{p}-kafka-connect-task", assume_role_policy=trust,
            description=f"{p} Connect workers: MSK access of this migration, connector-config bucket read",
        )
        statements: list[dict] = []
        if cfg.target.auth.mode == "iam":
            statements += msk_statements(
                "TargetMsk", target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix,
                TARGET_CLUSTER_ACTIONS, TARGET_TOPIC_ACTIONS, TARGET_GROUP_ACTIONS,
                target_topic_patterns(cfg), target_group_patterns(cfg),
            )
        if cfg.target.auth.mode == "iam" and cfg.migration.exactly_once:
            statements.append(transactional_id_statement(cfg, target_topic_arn_prefix))
        if cfg.source.auth.mode == "iam":
            src = parse_msk_arn(cfg.source.msk_cluster_arn)
            src_arn = f"arn:{cfg.partition}:kafka:{src['region']}:{src['account']}"
            statements += msk_statements(
                "SourceMskRead", cfg.source.msk_cluster_arn,
                f"{src_arn}:topic/{src['name']}/{src['uuid']}", f"{src_arn}:group/{src['name']}/{src['uuid']}",
                SOURCE_CLUSTER_ACTIONS, SOURCE_TOPIC_ACTIONS, SOURCE_GROUP_ACTIONS,
                source_topic_patterns(cfg), source_group_patterns(cfg),
            )
        statements += [
            {"Sid": "ReadConnectorConfigs", "Effect": "Allow", "Action": ["s3:GetObject", "s3:GetObjectVersion"], "Resource": [f"{bucket_arn}/*"]},
            {"Sid": "ListConnectorConfigs", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": [bucket_arn]},
            {
                "Sid": "DecryptConnectorConfigs",
                "Effect": "Allow",
                "Action": "kms:Decrypt",
                "Resource": [stack_key_arn],
                "Condition": {"StringEquals": {"kms:ViaService": f"s3.{cfg.region}.{dns_suffix(cfg)}"}},
            },
        ]
        self.policies["kafka-connect"].append(
            IamRolePolicy(self, "connect_task_policy", name="connect", role=self.connect_task.id, policy=policy_json(statements))
        )

        # The operator task (msk-migrate … --in-vpc): what the runbook's commands need, nothing more.
        self.operator_task = IamRole(
            self, "operator_task", name=f"{p}-operator-task", assume_role_policy=trust,
            description=f"{p} operator commands (msk-migrate --in-vpc): read/compare the clusters, move group offsets",
        )
        op: list[dict] = operator_statements(cfg, target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix)
        op += self_check_statements(cfg, "OperatorTask")  # the entrypoint reads how ECS started it (task_self_check.py)
        # Deleting is no standing right: `cleanup --yes` assumes this role for the minutes it deletes.
        self.cleanup: IamRole | None = None
        cleanup = cleanup_statements(cfg, target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix)
        if cleanup:
            self.cleanup = IamRole(
                self, "cleanup", name=f"{p}-cleanup", assume_role_policy=cleanup_trust_policy(cfg, self.operator_task.arn),
                max_session_duration=CLEANUP_SESSION_SECONDS,
                description=f"{p} cleanup: delete MM2's internal topics and the worker's group (assumed by `msk-migrate cleanup --yes`)",
            )
            self.policies["operator"].append(
                IamRolePolicy(self, "cleanup_policy", name="cleanup", role=self.cleanup.id, policy=policy_json(cleanup)))
            op.append({"Sid": "AssumeCleanupRole", "Effect": "Allow", "Action": "sts:AssumeRole", "Resource": [self.cleanup.arn]})
        if cfg.source.auth.mode == "iam":
            src = parse_msk_arn(cfg.source.msk_cluster_arn)
            src_arn = f"arn:{cfg.partition}:kafka:{src['region']}:{src['account']}"
            op += msk_statements(
                "OperatorSourceMskRead", cfg.source.msk_cluster_arn,
                f"{src_arn}:topic/{src['name']}/{src['uuid']}", f"{src_arn}:group/{src['name']}/{src['uuid']}",
                SOURCE_CLUSTER_ACTIONS, SOURCE_TOPIC_ACTIONS, [*SOURCE_GROUP_ACTIONS, "kafka-cluster:AlterGroup"],
                source_topic_patterns(cfg), [*source_group_patterns(cfg), "msk-migrate-*"],
            )
        op += ledger_statements(cfg, bucket_arn, stack_key_arn)
        if cfg.proof.follower:  # the gates read the follower's mark (cutover check --validation-report s3://…/proof/…)
            op += mark_statements(cfg, bucket_arn, stack_key_arn, write=False)
        if operator_secrets:
            op.append({"Sid": "ReadOperatorSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                       "Resource": sorted(set(operator_secrets))})
        if operator_secrets and operator_secret_kms_keys:
            op.append({
                "Sid": "DecryptOperatorSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                "Resource": sorted(set(operator_secret_kms_keys)),
                "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{cfg.region}.{dns_suffix(cfg)}"}},
            })
        if op:
            self.policies["operator"].append(
                IamRolePolicy(self, "operator_task_policy", name="operator", role=self.operator_task.id, policy=policy_json(op))
            )

        # The people who run the runbook: a managed policy to attach to their group or role (issue 37).
        self.operator_policy = IamPolicy(
            self, "operator_policy", name=f"{p}-{OPERATOR_POLICY_NAME}",
            description=f"{p}: run the runbook's commands (msk-migrate --in-vpc) and nothing else",
            policy=policy_json(operator_user_statements(
                cfg, operator_roles=[self.operator_task.arn, self.execution["operator"].arn],
                operator_log_group_arn=log_group_arns["operator"], connect_log_group_arn=log_group_arns["kafka-connect"])),
        )
        out = TerraformOutput(self, "operator_policy_arn", value=self.operator_policy.arn,
                              description="Managed policy for the people who run the runbook (attach to their group or role)")
        out.override_logical_id("operator_policy_arn")
