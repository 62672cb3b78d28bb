"""The stack ``migration-<env>``: everything the migration runs on, from the environment's config alone.

A created MSK cluster and what it needs to keep serving live in ``target-<env>``
(:mod:`mskinfra.target_stack`), read here through its outputs, so destroying this stack after cutover
(the hand-over) leaves the cluster serving. ``removed`` blocks make Terraform *forget* (never destroy)
those resources when an older state of this stack still holds them.
"""

from __future__ import annotations

from pathlib import Path

from cdktf import TerraformStack
from cdktf_cdktf_provider_aws.secretsmanager_secret import SecretsmanagerSecret
from constructs import Construct

from msk_migrate.aws.operator_stack import environment_yaml, stack_environment
from msk_migrate.config.environment import GRAFANA_PORT, PROMETHEUS_PORT, EnvironmentConfig
from msk_migrate.connectors import render_connectors, worker_environment
from msk_migrate.connectors.worker_env import ECS_REST, worker_secret_env

from .alb import OperatorLoadBalancer
from .base import configure_stack
from .checkov import skip
from .config_bucket import ConfigBucket
from .discovery import Discovery
from .ecr_repositories import Repositories
from .ecs import LogGroups, Services, ServiceSpec, TaskRoles
from .emr_serverless import ValidationJobHome
from .endpoints import AwsApis
from .glue_validation import GlueValidationJob
from .iam import Roles
from .images import ImageChoice
from .kms import StackKey
from .monitoring import broker_scrape_env, operator_credentials
from .msk import TargetMsk
from .network import Network
from .outputs import add_outputs
from .proof_follower import ProofFollower
from .proof_follower import dns_name as proof_dns_name


def bootstrap_placeholder(cfg: EnvironmentConfig) -> str:
    """A valid host:port the renderer accepts; replaced by the real bootstrap reference afterwards."""
    return f"msk-migrate-target-bootstrap.invalid:{cfg.target.port}"


class MigrationStack(TerraformStack):
    def __init__(
        self,
        scope: Construct,
        cfg: EnvironmentConfig,
        *,
        images: dict[str, ImageChoice],
        outdir: Path,
        local_state_dir: Path,
        kept_addresses: list[str] = (),
    ) -> None:
        super().__init__(scope, cfg.stack_name)
        self.cfg = cfg
        configure_stack(self, cfg, outdir, local_state_dir)
        if kept_addresses:
            # Older layouts kept these in this stack: forget them here, never destroy them (target-<env> owns them).
            self.add_override("removed", [{"from": a, "lifecycle": {"destroy": False}} for a in kept_addresses])

        msk = TargetMsk(self, "msk", cfg, outdir=outdir, local_state_dir=local_state_dir)
        key_arn = msk.kms_key_arn if msk.kms_key_arn is not None else StackKey(self, "kms", cfg).key.arn
        log_key_arn = key_arn if cfg.log_kms else None
        repos = Repositories(self, "ecr", cfg, key_arn)
        network = Network(self, "network", cfg, msk_security_group_id=msk.security_group_id)
        # AWS's APIs on 443 through VPC endpoints (made here, or the VPC's own): every task group is admitted.
        aws = AwsApis(self, "aws_endpoints", cfg)
        for sg, who in ((network.connect, "Connect and the operator task"), (network.prometheus, "Prometheus"),
                        (network.grafana, "Grafana")):
            aws.admit(sg, who)

        # One renderer for everything Kafka: connectors, worker environment, secret variables.
        placeholder = bootstrap_placeholder(cfg)
        substitutions = {placeholder: msk.bootstrap}
        source = cfg.source.endpoint()
        target = cfg.target.endpoint(placeholder)
        connectors = render_connectors(source, target, cfg.migration)
        connect_env = worker_environment(target, cfg.worker, source, rest=ECS_REST, migration=cfg.migration)
        connect_secret_env = worker_secret_env(target, source)

        bucket = ConfigBucket(
            self,
            "configs",
            cfg,
            kms_key_arn=key_arn,
            connectors=connectors,
            worker_env=connect_env,
            worker_secret_env=connect_secret_env,
            substitutions=substitutions,
        )
        discovery = Discovery(self, "discovery", cfg)
        logs = LogGroups(self, "logs", cfg, log_key_arn)

        grafana_secret_arn, grafana_kms = self._grafana_admin_secret(key_arn)

        # Operator endpoints: HTTPS on an internal load balancer, every service authenticating (docs/infra.md).
        creds = operator_credentials(self, cfg, key_arn)
        alb = OperatorLoadBalancer(
            self, "operator_alb", cfg,
            task_security_groups={"kafka-connect": network.connect, "prometheus": network.prometheus, "grafana": network.grafana},
            access_logs=bucket.access_logs,
        )

        roles = Roles(
            self,
            "iam",
            cfg,
            repository_arns={c: r.arn for c, r in repos.repos.items()},
            log_group_arns={c: g.arn for c, g in logs.groups.items()},
            service_secrets={
                "kafka-connect": [*cfg.secret_arns(), *creds.connect_secret_arns()],
                "prometheus": creds.prometheus_secret_arns(),
                "grafana": creds.grafana_secret_arns(grafana_secret_arn),
            },
            # Prometheus and Grafana make their TLS certificate with the Connect image's serving-cert.sh.
            init_image_repository_arns={c: [repos.repos["kafka-connect"].arn] for c in ("prometheus", "grafana")},
            service_secret_kms_keys={
                "kafka-connect": [*list(cfg.secrets_kms_key_arns), key_arn],
                "prometheus": [key_arn],
                "grafana": sorted(set(grafana_kms) | {key_arn}),
            },
            stack_key_arn=key_arn,
            bucket_arn=bucket.bucket.arn,
            target_cluster_arn=msk.cluster_arn,
            target_topic_arn_prefix=msk.topic_arn_prefix,
            target_group_arn_prefix=msk.group_arn_prefix,
            # The operator task reads the clusters' secrets itself (validate, acls plan, connectors ...).
            operator_secrets=[*cfg.secret_arns(), *cfg.registry_secret_arns(), creds.connect_rest.arn],
            operator_secret_kms_keys=[*list(cfg.secrets_kms_key_arns), key_arn],
        )

        # The validation job's home (msk-migrate validate --on emr-serverless).
        validation = ValidationJobHome(
            self, "validation", cfg, msk_security_group_id=msk.security_group_id, bucket_arn=bucket.bucket.arn, key_arn=key_arn,
            secret_arns=list(cfg.secret_arns()), secret_kms_keys=list(cfg.secrets_kms_key_arns), target_cluster_arn=msk.cluster_arn,
            target_topic_arn_prefix=msk.topic_arn_prefix, target_group_arn_prefix=msk.group_arn_prefix,
        )
        aws.admit(validation.security_group, "validation job")
        if cfg.validation.glue:  # its second home (msk-migrate validate --on glue), in the same security group
            GlueValidationJob(
                self, "validation_glue", cfg, security_group=validation.security_group, bucket_arn=bucket.bucket.arn,
                key_arn=key_arn, secret_arns=list(cfg.secret_arns()), secret_kms_keys=list(cfg.secrets_kms_key_arns),
                target_cluster_arn=msk.cluster_arn, target_topic_arn_prefix=msk.topic_arn_prefix,
                target_group_arn_prefix=msk.group_arn_prefix,
            )

        image_refs = {c: images[c].reference(r.repository_url) for c, r in repos.repos.items()}
        services = Services(
            self,
            "ecs",
            cfg,
            images=image_refs,
            log_groups=logs,
            roles=TaskRoles(
                execution={c: r.arn for c, r in roles.execution.items()},
                connect_task=roles.connect_task.arn,
                operator_task=roles.operator_task.arn,
                cleanup=roles.cleanup.arn if roles.cleanup else None,
            ),
            registry_arns={c: s.arn for c, s in discovery.services.items()},
            security_group_ids={
                "kafka-connect": network.connect.id,
                "prometheus": network.prometheus.id,
                "grafana": network.grafana.id,
            },
            specs=self._service_specs(connect_env, {**connect_secret_env, **creds.connect_secret_env()}, creds,
                                      discovery, msk, grafana_secret_arn),
            serving_cert_secret_env=creds.serving_cert_secret_env(),
            load_balancer=alb,
            substitutions=substitutions,
            # Everything the operator task's commands may reach, from the stack alone (docs/infra.md, operator task).
            operator_env=stack_environment(
                subnets=list(cfg.subnet_ids), security_groups=[network.connect.id], environment=environment_yaml(cfg),
                environment_name=cfg.name, target_bootstrap=placeholder, connect_url=alb.url("kafka-connect", cfg),
                connect_secret_arn=creds.connect_rest.arn, cleanup_role_arn=roles.cleanup.arn if roles.cleanup else None,
            ),
            # the tasks pull their images and read their secrets through the endpoints
            depends_on={c: [*policies, *aws.dependables] for c, policies in roles.policies.items()},
        )
        if cfg.proof.follower:  # validate --follow as a service (docs/follow.md)
            proof = ProofFollower(
                self, "proof", cfg, cluster_arn=services.cluster.arn, image=image_refs["operator"],
                execution_role_arn=roles.execution["operator"].arn, log_group=logs.groups["operator"],
                namespace_id=discovery.namespace.id, prometheus_sg=network.prometheus,
                msk_security_group_id=msk.security_group_id, bucket_arn=bucket.bucket.arn, key_arn=key_arn,
                target_cluster_arn=msk.cluster_arn, target_topic_arn_prefix=msk.topic_arn_prefix,
                target_group_arn_prefix=msk.group_arn_prefix, substitutions=substitutions,
                target_bootstrap_placeholder=placeholder, depends_on=[*roles.policies["operator"], *aws.dependables],
            )
            aws.admit(proof.network.sg, "proof follower")
        add_outputs(
            self,
            cfg,
            discovery=discovery,
            bucket=bucket,
            repos=repos,
            msk=msk,
            services=services,
            network=network,
            grafana_secret_arn=grafana_secret_arn,
            load_balancer=alb,
            credentials=creds,
        )

    def _grafana_admin_secret(self, key_arn: str) -> tuple[str, list[str]]:
        """The Grafana admin password's secret (given, or created empty) and the KMS keys that decrypt it."""
        cfg = self.cfg
        grafana = cfg.monitoring.grafana
        if grafana.admin_secret_arn:
            return grafana.admin_secret_arn, list(cfg.secrets_kms_key_arns)
        # Created empty: there is never a default password. The operator puts the value (runbook).
        created = SecretsmanagerSecret(
            self,
            "grafana_admin",
            name=f"{cfg.resource_prefix}/grafana-admin",
            description=f"Grafana admin password of {cfg.resource_prefix} (JSON key '{grafana.admin_secret_key}'); "
            "set it with put-secret-value before Grafana can start",
            kms_key_id=key_arn,
            recovery_window_in_days=7,
        )
        skip(created, "CKV2_AWS_57", "the operator sets and changes the Grafana admin password "
             "(runbooks/deploy.md); a rotation Lambda would change it behind Grafana's back")
        return created.arn, [key_arn]

    def _service_specs(self, connect_env: dict[str, str], connect_secret_env: dict[str, str], creds, discovery, msk,
                       grafana_secret_arn: str) -> dict[str, ServiceSpec]:
        """What each service's container gets: plain environment, ECS secrets, its certificate's names."""
        cfg = self.cfg
        grafana = cfg.monitoring.grafana
        prometheus_dns = discovery.dns_name("prometheus")
        return {
            "kafka-connect": ServiceSpec(env=connect_env, secret_env=connect_secret_env),
            "prometheus": ServiceSpec(
                env={
                    # Scrape targets: every Connect task's IP behind the Cloud Map A records.
                    "MM2_CONNECT_DNS_NAME": discovery.dns_name("kafka-connect"),
                    "MM2_CONNECT_METRICS_PORT": str(cfg.worker.metrics_port),
                    "MM2_ENVIRONMENT": cfg.name,
                    # the proof follower's Cloud Map name (prometheus.yml's msk-migrate-proof job)
                    **({"MM2_PROOF_DNS_NAME": proof_dns_name(cfg)} if cfg.proof.follower else {}),
                    **broker_scrape_env(self, cfg, msk),
                    **(
                        {"MM2_ALERTMANAGER_TARGETS": ",".join(cfg.monitoring.alertmanager.targets),
                         "MM2_ALERTMANAGER_PATH_PREFIX": cfg.monitoring.alertmanager.path_prefix}
                        if cfg.monitoring.alertmanager else {}
                    ),
                },
                secret_env=creds.prometheus_secret_env(),
                # Grafana reaches Prometheus by its Cloud Map name and verifies it.
                serving_cert_dns=(prometheus_dns,),
            ),
            "grafana": ServiceSpec(
                env={
                    "GF_SECURITY_ADMIN_USER": grafana.admin_user,
                    "GF_SERVER_HTTP_PORT": str(GRAFANA_PORT),
                    "GF_AUTH_ANONYMOUS_ENABLED": "false",
                    "GF_USERS_ALLOW_SIGN_UP": "false",
                    "GF_ANALYTICS_REPORTING_ENABLED": "false",
                    "GF_ANALYTICS_CHECK_FOR_UPDATES": "false",
                    "PROMETHEUS_URL": f"https://{prometheus_dns}:{PROMETHEUS_PORT}",
                    # Behind the HTTPS load balancer: session cookies only over TLS.
                    "GF_SECURITY_COOKIE_SECURE": "true",
                    "GF_SECURITY_COOKIE_SAMESITE": "strict",
                },
                secret_env={
                    "GF_SECURITY_ADMIN_PASSWORD": f"{grafana_secret_arn}:{grafana.admin_secret_key}::",
                    **creds.grafana_secret_env(),
                },
                serving_cert_dns=(),
            ),
        }
