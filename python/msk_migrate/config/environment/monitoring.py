"""Monitoring of the migration: Cloud Map namespace, Prometheus, Grafana, the operators' Alertmanager."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..identifiers import DNS_NAME
from .network import Peers
from .services import GrafanaService, TaskSize

#: Fixed listener ports of the monitoring containers (the images listen there).
PROMETHEUS_PORT = 9090
GRAFANA_PORT = 3000


class AlertmanagerRoute(BaseModel):
    """Where Prometheus sends firing alerts (your existing Alertmanager: it owns paging and routing)."""

    model_config = ConfigDict(extra="forbid")

    targets: list[str] = Field(description="Alertmanager host:port list, e.g. alertmanager.ops.internal:9093.")
    network: Peers = Field(description="The Alertmanagers' CIDRs / prefix lists / security groups (Prometheus egress).")
    path_prefix: str = Field("/", description="Alertmanager API path prefix.")

    @field_validator("targets")
    @classmethod
    def _targets(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("give at least one Alertmanager host:port")
        for t in v:
            host, _, port = t.rpartition(":")
            if not host or (not DNS_NAME.match(host) and not re.fullmatch(r"[0-9.]+", host)) or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{t!r} is not host:port (e.g. alertmanager.ops.internal:9093)")
        return v

    @field_validator("network")
    @classmethod
    def _net(cls, v: Peers) -> Peers:
        if v.is_empty():
            raise ValueError("give the Alertmanagers' cidrs, prefix_list_ids or security_group_ids")
        return v

    @field_validator("path_prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if not re.fullmatch(r"/[A-Za-z0-9_./-]*", v):
            raise ValueError(f"path_prefix {v!r} must be a URL path starting with /")
        return v

    def ports(self) -> list[int]:
        return sorted({int(t.rpartition(":")[2]) for t in self.targets})


class MonitoringConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    alertmanager: AlertmanagerRoute | None = Field(
        None,
        description="Send alerts to an existing Alertmanager (paging). Absent = alerts are visible in "
        "Prometheus and Grafana only, and page nobody.",
    )

    namespace: str | None = Field(None, description="Cloud Map private DNS namespace. Default: <prefix>.internal.")
    prometheus: TaskSize = Field(default_factory=TaskSize, description="Prometheus Fargate size (`monitoring.prometheus`).")
    grafana: GrafanaService = Field(default_factory=GrafanaService, description="Grafana Fargate size and admin login (`monitoring.grafana`).")

    @field_validator("namespace")
    @classmethod
    def _ns(cls, v: str | None) -> str | None:
        if v is not None and not DNS_NAME.match(v):
            raise ValueError(f"namespace {v!r} is not a DNS name (e.g. mm2.example.internal)")
        return v
