"""Security groups with exactly the flows that exist (no 0.0.0.0/0 ingress anywhere, and no egress to it by default).

Flows (ports from the environment):

====================  ==========================  ===========================================
from                  to                          port
====================  ==========================  ===========================================
Connect               source brokers              every port in source.bootstrap_servers
Connect               target brokers              MSK port of target.auth.mode (9092/9094/9096/9098)
Connect               Connect (other workers)     worker.rest_port (request forwarding to the leader)
Prometheus            Connect                     worker.metrics_port (JMX agent /metrics)
Prometheus            created MSK brokers         11001 (JMX exporter), 11002 (node exporter)
Grafana               Prometheus                  9090
operators             operator ALB (.alb)         HTTPS rest_port, 9090, 443 (ALB to tasks: .alb)
operator task         operator ALB (.alb)         rest_port (Connect REST through the load balancer)
operator task         schema registries           each registry URL's port (schema_registry.*_network)
MSK clients (opt.)    created MSK brokers         9098 (+9096 with SCRAM)
every task            AWS APIs (.endpoints)       443 to the VPC endpoints' group + S3 prefix list,
                                                  or network.https_egress (aws_endpoints: existing)
====================  ==========================  ===========================================

The operator task runs in the Connect security group, so Connect's group carries its flows too. The AWS API
flows of every task group (Connect, Prometheus, Grafana, the proof follower, the validation job) are made by
:class:`mskinfra.endpoints.AwsApis`, beside the endpoints they reach.

Every rule is its own ``aws_vpc_security_group_{ingress,egress}_rule``; the groups have no inline
rules, so Terraform also removes AWS's default allow-all egress rule when it creates them.

A created cluster's security group and the migrated clients' rules (:class:`TargetNetwork`) live in
the long-lived ``target-<env>`` stack; the migration's own flows to the brokers (Connect, Prometheus)
live in ``migration-<env>`` and go away with it.
"""

from __future__ import annotations

from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_security_group_egress_rule import VpcSecurityGroupEgressRule
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from msk_migrate.config.auth import MSK_PORTS
from msk_migrate.config.environment import PROMETHEUS_PORT, EnvironmentConfig, HttpsEgress, Peers
from msk_migrate.config.schema_registry import RegistryNetwork
from msk_migrate.errors import UsageError

from .util import cidr_args, construct_id

#: MSK open monitoring: Prometheus JMX exporter and node exporter ports on every broker.
MSK_OPEN_MONITORING_PORTS = {11001: "JMX exporter", 11002: "node exporter"}


def msk_client_ports(cfg: EnvironmentConfig) -> list[int]:
    """Ports of a created cluster the migrated clients reach: IAM 9098 (+ SCRAM 9096)."""
    return sorted({MSK_PORTS["iam"]} | ({MSK_PORTS["scram"]} if cfg.target.create.scram else set()))


def _group(scope: Construct, cfg: EnvironmentConfig, name: str, description: str) -> SecurityGroup:
    p = cfg.resource_prefix
    return SecurityGroup(
        scope,
        f"{name}_sg",
        name=f"{p}-{name}",
        description=description,
        vpc_id=cfg.vpc_id,
        revoke_rules_on_delete=True,
        tags={"Name": f"{p}-{name}"},
    )


class _Rules(Construct):
    """Rule helpers shared by both stacks' network constructs."""

    def _sg_flow(self, src: SecurityGroup, dst: SecurityGroup | tuple[str, str], port: int, description: str) -> None:
        """src -> dst on port: egress on src, ingress on dst, each referencing the other group.

        ``dst`` may be ``(construct name, security group id)`` for a group of another stack.
        """
        dst_name, dst_id = dst if isinstance(dst, tuple) else (dst.node.id, dst.id)
        name = construct_id(src.node.id, dst_name, port)
        VpcSecurityGroupEgressRule(
            self, f"{name}_out", security_group_id=src.id, referenced_security_group_id=dst_id,
            ip_protocol="tcp", from_port=port, to_port=port, description=description,
        )
        VpcSecurityGroupIngressRule(
            self, f"{name}_in", security_group_id=dst_id, referenced_security_group_id=src.id,
            ip_protocol="tcp", from_port=port, to_port=port, description=description,
        )

    def _peer_args(self, peers: Peers | HttpsEgress | RegistryNetwork) -> list[tuple[str, dict[str, str]]]:
        out = [(c, cidr_args(c)) for c in peers.cidrs]
        out += [(pl, {"prefix_list_id": pl}) for pl in peers.prefix_list_ids]
        out += [(sg, {"referenced_security_group_id": sg}) for sg in peers.security_group_ids]
        return out

    def _ingress_from_peers(self, sg: SecurityGroup, port: int, peers: Peers, description: str) -> None:
        for label, args in self._peer_args(peers):
            VpcSecurityGroupIngressRule(
                self, construct_id(sg.node.id, "in", label, port), security_group_id=sg.id,
                ip_protocol="tcp", from_port=port, to_port=port, description=description, **args,
            )

    def _egress_to_peers(self, sg: SecurityGroup, port: int, peers: Peers | HttpsEgress | RegistryNetwork, description: str) -> None:
        for label, args in self._peer_args(peers):
            VpcSecurityGroupEgressRule(
                self, construct_id(sg.node.id, "out", label, port), security_group_id=sg.id,
                ip_protocol="tcp", from_port=port, to_port=port, description=description, **args,
            )

    def _egress_to_registries(self, sg: SecurityGroup, cfg: EnvironmentConfig, who: str) -> None:
        """``sg`` -> each schema registry of the environment, on its URL's port (nothing without a ``schema_registry``)."""
        done: set[tuple[str, int]] = set()
        if cfg.network.https_egress is not None:  # already reached on 443 (AwsApis.admit): AWS refuses a duplicate rule
            done |= {(label, 443) for label, _ in self._peer_args(cfg.network.https_egress)}
        for role, port, peers in registry_flows(cfg):
            for label, args in self._peer_args(peers):
                if (label, port) in done:  # both registries behind one peer and port: one rule
                    continue
                done.add((label, port))
                VpcSecurityGroupEgressRule(
                    self, construct_id(sg.node.id, "registry", label, port), security_group_id=sg.id,
                    ip_protocol="tcp", from_port=port, to_port=port, description=f"{who} to the {role} schema registry :{port}",
                    **args,
                )


def registry_flows(cfg: EnvironmentConfig) -> list[tuple[str, int, RegistryNetwork]]:
    """(role, port, peers) of each schema registry the tasks reach; an environment's registry without its
    ``*_network`` is refused (the tasks would have no route to it)."""
    regs = cfg.schema_registry
    if regs is None:
        return []
    out = []
    for role in ("source", "target"):
        peers = regs.source_network if role == "source" else regs.target_network
        if peers is None:
            raise UsageError(
                f"{cfg.name}.yaml: schema_registry.{role}_network",
                f"the tasks reach the {role} registry ({getattr(regs, role)}) only where this says, and it is not set",
                "give its cidrs, prefix_list_ids or security_group_ids",
            )
        out.append((role, regs.port(role), peers))
    return out


class TargetNetwork(_Rules):
    """A created cluster's broker security group and the migrated clients' access (``target-<env>``)."""

    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig) -> None:
        super().__init__(scope, id_)
        self.msk = _group(self, cfg, "msk", "msk-migrate target MSK brokers")
        for port in msk_client_ports(cfg):
            self._ingress_from_peers(self.msk, port, cfg.target.create.client_access, f"migrated clients to MSK :{port}")


class Network(_Rules):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, msk_security_group_id: str | None) -> None:
        super().__init__(scope, id_)
        self.cfg = cfg
        p = cfg.resource_prefix

        def group(name: str, description: str) -> SecurityGroup:
            return _group(self, cfg, name, description)

        self.connect = group("connect", "msk-migrate Kafka Connect (MirrorMaker 2) workers")
        self.prometheus = group("prometheus", "msk-migrate Prometheus")
        self.grafana = group("grafana", "msk-migrate Grafana")

        rest, metrics = cfg.worker.rest_port, cfg.worker.metrics_port

        # Connect workers forward REST requests to the group leader.
        self._sg_flow(self.connect, self.connect, rest, "Connect workers to each other (REST forwarding)")
        # Monitoring.
        self._sg_flow(self.prometheus, self.connect, metrics, "Prometheus scrapes the Connect JMX agent")
        self._sg_flow(self.grafana, self.prometheus, PROMETHEUS_PORT, "Grafana queries Prometheus")
        # Operators reach the UIs only through the HTTPS load balancer (.alb adds those rules).
        # Connect -> source brokers (the source's own firewall is managed by its owners).
        for port in cfg.source.ports():
            self._egress_to_peers(self.connect, port, cfg.source.network, f"Connect to source brokers :{port}")
        # Connect -> target brokers.
        tport = cfg.target.port
        if msk_security_group_id is not None:
            msk = ("msk_sg", msk_security_group_id)  # kept by target-<env>
            self._sg_flow(self.connect, msk, tport, f"Connect to target MSK :{tport} ({cfg.target.auth.mode})")
            for port, what in MSK_OPEN_MONITORING_PORTS.items():
                self._sg_flow(self.prometheus, msk, port, f"Prometheus scrapes MSK open monitoring ({what})")
        else:
            peers = cfg.target.network
            self._egress_to_peers(self.connect, tport, peers, f"Connect to target MSK :{tport}")
            if cfg.target.add_ingress_rules:
                for sg_id in peers.security_group_ids:
                    VpcSecurityGroupIngressRule(
                        self,
                        construct_id("target_in", sg_id, tport),
                        security_group_id=sg_id,
                        referenced_security_group_id=self.connect.id,
                        ip_protocol="tcp",
                        from_port=tport,
                        to_port=tport,
                        description=f"{p} Connect to MSK :{tport}",
                    )
        # Prometheus -> the operators' Alertmanager (paging), when configured.
        am = cfg.monitoring.alertmanager
        if am:
            for port in am.ports():
                self._egress_to_peers(self.prometheus, port, am.network, f"Prometheus to Alertmanager :{port}")
        # The operator task (Connect's group) reads and writes the schema registries (schemas, preflight, validate).
        self._egress_to_registries(self.connect, cfg, "operator task")
        # HTTPS to AWS APIs: mskinfra.endpoints.AwsApis admits each task group.
