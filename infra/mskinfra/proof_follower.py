"""The proof follower as a service of the stack (``proof.follower: true``): ``msk-migrate validate --follow`` on Fargate.

One task of the operator image, whose entrypoint (python/msk_migrate/aws/operator_entry.py) runs the stack's own
request (``MSK_MIGRATE_STACK_ARGV``) once ECS has said the task was started without any override, in the stack's
subnets and security group (python/msk_migrate/aws/task_view.py). The flow is the stack's too:
``MSK_MIGRATE_CONFIG_YAML`` (a flow file: the clusters, the migration and the worker of this environment, the
target's real bootstrap; secrets only as ARNs), written to ``/tmp`` by the entrypoint and read with ``--config``.

- **Mark**: ``s3://<config bucket>/proof/<migration>/proof-mark.json``; the task role may read and replace objects
  under that prefix only (:mod:`.proof_policy`), and the operator task may read them (``cutover check --in-vpc
  --validation-report s3://…/proof/<migration>/``).
- **Metrics**: ``--metrics-port 9405 --metrics-bind 0.0.0.0`` inside the task's own network namespace (awsvpc); the
  follower's security group admits 9405 from the Prometheus security group only, exactly as the Connect tasks
  admit their JMX agent's port (no load balancer target, no public IP). Cloud Map registers the task as
  ``proof.<namespace>``, the DNS name of Prometheus' ``msk-migrate-proof`` job.
- **One follower, never two**: desired count 1 and deployments that stop the old task before starting the new one
  (minimum healthy 0 %, maximum 100 %): two followers would both write one mark. ECS stops the task with SIGTERM
  and the follower persists its mark on the way out (and after every pass in any case), so a new task resumes
  from it.
"""

from __future__ import annotations

import yaml
from cdktf_cdktf_provider_aws.ecs_service import EcsService
from cdktf_cdktf_provider_aws.ecs_task_definition import EcsTaskDefinition, EcsTaskDefinitionVolume
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.service_discovery_service import (
    ServiceDiscoveryService,
    ServiceDiscoveryServiceDnsConfigDnsRecords,
)
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from msk_migrate.aws.operator_entry import IN_TASK_FLOW
from msk_migrate.aws.operator_stack import stack_environment
from msk_migrate.config.environment import PROOF_DNS_LABEL, PROOF_METRICS_PORT, EnvironmentConfig, proof_key_prefix

from .ecs import WRITABLE_PATHS, hardened, log_config, volume_name
from .iam_policy import trust_policy
from .network import _group, _Rules
from .proof_policy import follower_statements
from .tfjson import tf_json
from .util import construct_id, policy_json

#: The container's name (its writable paths: ecs.WRITABLE_PATHS) and the component whose image, log group and
#: execution role it shares.
CONTAINER = "proof-follower"
IMAGE_COMPONENT = "operator"
#: Seconds ECS waits after SIGTERM before SIGKILL: the follower finishes its pass and persists the mark.
STOP_TIMEOUT = 60


def mark_location(cfg: EnvironmentConfig) -> str:
    """Where the service keeps the mark (and where the gates read it)."""
    return f"s3://{cfg.config_bucket_name}/{proof_key_prefix(cfg.migration.name)}"


def dns_name(cfg: EnvironmentConfig) -> str:
    """``proof.<namespace>``: the follower's task in Cloud Map (Prometheus' scrape job resolves it)."""
    return f"{PROOF_DNS_LABEL}.{cfg.dns_namespace}"


def flow_yaml(cfg: EnvironmentConfig, target_bootstrap_placeholder: str) -> str:
    """The flow file the follower reads (``--config``): this environment's clusters (secrets as ARNs only), its
    migration and worker; the target's bootstrap is the placeholder the stack substitutes with the real one."""
    doc = {
        "source": cfg.source.endpoint().model_dump(mode="json", exclude_defaults=True),
        "target": cfg.target.endpoint(target_bootstrap_placeholder).model_dump(mode="json", exclude_defaults=True),
        "migration": cfg.migration.model_dump(mode="json", exclude_defaults=True),
        "worker": cfg.worker.model_dump(mode="json", exclude_defaults=True),
    }
    return yaml.safe_dump(doc, sort_keys=True)


def follower_argv(cfg: EnvironmentConfig) -> list[str]:
    """The runbook request the entrypoint runs (``msk-migrate`` + these words)."""
    return ["validate", "--follow", "--config", IN_TASK_FLOW, "--mark", mark_location(cfg),
            "--interval", f"{cfg.proof.interval_seconds:g}", "--metrics-port", str(PROOF_METRICS_PORT),
            "--metrics-bind", "0.0.0.0", "--output", "json"]


def follower_container(cfg: EnvironmentConfig, image: str, target_bootstrap_placeholder: str, security_group_id: str) -> dict:
    return hardened({
        "name": CONTAINER,
        "image": image,
        "essential": True,
        "portMappings": [{"name": "metrics", "containerPort": PROOF_METRICS_PORT, "protocol": "tcp"}],
        "environment": [{"name": k, "value": v} for k, v in sorted({
            **stack_environment(subnets=list(cfg.subnet_ids), security_groups=[security_group_id], environment_name=cfg.name,
                                stack_argv=follower_argv(cfg), flow_yaml=flow_yaml(cfg, target_bootstrap_placeholder)),
            "AWS_REGION": cfg.region,
        }.items())],
        "healthCheck": {
            # The metrics endpoint answers once the follower checked both clusters and its mark.
            "command": ["CMD", "/opt/msk-migrate/bin/python", "-c",
                        f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{PROOF_METRICS_PORT}/metrics', timeout=4)"],
            "interval": 30, "timeout": 5, "retries": 3, "startPeriod": 120,
        },
        "stopTimeout": STOP_TIMEOUT,
        "logConfiguration": log_config(cfg, IMAGE_COMPONENT, CONTAINER),
    }, CONTAINER)


class ProofFollowerNetwork(_Rules):
    """The follower's security group: 9405 in from Prometheus only; out to the brokers of both clusters and the schema
    registries (the proof per record reads them); AWS APIs on 443 through :class:`mskinfra.endpoints.AwsApis`."""

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, prometheus: SecurityGroup,
                 msk_security_group_id: str | None) -> None:
        super().__init__(scope, id_)
        self.sg = _group(self, cfg, "proof", "msk-migrate proof follower (validate --follow)")
        self._sg_flow(prometheus, self.sg, PROOF_METRICS_PORT, "Prometheus scrapes the proof follower")
        for port in cfg.source.ports():
            self._egress_to_peers(self.sg, port, cfg.source.network, f"proof follower to source brokers :{port}")
        tport = cfg.target.port
        if msk_security_group_id is not None:
            self._sg_flow(self.sg, ("msk_sg", msk_security_group_id), tport, f"proof follower to target MSK :{tport}")
        else:
            self._egress_to_peers(self.sg, tport, cfg.target.network, f"proof follower to target MSK :{tport}")
            if cfg.target.add_ingress_rules:
                for sg_id in cfg.target.network.security_group_ids:
                    VpcSecurityGroupIngressRule(
                        self, construct_id("target_in", sg_id, tport), security_group_id=sg_id,
                        referenced_security_group_id=self.sg.id, ip_protocol="tcp", from_port=tport, to_port=tport,
                        description=f"{cfg.resource_prefix} proof follower to MSK :{tport}")
        self._egress_to_registries(self.sg, cfg, "proof follower")


class ProofFollower(Construct):
    """The follower's task role, Cloud Map service, security group, task definition and service."""

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, cluster_arn: str, image: str,
                 execution_role_arn: str, log_group, namespace_id: str, prometheus_sg: SecurityGroup,
                 msk_security_group_id: str | None, bucket_arn: str, key_arn: str, target_cluster_arn: str,
                 target_topic_arn_prefix: str, target_group_arn_prefix: str, substitutions: dict[str, str],
                 target_bootstrap_placeholder: str, depends_on: list | None = None) -> None:
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        self.task_role = IamRole(
            self, "task_role", name=f"{p}-proof-follower-task", assume_role_policy=trust_policy(cfg),
            description=f"{p} proof follower: read both clusters, keep the mark under {proof_key_prefix(cfg.migration.name)}",
        )
        self.policy = IamRolePolicy(self, "task_policy", name="proof-follower", role=self.task_role.id, policy=policy_json(
            follower_statements(cfg, bucket_arn=bucket_arn, key_arn=key_arn, target_cluster_arn=target_cluster_arn,
                                target_topic_arn_prefix=target_topic_arn_prefix,
                                target_group_arn_prefix=target_group_arn_prefix)))
        self.registry = ServiceDiscoveryService(
            self, "discovery", name=PROOF_DNS_LABEL, description=f"{p} proof follower task",
            dns_config={"namespace_id": namespace_id, "routing_policy": "MULTIVALUE",
                        "dns_records": [ServiceDiscoveryServiceDnsConfigDnsRecords(ttl=10, type="A")]},
            health_check_custom_config={"failure_threshold": 1}, force_destroy=True,
        )
        self.network = ProofFollowerNetwork(self, "network", cfg, prometheus=prometheus_sg,
                                            msk_security_group_id=msk_security_group_id)
        self.task_definition = EcsTaskDefinition(
            self, "task", family=f"{p}-{CONTAINER}", requires_compatibilities=["FARGATE"], network_mode="awsvpc",
            cpu=str(cfg.proof.cpu), memory=str(cfg.proof.memory), execution_role_arn=execution_role_arn,
            task_role_arn=self.task_role.arn, runtime_platform={"operating_system_family": "LINUX", "cpu_architecture": "X86_64"},
            container_definitions=tf_json([follower_container(cfg, image, target_bootstrap_placeholder, self.network.sg.id)],
                                          substitutions, indent=None),
            volume=[EcsTaskDefinitionVolume(name=volume_name(path)) for path in WRITABLE_PATHS[CONTAINER]],
            depends_on=[log_group],
        )
        self.service = EcsService(
            self, "service", name=f"{p}-{CONTAINER}", cluster=cluster_arn, task_definition=self.task_definition.arn,
            desired_count=1, launch_type="FARGATE", platform_version="LATEST",
            network_configuration={"subnets": cfg.subnet_ids, "security_groups": [self.network.sg.id], "assign_public_ip": False},
            service_registries={"registry_arn": self.registry.arn},
            deployment_circuit_breaker={"enable": True, "rollback": True},
            # never two followers at once: the old task stops (and persists the mark) before the new one starts
            deployment_minimum_healthy_percent=0, deployment_maximum_percent=100,
            enable_execute_command=False, enable_ecs_managed_tags=True, propagate_tags="SERVICE", wait_for_steady_state=False,
            depends_on=[*(depends_on or []), self.policy],
        )
