"""How the tasks reach AWS's APIs on 443: through VPC endpoints, never the internet unless the environment says why.

``network.aws_endpoints: create`` (the default) makes, in the environment's VPC:

- one interface endpoint per service in :data:`INTERFACE_SERVICES` (private DNS on, so the SDKs' regional names
  resolve to it), in ``subnet_ids``, with its own security group ``<prefix>-endpoints`` that admits 443 from the task
  security groups and nothing else, and no egress at all;
- the S3 gateway endpoint on ``network.route_table_ids`` (or, when empty, the route table associated with each of
  ``subnet_ids``, looked up at plan time); the tasks reach its prefix list (``prefix_list_id``) on 443.

Each task group is admitted with :meth:`AwsApis.admit`: egress 443 to the endpoints' group (whose ingress names it)
and to the S3 prefix list, nothing else on 443. With ``aws_endpoints: existing`` the VPC has its own endpoints and
``network.https_egress`` names them; the stack makes no endpoint and gives each admitted group egress 443 to those
peers. A CIDR there that reaches the internet is refused by the environment model unless
``network.allow_internet_https`` is set with its reason.

The endpoints serve the whole VPC (private DNS answers for every workload in it): their policies admit this account's
principals only (and, on S3, ECR's image-layer bucket, which ECR's presigned URLs read), so a task cannot use them
with another account's credentials to carry data out. A VPC that already has an endpoint of one of these services
with private DNS, or an S3 gateway endpoint on these route tables, refuses a second one: use ``existing`` there.
"""

from __future__ import annotations

import json

from cdktf_cdktf_provider_aws.data_aws_route_table import DataAwsRouteTable
from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_endpoint import VpcEndpoint
from cdktf_cdktf_provider_aws.vpc_security_group_egress_rule import VpcSecurityGroupEgressRule
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

from .network import _group, _Rules
from .util import construct_id

HTTPS = 443

#: The interface endpoints the stack makes, and who calls each (python/msk_migrate, infra/mskinfra/iam*.py).
#: Not made: ``kms`` (every decrypt of the tasks goes through S3 or Secrets Manager, kms:ViaService: no task calls
#: KMS itself) and ``emr-serverless`` (``validate --on emr-serverless`` submits from the operator's machine; no task
#: role may call EMR Serverless).
INTERFACE_SERVICES: dict[str, str] = {
    "ecr.api": "image pulls: ECR's API (every task's execution role)",
    "ecr.dkr": "image pulls: the registry itself (every task)",
    "logs": "the awslogs driver of every task",
    "secretsmanager": "the secrets ECS injects, and those the operator task, proof follower and validation job read",
    "sts": "the operator task: its identity for the ledger, assuming the cleanup role",
    "ecs": "the operator task describes its own task",
    "ec2": "the operator task describes its network interfaces",
}


def service_name(cfg: EnvironmentConfig, service: str) -> str:
    return f"com.amazonaws.{cfg.region}.{service}"


def ecr_layer_bucket_arn(cfg: EnvironmentConfig) -> str:
    """ECR's own bucket of image layers in the region (AWS documents it for S3 gateway endpoint policies)."""
    return f"arn:{cfg.partition}:s3:::prod-{cfg.region}-starport-layer-bucket/*"


def endpoint_policy(cfg: EnvironmentConfig, *, s3: bool) -> str:
    """Any call by this account's principals; on S3 also ECR's image layers (fetched with ECR's presigned URLs).

    Plain JSON, not ``util.policy_json``: an endpoint policy's ``Action: *`` is the endpoint's scope, which
    the identity-policy check of ``iam:PassRole`` there does not apply to."""
    statements: list[dict] = [{
        "Sid": "ThisAccountsPrincipals", "Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*",
        "Condition": {"StringEquals": {"aws:PrincipalAccount": cfg.account_id}},
    }]
    if s3:
        statements.append({"Sid": "EcrImageLayers", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                           "Resource": ecr_layer_bucket_arn(cfg)})
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


class AwsApis(_Rules):
    """The VPC endpoints of AWS's APIs (``create``) and every task group's 443 egress to them (or to ``existing`` ones)."""

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig) -> None:
        super().__init__(scope, id_)
        self.cfg = cfg
        self.security_group: SecurityGroup | None = None
        self.interface: dict[str, VpcEndpoint] = {}
        self.s3: VpcEndpoint | None = None
        if cfg.network.aws_endpoints == "create":
            self._create()

    @property
    def dependables(self) -> list[VpcEndpoint]:
        """What a service waits for before its tasks start (they pull images and read secrets through these)."""
        return [*self.interface.values(), *([self.s3] if self.s3 is not None else [])]

    def _create(self) -> None:
        cfg, p = self.cfg, self.cfg.resource_prefix
        self.security_group = _group(self, cfg, "endpoints", "msk-migrate VPC endpoints of AWS APIs (443 from the tasks)")
        for service in INTERFACE_SERVICES:
            self.interface[service] = VpcEndpoint(
                self, construct_id("endpoint", service), vpc_id=cfg.vpc_id, service_name=service_name(cfg, service),
                vpc_endpoint_type="Interface", private_dns_enabled=True, subnet_ids=list(cfg.subnet_ids),
                security_group_ids=[self.security_group.id], policy=endpoint_policy(cfg, s3=False),
                tags={"Name": f"{p}-{service}"},
            )
        route_tables = list(cfg.network.route_table_ids) or [
            DataAwsRouteTable(self, construct_id("route_table", subnet), subnet_id=subnet).route_table_id
            for subnet in cfg.subnet_ids
        ]
        self.s3 = VpcEndpoint(
            self, "endpoint_s3", vpc_id=cfg.vpc_id, service_name=service_name(cfg, "s3"), vpc_endpoint_type="Gateway",
            route_table_ids=route_tables, policy=endpoint_policy(cfg, s3=True), tags={"Name": f"{p}-s3"},
        )

    def admit(self, sg: SecurityGroup, who: str) -> None:
        """``sg`` may reach AWS's APIs on 443: the endpoints' group and S3's prefix list, or ``https_egress``."""
        if self.security_group is None or self.s3 is None:
            egress = self.cfg.network.https_egress
            if egress is None:  # the environment model requires it with aws_endpoints: existing
                raise ValueError("network.https_egress is required with network.aws_endpoints: existing")
            self._egress_to_peers(sg, HTTPS, egress, f"{who} to AWS APIs (the VPC's endpoints)")
            return
        self._sg_flow(sg, self.security_group, HTTPS, f"{who} to AWS APIs (VPC interface endpoints)")
        VpcSecurityGroupEgressRule(
            self, construct_id(sg.node.id, "s3", HTTPS), security_group_id=sg.id, prefix_list_id=self.s3.prefix_list_id,
            ip_protocol="tcp", from_port=HTTPS, to_port=HTTPS, description=f"{who} to S3 (gateway endpoint)",
        )
