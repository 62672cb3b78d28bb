"""Network peers of an environment: who reaches what (operators, brokers, AWS APIs)."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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
    """With ``network.aws_endpoints: existing``: where the VPC's own endpoints of AWS's APIs are, reached on 443.

    Give the interface endpoints' security group (or the VPC's CIDR) and the S3 gateway endpoint's prefix list.
    A CIDR that reaches the internet (``0.0.0.0/0``, any public range) needs ``network.allow_internet_https``.
    """

    model_config = ConfigDict(extra="forbid")

    cidrs: list[str] = Field(default_factory=list, description="CIDRs reachable on 443 (e.g. the VPC's, where its interface endpoints are).")
    prefix_list_ids: list[str] = Field(default_factory=list, description="Prefix lists reachable on 443 (e.g. the S3 gateway endpoint's).")
    security_group_ids: list[str] = Field(default_factory=list, description="Security groups reachable on 443 (e.g. the VPC's interface endpoints').")

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            cls.parse_cidr(cidr)
        if len(set(v)) != len(v):
            raise ValueError("duplicate CIDR entries; list each once")
        return v

    def internet_cidrs(self) -> list[str]:
        """The CIDRs that reach beyond private address space (``0.0.0.0/0``, ``::/0``, a public range)."""
        return [c for c in self.cidrs if self.parse_cidr(c).is_global]


#: ``network.aws_endpoints``: the stack makes the VPC endpoints its tasks use, or the VPC has its own.
AWS_ENDPOINT_MODES = ("create", "existing")
ROUTE_TABLE_ID = re.compile(r"^rtb-[0-9a-f]{8,17}$")


class NetworkConfig(BaseModel):
    """How the tasks reach AWS's APIs: through VPC endpoints the stack makes (``create``), or the VPC's own
    (``existing``, named in ``https_egress``); never the internet unless the environment says why."""

    model_config = ConfigDict(extra="forbid")

    aws_endpoints: Literal["create", "existing"] = Field(
        "create",
        description="create: the stack makes the interface endpoints its tasks call (ECR api/dkr, CloudWatch Logs, Secrets "
        "Manager, STS, ECS, EC2; private DNS on) in subnet_ids and an S3 gateway endpoint on route_table_ids, and the "
        "tasks reach those only. existing: the VPC has its own endpoints; https_egress names them.",
    )
    route_table_ids: list[str] = Field(
        default_factory=list,
        description="With aws_endpoints: create, the route tables (rtb-...) the S3 gateway endpoint goes on. Empty: the "
        "table associated with each of subnet_ids, looked up at plan time (a subnet left on the VPC's main route table "
        "has no association: list the main table here).",
    )
    https_egress: HttpsEgress | None = Field(
        None, description="With aws_endpoints: existing (required there): the VPC's endpoints the tasks reach on 443."
    )
    allow_internet_https: bool = Field(
        False, description="Accept an https_egress CIDR that reaches the internet (0.0.0.0/0 behind a NAT gateway): every "
        "task may then send anything anywhere on 443. An explicit opt-in, with internet_https_reason.",
    )
    internet_https_reason: str | None = Field(
        None, description="Why the tasks must reach the internet on 443 (one line, required with allow_internet_https)."
    )

    @field_validator("route_table_ids")
    @classmethod
    def _route_tables(cls, v: list[str]) -> list[str]:
        return check_ids(v, ROUTE_TABLE_ID, "route table ID", "rtb-0a1b2c3d4e5f60718")

    @model_validator(mode="after")
    def _mode(self) -> NetworkConfig:
        def refuse(loc: tuple[str, ...], value: object, message: str) -> ValidationError:
            return field_error("NetworkConfig", loc, value, message)

        if self.aws_endpoints == "create":
            if self.https_egress is not None:
                raise refuse(("https_egress",), "given", "the stack makes the AWS endpoints (aws_endpoints: create) and the "
                             "tasks reach those only; remove https_egress, or set network.aws_endpoints: existing to name "
                             "the VPC's own endpoints")
        else:
            if self.route_table_ids:
                raise refuse(("route_table_ids",), self.route_table_ids, "only the S3 gateway endpoint of aws_endpoints: "
                             "create goes on route tables; remove route_table_ids")
            if self.https_egress is None or self.https_egress.is_empty():
                raise refuse(("https_egress",), None, "with aws_endpoints: existing the tasks reach AWS's APIs only through "
                             "the VPC's endpoints; give their security group (or the VPC's CIDR) and the S3 gateway "
                             "endpoint's prefix list, or set network.aws_endpoints: create")
        internet = self.https_egress.internet_cidrs() if self.https_egress else []
        reason = (self.internet_https_reason or "").strip()
        if internet and not self.allow_internet_https:
            raise refuse(("https_egress", "cidrs"), internet[0], f"{internet[0]} reaches the internet: every task (one "
                         "runs an operator's command) could send anything anywhere on 443; give the VPC endpoints' "
                         "security group or the VPC's CIDR and the S3 prefix list, or set network.allow_internet_https: "
                         "true with network.internet_https_reason")
        if self.allow_internet_https and not internet:
            raise refuse(("allow_internet_https",), True, "no https_egress CIDR reaches the internet, so there is nothing "
                         "to allow; remove allow_internet_https and internet_https_reason")
        if self.allow_internet_https and (not reason or "\n" in reason or len(reason) > 200):
            raise refuse(("internet_https_reason",), self.internet_https_reason, "allow_internet_https needs one line "
                         "(at most 200 characters) saying why the tasks must reach the internet on 443")
        if reason and not self.allow_internet_https:
            raise refuse(("internet_https_reason",), reason, "a reason without allow_internet_https: true allows nothing; "
                         "remove it, or set network.allow_internet_https: true")
        return self


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
