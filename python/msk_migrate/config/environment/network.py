"""Network peers of an environment: who reaches what (operators, brokers, AWS APIs)."""

from __future__ import annotations

import ipaddress
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..identifiers import PREFIX_LIST_ID, SECURITY_GROUP_ID, check_ids
from ._fields import field_error

#: Widest operator CIDR accepted without ``operator_access.allow_wide_cidrs: true`` (prefix length).
OPERATOR_CIDR_MIN_PREFIX = {4: 16, 6: 48}


class _PeerIds(BaseModel):
    """The id lists every peer set shares: prefix lists and security groups, each checked once here."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("prefix_list_ids", check_fields=False)
    @classmethod
    def _pls(cls, v: list[str]) -> list[str]:
        return check_ids(v, PREFIX_LIST_ID, "prefix list ID", "pl-0a1b2c3d4e5f60718")

    @field_validator("security_group_ids", check_fields=False)
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        return check_ids(v, SECURITY_GROUP_ID, "security group ID", "sg-0a1b2c3d4e5f60718")

    @staticmethod
    def parse_cidr(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        """One CIDR block (host bits zero), or ValueError naming it and how to write one."""
        try:
            return ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            raise ValueError(f"{cidr!r} is not a CIDR block ({exc}); write it like 10.20.0.0/16") from None

    def is_empty(self) -> bool:
        return not (getattr(self, "cidrs", None) or getattr(self, "prefix_list_ids", None) or getattr(self, "security_group_ids", None))


class Peers(_PeerIds):
    """Network peers: CIDR blocks, managed prefix lists and/or security groups.

    ``0.0.0.0/0`` and ``::/0`` are refused: every flow of this stack has a known peer.
    """

    model_config = ConfigDict(extra="forbid")

    cidrs: list[str] = Field(default_factory=list, description="IPv4/IPv6 CIDR blocks, e.g. 10.20.0.0/16.")
    prefix_list_ids: list[str] = Field(default_factory=list, description="Managed prefix list IDs (pl-...).")
    security_group_ids: list[str] = Field(default_factory=list, description="Security group IDs (sg-...) in this VPC or a peered one.")

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            if cls.parse_cidr(cidr).prefixlen == 0:
                raise ValueError(
                    f"{cidr} opens the flow to the whole internet; give the operators' or brokers' own CIDR, "
                    "a prefix list or a security group"
                )
        if len(set(v)) != len(v):
            raise ValueError("duplicate CIDR entries; list each once")
        return v


class OperatorAccess(Peers):
    """Who may open the Connect REST API, Prometheus and Grafana (VPN, bastion, CI runners).

    CIDRs wider than /16 (IPv4) or /48 (IPv6) are refused unless ``allow_wide_cidrs`` is set.
    """

    allow_wide_cidrs: bool = Field(
        False, description="Accept operator CIDRs wider than /16 (IPv4) or /48 (IPv6); /0 is refused regardless."
    )

    @model_validator(mode="after")
    def _some(self) -> OperatorAccess:
        if self.is_empty():
            raise ValueError("give at least one of cidrs, prefix_list_ids, security_group_ids (the operators' network)")
        if not self.allow_wide_cidrs:
            for cidr in self.cidrs:
                net = ipaddress.ip_network(cidr, strict=True)
                bound = OPERATOR_CIDR_MIN_PREFIX[net.version]
                if net.prefixlen < bound:
                    raise field_error(
                        "OperatorAccess", ("cidrs",), cidr,
                        f"{cidr} is wider than /{bound} ({net.num_addresses:,} addresses may reach Connect, Prometheus and "
                        f"Grafana); give the VPN's own range, or set operator_access.allow_wide_cidrs: true",
                    )
        return self


class HttpsEgress(_PeerIds):
    """Where tasks reach AWS APIs on 443 (ECR, CloudWatch Logs, Secrets Manager, S3, STS).

    Default ``0.0.0.0/0`` = through a NAT gateway. With VPC interface endpoints, give the VPC CIDR (or
    the endpoints' security group) plus the S3 gateway endpoint's prefix list instead.
    """

    model_config = ConfigDict(extra="forbid")

    cidrs: list[str] = Field(default_factory=lambda: ["0.0.0.0/0"], description="CIDRs reachable on 443.")
    prefix_list_ids: list[str] = Field(default_factory=list, description="Prefix lists reachable on 443 (e.g. S3 gateway endpoint).")
    security_group_ids: list[str] = Field(default_factory=list, description="Security groups reachable on 443 (e.g. VPC endpoints).")

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            cls.parse_cidr(cidr)
        return v

    @model_validator(mode="after")
    def _some(self) -> HttpsEgress:
        if self.is_empty():
            raise ValueError("tasks need HTTPS to ECR, CloudWatch Logs and Secrets Manager; give a CIDR, prefix list or security group")
        return self


class NetworkConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    https_egress: HttpsEgress = Field(default_factory=HttpsEgress, description="Where tasks reach AWS APIs on 443 (`network.https_egress`).")


_ACM_ARN = re.compile(r"^arn:aws[a-z-]*:acm:([a-z0-9-]+):(\d{12}):certificate/[A-Za-z0-9-]+$")
#: TLS policies the operator load balancer may use (TLS 1.2+ only; the first is the default).
ALB_TLS_POLICIES = ("ELBSecurityPolicy-TLS13-1-2-2021-06", "ELBSecurityPolicy-TLS13-1-3-2021-06",
                    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06", "ELBSecurityPolicy-FS-1-2-Res-2020-10")


def acm_certificate_region(arn: str) -> str:
    """The region of an ACM certificate ARN (validated by :class:`OperatorTls`)."""
    m = _ACM_ARN.match(arn)
    if not m:
        raise ValueError(f"{arn!r} is not an ACM certificate ARN")
    return m.group(1)


class OperatorTls(BaseModel):
    """TLS of the operator endpoints (Grafana, Prometheus, Connect REST on the internal load balancer)."""

    model_config = ConfigDict(extra="forbid")

    certificate_arn: str = Field(
        description="ACM certificate (same region) for the internal load balancer's HTTPS listeners; its name is "
        "what operators type (point a private DNS record at the load balancer output)."
    )
    ssl_policy: str = Field(ALB_TLS_POLICIES[0], description="ELB TLS policy (TLS 1.2+ policies only).")
    dns_name: str | None = Field(
        None,
        description="The certificate's DNS name operators type (e.g. migration.dev.corp.example): the stack creates an alias "
        "record for it pointing at the load balancer, and the URL outputs use it. Unset: the outputs name the load "
        "balancer itself, which the certificate does not cover.",
    )
    hosted_zone_name: str | None = Field(
        None, description="Private Route 53 zone holding dns_name (dns_name must be inside it); required with dns_name."
    )
    hosted_zone_id: str | None = Field(
        None,
        description="Existing private hosted zone (Z...) named hosted_zone_name, associated with the VPC. Unset: the stack "
        "creates the private zone hosted_zone_name in the VPC.",
    )

    @field_validator("certificate_arn")
    @classmethod
    def _cert(cls, v: str) -> str:
        if not _ACM_ARN.match(v):
            raise ValueError(f"{v!r} is not an ACM certificate ARN (arn:aws:acm:REGION:ACCOUNT:certificate/ID)")
        return v

    @field_validator("hosted_zone_id")
    @classmethod
    def _zone_id(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"Z[A-Z0-9]{1,31}", v):
            raise ValueError(f"hosted_zone_id {v!r} is not a Route 53 zone id (Z followed by letters and digits)")
        return v

    @model_validator(mode="after")
    def _dns(self) -> OperatorTls:
        name = (self.dns_name or "").lower().rstrip(".")
        zone = (self.hosted_zone_name or "").lower().rstrip(".")
        if self.dns_name is None:
            if self.hosted_zone_name or self.hosted_zone_id:
                raise ValueError("hosted_zone_name/hosted_zone_id need dns_name (the certificate's name to put in the zone)")
            return self
        if not re.fullmatch(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}", name):
            raise ValueError(f"dns_name {self.dns_name!r} is not a DNS name")
        if not zone:
            raise ValueError("dns_name needs hosted_zone_name (the private zone to create the record in)")
        if name != zone and not name.endswith("." + zone):
            raise ValueError(f"dns_name {self.dns_name!r} is not inside hosted_zone_name {self.hosted_zone_name!r}: "
                             "give the zone the certificate's name belongs to")
        self.dns_name, self.hosted_zone_name = name, zone
        return self

    @field_validator("ssl_policy")
    @classmethod
    def _policy(cls, v: str) -> str:
        if v not in ALB_TLS_POLICIES:
            raise ValueError(f"ssl_policy {v!r} is not one of {', '.join(ALB_TLS_POLICIES)}")
        return v
