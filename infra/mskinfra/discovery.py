"""Cloud Map private DNS namespace with one service per component.

ECS registers each task's IP as an A record: ``connect.<namespace>`` resolves to every Connect
worker (Prometheus discovers its scrape targets through it), ``prometheus.<namespace>`` and
``grafana.<namespace>`` to their single task.
"""

from __future__ import annotations

from cdktf_cdktf_provider_aws.service_discovery_private_dns_namespace import ServiceDiscoveryPrivateDnsNamespace
from cdktf_cdktf_provider_aws.service_discovery_service import (
    ServiceDiscoveryService,
    ServiceDiscoveryServiceDnsConfigDnsRecords,
)
from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig

#: component -> Cloud Map service (DNS label)
SERVICE_NAMES = {"kafka-connect": "connect", "prometheus": "prometheus", "grafana": "grafana"}


class Discovery(Construct):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig) -> None:
        super().__init__(scope, id_)
        self.namespace_name = cfg.dns_namespace
        self.namespace = ServiceDiscoveryPrivateDnsNamespace(
            self,
            "namespace",
            name=cfg.dns_namespace,
            vpc=cfg.vpc_id,
            description=f"{cfg.resource_prefix}: Connect, Prometheus and Grafana",
        )
        self.services: dict[str, ServiceDiscoveryService] = {}
        for component, label in SERVICE_NAMES.items():
            self.services[component] = ServiceDiscoveryService(
                self,
                label,
                name=label,
                description=f"{cfg.resource_prefix} {component} tasks",
                dns_config={
                    "namespace_id": self.namespace.id,
                    "routing_policy": "MULTIVALUE",
                    "dns_records": [ServiceDiscoveryServiceDnsConfigDnsRecords(ttl=10, type="A")],
                },
                health_check_custom_config={"failure_threshold": 1},
                force_destroy=True,
            )

    def dns_name(self, component: str) -> str:
        return f"{SERVICE_NAMES[component]}.{self.namespace_name}"
