"""The operator endpoints: one internal Application Load Balancer with HTTPS listeners (ACM certificate)
in front of Grafana, Prometheus and the Connect REST API.

Why a load balancer (and not each service's own TLS): one certificate managed by ACM (renewed by AWS,
the private key never leaves ACM, nothing to mount into three different images), one TLS policy for
all three (``operator_tls.ssl_policy``, TLS 1.2+), one security group that operators' networks reach,
and stable addresses while ECS replaces tasks. docs/infra.md ("Operator endpoints") gives the full
reasoning and what stays inside the VPC.

====================  ======================  ===========================  ==============================
operator reaches      listener (HTTPS)        forwards to (inside VPC)     authentication
====================  ======================  ===========================  ==============================
Grafana               443                     Grafana :3000 (HTTPS)        Grafana login (admin secret)
Prometheus            9090                    Prometheus :9090 (HTTPS)     basic auth (web config, secret)
Connect REST          worker.rest_port        Connect :rest_port (HTTPS)   basic auth (REST extension)
====================  ======================  ===========================  ==============================

Every hop is TLS: the load balancer terminates the ACM certificate and opens a new TLS connection to the
task, whose certificate the task made at start from the environment's internal CA (the seed in
``<prefix>/internal-ca``; images/kafka-connect/serving-cert.sh). The load balancer does not verify target
certificates (AWS documents this); the clients inside the VPC do: Connect workers calling each other and
Grafana calling Prometheus trust only that CA.

The load balancer is ``internal`` (private subnets, no public address) and its security group admits
only ``operator_access`` on the three listener ports; the tasks' security groups admit the UI ports
only from the load balancer (and their in-VPC peers, see :mod:`.network`). There is no plain-HTTP
listener, not even a redirect.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdktf_cdktf_provider_aws.lb import Lb, LbAccessLogs
from cdktf_cdktf_provider_aws.lb_listener import LbListener, LbListenerDefaultAction
from cdktf_cdktf_provider_aws.lb_target_group import LbTargetGroup, LbTargetGroupHealthCheck
from cdktf_cdktf_provider_aws.route53_record import Route53Record, Route53RecordAlias
from cdktf_cdktf_provider_aws.route53_zone import Route53Zone, Route53ZoneVpc
from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_security_group_egress_rule import VpcSecurityGroupEgressRule
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from msk_migrate.config.environment import GRAFANA_PORT, PROMETHEUS_PORT, EnvironmentConfig

from .checkov import skip
from .config_bucket import ALB_LOG_PREFIX, AccessLogBucket
from .util import cidr_args, construct_id

#: Listener port operators use for Grafana (HTTPS default port).
GRAFANA_LISTENER_PORT = 443


@dataclass(frozen=True)
class Endpoint:
    component: str  #: ECS component (container name)
    listener_port: int  #: HTTPS port on the load balancer
    container_port: int  #: HTTPS port of the task inside the VPC
    health_path: str
    health_codes: str  #: 401 = up and refusing anonymous requests (basic-auth endpoints)


def endpoints(cfg: EnvironmentConfig) -> list[Endpoint]:
    rest = cfg.worker.rest_port
    return [
        Endpoint("grafana", GRAFANA_LISTENER_PORT, GRAFANA_PORT, "/api/health", "200"),
        Endpoint("prometheus", PROMETHEUS_PORT, PROMETHEUS_PORT, "/-/healthy", "401"),
        Endpoint("kafka-connect", rest, rest, "/", "401"),
    ]


class OperatorLoadBalancer(Construct):
    """Internal ALB + HTTPS listeners + IP target groups; :attr:`target_groups` feed the ECS services."""

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, task_security_groups: dict[str, SecurityGroup],
                 access_logs: AccessLogBucket) -> None:
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        self.security_group = SecurityGroup(
            self,
            "sg",
            name=f"{p}-operator-alb",
            description="msk-migrate operator load balancer (HTTPS to Grafana, Prometheus, Connect REST)",
            vpc_id=cfg.vpc_id,
            revoke_rules_on_delete=True,
            tags={"Name": f"{p}-operator-alb"},
        )
        self.lb = Lb(
            self,
            "alb",
            name=f"{p}-ops"[:32].rstrip("-"),  # ALB names: at most 32 characters, no trailing hyphen
            internal=True,
            load_balancer_type="application",
            subnets=cfg.subnet_ids,
            security_groups=[self.security_group.id],
            drop_invalid_header_fields=True,
            desync_mitigation_mode="strictest",
            enable_deletion_protection=False,
            idle_timeout=120,
            # Who called which endpoint, when and from where, beside the services' own authenticated logs.
            access_logs=LbAccessLogs(bucket=access_logs.bucket.id, prefix=ALB_LOG_PREFIX, enabled=True),
            depends_on=access_logs.ready,
        )
        skip(self.lb, "CKV_AWS_150", "deletion protection would block `cdktf destroy` of a migration stack; the load "
             "balancer holds no data and is recreated identically")
        self.target_groups: dict[str, LbTargetGroup] = {}
        self.listeners: dict[str, LbListener] = {}
        short = {"grafana": "graf", "prometheus": "prom", "kafka-connect": "conn"}
        for ep in endpoints(cfg):
            cid = ep.component.replace("-", "_")
            tg = LbTargetGroup(
                self,
                f"{cid}_tg",
                name=f"{p[:26]}-{short[ep.component]}",
                target_type="ip",
                # Re-encrypted to the task: every service serves HTTPS with a certificate it makes at start
                # (internal CA, images/kafka-connect/serving-cert.sh); ALB targets need no trusted chain.
                protocol="HTTPS",
                port=ep.container_port,
                vpc_id=cfg.vpc_id,
                deregistration_delay="30",
                health_check=LbTargetGroupHealthCheck(
                    enabled=True,
                    protocol="HTTPS",
                    path=ep.health_path,
                    matcher=ep.health_codes,
                    interval=30,
                    healthy_threshold=2,
                    unhealthy_threshold=3,
                ),
            )
            self.target_groups[ep.component] = tg
            self.listeners[ep.component] = LbListener(
                self,
                f"{cid}_https",
                load_balancer_arn=self.lb.arn,
                port=ep.listener_port,
                protocol="HTTPS",
                ssl_policy=cfg.operator_tls.ssl_policy,
                certificate_arn=cfg.operator_tls.certificate_arn,
                default_action=[LbListenerDefaultAction(type="forward", target_group_arn=tg.arn)],
            )
            # operators -> load balancer (HTTPS), load balancer -> task (inside the VPC)
            for label, args in _peer_args(cfg):
                VpcSecurityGroupIngressRule(
                    self, construct_id("alb_in", label, ep.listener_port), security_group_id=self.security_group.id,
                    ip_protocol="tcp", from_port=ep.listener_port, to_port=ep.listener_port,
                    description=f"operators to {ep.component} (HTTPS)", **args,
                )
            task_sg = task_security_groups[ep.component]
            if ep.component == "kafka-connect":
                # The operator task (`msk-migrate … --in-vpc`, in the Connect security group) reaches Connect REST
                # the way operators do: through this listener, by the certificate's name.
                VpcSecurityGroupIngressRule(
                    self, "alb_in_operator_task", security_group_id=self.security_group.id, referenced_security_group_id=task_sg.id,
                    ip_protocol="tcp", from_port=ep.listener_port, to_port=ep.listener_port,
                    description="operator task (--in-vpc) to Connect REST (HTTPS)",
                )
                VpcSecurityGroupEgressRule(
                    self, "operator_task_to_alb", security_group_id=task_sg.id, referenced_security_group_id=self.security_group.id,
                    ip_protocol="tcp", from_port=ep.listener_port, to_port=ep.listener_port,
                    description="operator task (--in-vpc) to Connect REST on the operator load balancer",
                )
            VpcSecurityGroupEgressRule(
                self, f"alb_to_{cid}", security_group_id=self.security_group.id, referenced_security_group_id=task_sg.id,
                ip_protocol="tcp", from_port=ep.container_port, to_port=ep.container_port,
                description=f"operator load balancer to {ep.component}",
            )
            VpcSecurityGroupIngressRule(
                self, f"{cid}_from_alb", security_group_id=task_sg.id, referenced_security_group_id=self.security_group.id,
                ip_protocol="tcp", from_port=ep.container_port, to_port=ep.container_port,
                description=f"operator load balancer to {ep.component}",
            )

        # The certificate's name -> the load balancer (private zone given or created), so the URLs work as printed.
        tls = cfg.operator_tls
        self.record: Route53Record | None = None
        if tls.dns_name:
            zone_id = tls.hosted_zone_id
            if not zone_id:
                zone = Route53Zone(
                    self, "zone", name=tls.hosted_zone_name, comment=f"{p}: operator endpoints (private)",
                    vpc=[Route53ZoneVpc(vpc_id=cfg.vpc_id)], force_destroy=False,
                )
                # checkov's DNSSEC and query-log checks (CKV2_AWS_38/39) look at public zones only: no skip.
                zone_id = zone.zone_id
            self.record = Route53Record(
                self, "dns", zone_id=zone_id, name=tls.dns_name, type="A",
                alias=Route53RecordAlias(name=self.lb.dns_name, zone_id=self.lb.zone_id, evaluate_target_health=False),
            )

    def host(self, cfg: EnvironmentConfig) -> str:
        """What operators type: the certificate's DNS name (the record above), else the load balancer's own name."""
        return cfg.operator_tls.dns_name or self.lb.dns_name

    def url(self, component: str, cfg: EnvironmentConfig) -> str:
        port = {ep.component: ep.listener_port for ep in endpoints(cfg)}[component]
        suffix = "" if port == 443 else f":{port}"
        return f"https://{self.host(cfg)}{suffix}"


def _peer_args(cfg: EnvironmentConfig) -> list[tuple[str, dict[str, str]]]:
    peers = cfg.operator_access
    out = [(c, cidr_args(c)) for c in peers.cidrs]
    out += [(pl, {"prefix_list_id": pl}) for pl in peers.prefix_list_ids]
    out += [(sg, {"referenced_security_group_id": sg}) for sg in peers.security_group_ids]
    return out
