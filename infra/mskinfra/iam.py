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
The policy documents are plain data in :mod:`.iam_policy`, assembled per role in :mod:`.role_statements` (no jsii);
this module makes the roles and attaches them.
"""

from __future__ import annotations

from cdktf import TerraformOutput
from cdktf_cdktf_provider_aws.iam_policy import IamPolicy
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

from .iam_policy import (  # the policy documents, as plain data
    CLEANUP_SESSION_SECONDS,
    OPERATOR_POLICY_NAME,
    cleanup_statements,
    cleanup_trust_policy,
    operator_user_statements,
    trust_policy,
)
from .role_statements import connect_task_statements, execution_statements, operator_task_statements
from .util import policy_json


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
        self.cfg = cfg
        self.trust = trust_policy(cfg)
        self.execution: dict[str, IamRole] = {}
        #: component -> the inline policies its service must wait for
        self.policies: dict[str, list[IamRolePolicy]] = {}
        for component, repo_arn in repository_arns.items():
            self._execution_role(component, execution_statements(
                cfg, repository_arn=repo_arn, log_group_arn=log_group_arns[component],
                secrets=service_secrets.get(component) or [], secret_kms_keys=service_secret_kms_keys.get(component) or [],
                init_repository_arns=(init_image_repository_arns or {}).get(component) or []))
        target = {"target_cluster_arn": target_cluster_arn, "target_topic_arn_prefix": target_topic_arn_prefix,
                  "target_group_arn_prefix": target_group_arn_prefix}
        self.connect_task = self._connect_task_role(
            connect_task_statements(cfg, **target, bucket_arn=bucket_arn, stack_key_arn=stack_key_arn))
        self.operator_task = IamRole(
            self, "operator_task", name=f"{cfg.resource_prefix}-operator-task", assume_role_policy=self.trust,
            description=f"{cfg.resource_prefix} operator commands (msk-migrate --in-vpc): read/compare the clusters, move group offsets",
        )
        self.cleanup = self._cleanup_role(cleanup_statements(cfg, target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix))
        self._attach("operator", "operator_task_policy", "operator", self.operator_task, operator_task_statements(
            cfg, **target, bucket_arn=bucket_arn, stack_key_arn=stack_key_arn,
            cleanup_role_arn=self.cleanup.arn if self.cleanup else None,
            secrets=operator_secrets, secret_kms_keys=operator_secret_kms_keys))
        self.operator_policy = self._operator_people_policy(log_group_arns)

    def _attach(self, component: str, id_: str, name: str, role: IamRole, statements: list[dict]) -> None:
        """An inline policy on ``role`` that ``component``'s service waits for; none when nothing is allowed."""
        if statements:
            self.policies.setdefault(component, []).append(
                IamRolePolicy(self, id_, name=name, role=role.id, policy=policy_json(statements)))

    def _execution_role(self, component: str, statements: list[dict]) -> None:
        """The ECS agent's role for ``component``: pull its image, write its logs, read its secrets."""
        p, cid = self.cfg.resource_prefix, component.replace("-", "_")
        role = IamRole(
            self, f"{cid}_execution", name=f"{p}-{component}-execution", assume_role_policy=self.trust,
            description=f"ECS agent for {p} {component}: pull its image, write its logs, read its secrets",
        )
        self.policies[component] = []
        self._attach(component, f"{cid}_execution_policy", "execution", role, statements)
        self.execution[component] = role

    def _connect_task_role(self, statements: list[dict]) -> IamRole:
        """The Connect workers' task role."""
        p = self.cfg.resource_prefix
        role = IamRole(
            self, "connect_task", name=f"{p}-kafka-connect-task", assume_role_policy=self.trust,
            description=f"{p} Connect workers: MSK access of this migration, connector-config bucket read",
        )
        self._attach("kafka-connect", "connect_task_policy", "connect", role, statements)
        return role

    def _cleanup_role(self, statements: list[dict]) -> IamRole | None:
        """Deleting is no standing right: `cleanup --yes` assumes this role for the minutes it deletes (none when the
        environment leaves nothing to delete)."""
        if not statements:
            return None
        p = self.cfg.resource_prefix
        role = IamRole(
            self, "cleanup", name=f"{p}-cleanup", assume_role_policy=cleanup_trust_policy(self.cfg, self.operator_task.arn),
            max_session_duration=CLEANUP_SESSION_SECONDS,
            description=f"{p} cleanup: delete MM2's internal topics and the worker's group (assumed by `msk-migrate cleanup --yes`)",
        )
        self._attach("operator", "cleanup_policy", "cleanup", role, statements)
        return role

    def _operator_people_policy(self, log_group_arns: dict[str, str]) -> IamPolicy:
        """The people who run the runbook: a managed policy to attach to their group or role, with its ARN as an output."""
        p = self.cfg.resource_prefix
        policy = IamPolicy(
            self, "operator_policy", name=f"{p}-{OPERATOR_POLICY_NAME}",
            description=f"{p}: run the runbook's commands (msk-migrate --in-vpc) and nothing else",
            policy=policy_json(operator_user_statements(
                self.cfg, operator_roles=[self.operator_task.arn, self.execution["operator"].arn],
                operator_log_group_arn=log_group_arns["operator"], connect_log_group_arn=log_group_arns["kafka-connect"])),
        )
        out = TerraformOutput(self, "operator_policy_arn", value=policy.arn,
                              description="Managed policy for the people who run the runbook (attach to their group or role)")
        out.override_logical_id("operator_policy_arn")
        return policy
