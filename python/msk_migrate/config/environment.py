"""The typed description of one deployment environment (``infra/environments/<env>.yaml``).

One file per environment; ``infra/main.py`` turns each into the CDKTF stack ``migration-<env>``.
The file is validated once, here, and the first problem becomes one line that names the field and
the fix (:class:`~msk_migrate.errors.UsageError`, exit code 2). Nothing else re-validates it.

The Kafka-facing parts reuse the shared models: the source is a :class:`ClusterEndpoint` (plus where
its brokers live on the network), the target's ``auth`` is an :class:`AuthConfig`, ``migration`` is a
:class:`MigrationSpec` and ``worker`` a :class:`WorkerSpec` -- the same models the connector renderer and
the local rehearsal consume. The target's bootstrap servers are not configured: they come from the
MSK cluster (created, or looked up by ARN) at apply time.

Secrets never appear here: only Secrets Manager ARNs.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..errors import UsageError
from .auth import AuthConfig
from .loader import load_yaml_model
from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec

#: The three images (and ECR repositories) of a migration, in build order.
ECR_COMPONENTS: tuple[str, ...] = ("kafka-connect", "prometheus", "grafana")

#: Fixed listener ports of the monitoring containers (the images listen there).
PROMETHEUS_PORT = 9090
GRAFANA_PORT = 3000

#: Cloud Map answers a DNS query with at most 8 records (multivalue routing), and Prometheus finds the
#: Connect workers through that DNS name: more workers than this would drop out of monitoring.
MAX_DISCOVERABLE_WORKERS = 8

#: CloudWatch Logs accepts only these retention periods (days).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)

#: Broker properties the created MSK cluster always sets; ``server_properties`` may not override them.
SAFE_BROKER_DEFAULTS: dict[str, str] = {
    "auto.create.topics.enable": "false",
    "unclean.leader.election.enable": "false",
    "min.insync.replicas": "2",
    "default.replication.factor": "3",
}

#: MSK versions a new cluster may use: those without a passed end-of-support date, as API strings.
#: Source: https://docs.aws.amazon.com/msk/latest/developerguide/supported-kafka-versions.html (checked
#: 2026-11; 3.6.0 ended 2026-06-01 and 3.7.x 2026-09-01, and MSK phases out new clusters on versions
#: with a published end of support). Update this tuple when MSK adds a version.
SUPPORTED_MSK_VERSIONS: tuple[str, ...] = (
    "3.8.x", "3.8.x.kraft", "3.9.x", "3.9.x.kraft", "4.0.x.kraft", "4.1.x.kraft",
)

#: MSK Standard broker instance types.
#: Source: https://docs.aws.amazon.com/msk/latest/developerguide/broker-instance-sizes.html (checked 2026-11).
MSK_INSTANCE_TYPES: tuple[str, ...] = (
    "kafka.t3.small",
    *(f"kafka.m5.{s}" for s in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")),
    *(f"kafka.m7g.{s}" for s in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
)

#: Widest operator CIDR accepted without ``operator_access.allow_wide_cidrs: true`` (prefix length).
OPERATOR_CIDR_MIN_PREFIX = {4: 16, 6: 48}


def msk_regions() -> dict[str, str]:
    """Regions where MSK (service ``kafka``) exists -> partition, from botocore's bundled endpoint data
    (pinned in requirements.lock; no network)."""
    return dict(_msk_regions())


def _msk_regions() -> tuple[tuple[str, str], ...]:
    global _MSK_REGIONS
    if _MSK_REGIONS is None:
        import boto3

        session = boto3.session.Session()
        _MSK_REGIONS = tuple(
            (region, partition)
            for partition in session.get_available_partitions()
            for region in session.get_available_regions("kafka", partition_name=partition)
        )
    return _MSK_REGIONS


_MSK_REGIONS: tuple[tuple[str, str], ...] | None = None

_ENV_NAME = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_PREFIX = re.compile(r"^[a-z][a-z0-9-]{1,38}[a-z0-9]$")
_ACCOUNT = re.compile(r"^\d{12}$")
_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
_VPC = re.compile(r"^vpc-[0-9a-f]{8,17}$")
_SUBNET = re.compile(r"^subnet-[0-9a-f]{8,17}$")
_SG = re.compile(r"^sg-[0-9a-f]{8,17}$")
_PREFIX_LIST = re.compile(r"^pl-[0-9a-f]{8,17}$")
_MSK_ARN = re.compile(r"^arn:aws[a-z-]*:kafka:([a-z0-9-]+):(\d{12}):cluster/([A-Za-z0-9-]{1,64})/([A-Za-z0-9-]+)$")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:(.+)$")
_KAFKA_VERSION = re.compile(r"^\d+\.\d+\.(\d+|x)(\.tiered|\.kraft)?$")
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DNS_NAME = re.compile(r"^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")

#: Fargate task sizes: cpu units -> allowed memory (MiB).
FARGATE_SIZES: dict[int, tuple[int, ...]] = {
    256: (512, 1024, 2048),
    512: tuple(range(1024, 4097, 1024)),
    1024: tuple(range(2048, 8193, 1024)),
    2048: tuple(range(4096, 16385, 1024)),
    4096: tuple(range(8192, 30721, 1024)),
    8192: tuple(range(16384, 61441, 4096)),
    16384: tuple(range(32768, 122881, 8192)),
}


def _field_error(model: str, loc: tuple[str, ...], value: object, message: str) -> ValidationError:
    """A validation error located at ``loc`` below the field being validated (cross-field checks
    can then name the exact field, e.g. ``connect.max_capacity``)."""
    return ValidationError.from_exception_data(
        model,
        [InitErrorDetails(type=PydanticCustomError("value_error", "{message}", {"message": message}), loc=loc, input=value)],
    )


def default_prefix(env_name: str) -> str:
    """Name prefix of an environment's resources when ``prefix`` is not set."""
    return f"msk-migrate-{env_name}"


def ecr_repository_names(prefix: str) -> dict[str, str]:
    """``{component: repository name}``; build_images.py and the stack both use this."""
    return {component: f"{prefix}-{component}" for component in ECR_COMPONENTS}


def partition_of(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def parse_msk_arn(arn: str) -> dict[str, str]:
    """``{region, account, name, uuid}`` of an MSK cluster ARN."""
    m = _MSK_ARN.match(arn)
    if not m:
        raise ValueError(f"{arn!r} is not an MSK cluster ARN (arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID)")
    return dict(zip(("region", "account", "name", "uuid"), m.groups()))


def _check_secret_arn(value: str, field: str) -> str:
    if not _SECRET_ARN.match(value):
        raise ValueError(f"{field} {value!r} is not a Secrets Manager ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)")
    return value


_SECRET_SUFFIX = re.compile(r"-[A-Za-z0-9]{6}$")


def _check_full_secret_arns(auth: AuthConfig, where: str) -> None:
    """ECS and IAM need the complete ARN (with the random 6-character suffix Secrets Manager appends)."""
    if auth.secrets_from != "secrets_manager":
        raise ValueError(f"{where}auth.secrets_from must be secrets_manager on ECS (tasks get secrets from Secrets Manager)")
    for name in ("secret_arn", "ca_secret_arn"):
        value = getattr(auth, name)
        if value and not (_SECRET_ARN.match(value) and _SECRET_SUFFIX.search(value)):
            raise ValueError(
                f"{where}auth.{name} {value!r} must be the full secret ARN including its 6-character suffix "
                "(aws secretsmanager describe-secret --query ARN)"
            )


def _optional_msk_arn(v: str | None) -> str | None:
    if v is not None:
        parse_msk_arn(v)
    return v


def _check_ids(values: list[str], pattern: re.Pattern[str], what: str, example: str) -> list[str]:
    for v in values:
        if not pattern.match(v):
            raise ValueError(f"{v!r} is not a {what} (e.g. {example})")
    if len(set(values)) != len(values):
        raise ValueError(f"duplicate {what} entries; list each once")
    return values


class Peers(BaseModel):
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
            try:
                net = ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR block ({exc}); write it like 10.20.0.0/16") from None
            if net.prefixlen == 0:
                raise ValueError(
                    f"{cidr} opens the flow to the whole internet; give the operators' or brokers' own CIDR, "
                    "a prefix list or a security group"
                )
        if len(set(v)) != len(v):
            raise ValueError("duplicate CIDR entries; list each once")
        return v

    @field_validator("prefix_list_ids")
    @classmethod
    def _pls(cls, v: list[str]) -> list[str]:
        return _check_ids(v, _PREFIX_LIST, "prefix list ID", "pl-0a1b2c3d4e5f60718")

    @field_validator("security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        return _check_ids(v, _SG, "security group ID", "sg-0a1b2c3d4e5f60718")

    def is_empty(self) -> bool:
        return not (self.cidrs or self.prefix_list_ids or self.security_group_ids)


class OperatorAccess(Peers):
    """Who may open the Connect REST API, Prometheus and Grafana (VPN, bastion, CI runners).

    CIDRs wider than /16 (IPv4) or /48 (IPv6) are refused unless ``allow_wide_cidrs`` is set.
    """

    allow_wide_cidrs: bool = Field(
        False, description="Accept operator CIDRs wider than /16 (IPv4) or /48 (IPv6); /0 is refused regardless."
    )

    @model_validator(mode="after")
    def _some(self) -> "OperatorAccess":
        if self.is_empty():
            raise ValueError("give at least one of cidrs, prefix_list_ids, security_group_ids (the operators' network)")
        if not self.allow_wide_cidrs:
            for cidr in self.cidrs:
                net = ipaddress.ip_network(cidr, strict=True)
                bound = OPERATOR_CIDR_MIN_PREFIX[net.version]
                if net.prefixlen < bound:
                    raise _field_error(
                        "OperatorAccess", ("cidrs",), cidr,
                        f"{cidr} is wider than /{bound} ({net.num_addresses:,} addresses may reach Connect, Prometheus and "
                        f"Grafana); give the VPN's own range, or set operator_access.allow_wide_cidrs: true",
                    )
        return self


class HttpsEgress(BaseModel):
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
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR block ({exc})") from None
        return v

    @field_validator("prefix_list_ids")
    @classmethod
    def _pls(cls, v: list[str]) -> list[str]:
        return _check_ids(v, _PREFIX_LIST, "prefix list ID", "pl-0a1b2c3d4e5f60718")

    @field_validator("security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        return _check_ids(v, _SG, "security group ID", "sg-0a1b2c3d4e5f60718")

    @model_validator(mode="after")
    def _some(self) -> "HttpsEgress":
        if not (self.cidrs or self.prefix_list_ids or self.security_group_ids):
            raise ValueError("tasks need HTTPS to ECR, CloudWatch Logs and Secrets Manager; give a CIDR, prefix list or security group")
        return self


class NetworkConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    https_egress: HttpsEgress = Field(default_factory=HttpsEgress)


class SourceCluster(ClusterEndpoint):
    """The self-managed (or MSK) source cluster: a :class:`ClusterEndpoint` plus where it lives."""

    alias: str = Field("source", description="MM2 alias of the source cluster.")
    network: Peers = Field(description="Where the source brokers are: CIDRs, prefix lists or security groups.")
    msk_cluster_arn: str | None = Field(
        None, description="Only for an MSK source with IAM auth: its ARN, to scope the task role's read access."
    )
    allow_plaintext: bool = Field(
        False, description="Accept auth.mode plaintext (no authentication, no encryption): an explicit opt-in."
    )

    @field_validator("network")
    @classmethod
    def _network(cls, v: Peers) -> Peers:
        if v.is_empty():
            raise ValueError("give the source brokers' cidrs, prefix_list_ids or security_group_ids (Connect egress goes only there)")
        return v

    _arn = field_validator("msk_cluster_arn")(classmethod(lambda cls, v: _optional_msk_arn(v)))

    @model_validator(mode="after")
    def _iam(self) -> "SourceCluster":
        if self.auth.mode == "plaintext" and not self.allow_plaintext:
            raise _field_error(
                "SourceCluster", ("auth", "mode"), self.auth.mode,
                "plaintext (the default) sends the data unauthenticated and in clear; set auth.mode to scram, mtls or iam, "
                "or opt in with source.allow_plaintext: true",
            )
        _check_full_secret_arns(self.auth, "")
        if self.auth.mode == "iam" and not self.msk_cluster_arn:
            raise ValueError("auth mode 'iam' needs msk_cluster_arn (the source MSK cluster) to scope the task role")
        if self.auth.mode != "iam" and self.msk_cluster_arn:
            raise ValueError("msk_cluster_arn is only used with auth mode 'iam'; remove it")
        return self

    def endpoint(self) -> ClusterEndpoint:
        """The plain endpoint the connector renderer takes."""
        return ClusterEndpoint(alias=self.alias, bootstrap_servers=self.bootstrap_servers, auth=self.auth)

    def ports(self) -> list[int]:
        """Broker ports, from the bootstrap list (every broker is assumed to listen on them)."""
        return sorted({int(hp.rsplit(":", 1)[1]) for hp in self.bootstrap_servers.split(",")})


class MskCreate(BaseModel):
    """A new MSK provisioned cluster: KMS at rest, TLS in transit, IAM auth (+ optional SCRAM)."""

    model_config = ConfigDict(extra="forbid")

    cluster_name: str | None = Field(None, description="Default: <prefix>.")
    kafka_version: str = Field("3.9.x", description="An MSK version string, e.g. 3.9.x or 4.1.x.kraft.")
    instance_type: str = Field("kafka.m7g.large", description="Broker instance type.")
    broker_count: int = Field(3, ge=3, le=60, description="Brokers; a multiple of the number of subnets.")
    ebs_gb: int = Field(1000, ge=1, le=16384, description="EBS volume per broker (GiB) at creation.")
    max_ebs_gb: int | None = Field(
        None,
        ge=1,
        le=16384,
        description="Storage autoscaling: the volumes grow up to this (GiB per broker). Default: 4 x ebs_gb "
        "(at most 16384); equal to ebs_gb turns autoscaling off.",
    )
    storage_target_percent: int = Field(
        60, ge=10, le=90, description="Storage autoscaling keeps broker disk usage near this percentage (grow only)."
    )
    subnet_ids: list[str] | None = Field(None, description="2 or 3 subnets in different AZs. Default: subnet_ids.")
    scram: bool = Field(False, description="Also enable SASL/SCRAM (port 9096) with Secrets Manager association.")
    scram_secret_arns: list[str] = Field(
        default_factory=list,
        description="Extra SCRAM user secrets to associate (names start with AmazonMSK_, customer-managed KMS key).",
    )
    enhanced_monitoring: Literal["DEFAULT", "PER_BROKER", "PER_TOPIC_PER_BROKER", "PER_TOPIC_PER_PARTITION"] = Field(
        "PER_BROKER", description="CloudWatch metric level of the brokers."
    )
    client_access: Peers = Field(
        default_factory=Peers,
        description="The applications moved onto MSK (and the validation job): allowed to the brokers' IAM "
        "port 9098 (and 9096 with scram). Empty = only Connect reaches the brokers.",
    )
    server_properties: dict[str, str] = Field(
        default_factory=dict,
        description="Extra broker properties; the safe defaults (no unclean election, no topic auto-creation, "
        "min.insync.replicas=2, default RF 3) cannot be overridden.",
    )

    @field_validator("cluster_name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[A-Za-z][A-Za-z0-9-]{0,63}$", v):
            raise ValueError(f"cluster_name {v!r} must match [A-Za-z][A-Za-z0-9-]{{0,63}}")
        return v

    @field_validator("kafka_version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not _KAFKA_VERSION.match(v):
            raise ValueError(f"kafka_version {v!r} is not an MSK version string (e.g. 3.9.x, 3.8.x, 4.1.x.kraft)")
        if v not in SUPPORTED_MSK_VERSIONS:
            raise ValueError(f"kafka_version {v!r} is not a supported MSK version for new clusters; use one of {', '.join(SUPPORTED_MSK_VERSIONS)}")
        return v

    @field_validator("instance_type")
    @classmethod
    def _instance(cls, v: str) -> str:
        if v not in MSK_INSTANCE_TYPES:
            family = ".".join(v.split(".")[:2])
            close = [t for t in MSK_INSTANCE_TYPES if t.startswith(family + ".")] or [t for t in MSK_INSTANCE_TYPES if "m7g" in t]
            raise ValueError(f"instance_type {v!r} is not an MSK broker type; use one of {', '.join(close)}")
        return v

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            _check_ids(v, _SUBNET, "subnet ID", "subnet-0a1b2c3d4e5f60718")
            if len(v) not in (2, 3):
                raise ValueError("MSK needs 2 or 3 client subnets in different AZs")
        return v

    @field_validator("scram_secret_arns")
    @classmethod
    def _scram_arns(cls, v: list[str]) -> list[str]:
        for arn in v:
            _check_msk_scram_secret(arn, "scram_secret_arns entry")
        return v

    @field_validator("server_properties")
    @classmethod
    def _props(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            if key in SAFE_BROKER_DEFAULTS:
                raise ValueError(f"{key} is fixed to {SAFE_BROKER_DEFAULTS[key]} by the stack; remove it")
            if not re.match(r"^[a-z0-9.]+$", key):
                raise ValueError(f"{key!r} is not a broker property name")
        return v

    @model_validator(mode="after")
    def _scram(self) -> "MskCreate":
        if self.scram_secret_arns and not self.scram:
            raise ValueError("scram_secret_arns needs scram: true")
        if self.max_ebs_gb is None:
            self.max_ebs_gb = min(16384, 4 * self.ebs_gb)
        elif self.max_ebs_gb < self.ebs_gb:
            raise _field_error(
                "MskCreate", ("max_ebs_gb",), self.max_ebs_gb,
                f"{self.max_ebs_gb} is below ebs_gb {self.ebs_gb} (MSK volumes only grow); raise max_ebs_gb or lower ebs_gb",
            )
        return self


def _check_msk_scram_secret(arn: str, field: str) -> None:
    _check_secret_arn(arn, field)
    name = _SECRET_ARN.match(arn).group(1)
    if not name.startswith("AmazonMSK_"):
        raise ValueError(f"{field} {arn!r}: MSK only associates secrets whose name starts with AmazonMSK_")


class TargetCluster(BaseModel):
    """The MSK target: ``create`` a cluster, or reference ``existing_cluster_arn``.

    Its bootstrap servers are never configured: the stack reads them from the cluster.
    """

    model_config = ConfigDict(extra="forbid")

    alias: str = Field("target", description="MM2 alias of the target cluster.")
    auth: AuthConfig = Field(default_factory=lambda: AuthConfig(mode="iam"), description="How Connect authenticates (default iam).")
    create: MskCreate | None = Field(None, description="Create a new MSK cluster with these settings.")
    existing_cluster_arn: str | None = Field(None, description="Use this existing MSK cluster.")
    network: Peers | None = Field(
        None,
        description="Existing cluster only: its brokers' security groups (the stack adds ingress from Connect) "
        "and/or CIDRs/prefix lists.",
    )
    allow_plaintext: bool = Field(
        False, description="Existing cluster only: accept auth.mode plaintext (port 9092, no authentication): an explicit opt-in."
    )
    add_ingress_rules: bool = Field(
        True,
        description="Existing cluster only: add an ingress rule from Connect to each network.security_group_ids "
        "(set false when another configuration owns those groups' rules).",
    )

    @field_validator("alias")
    @classmethod
    def _alias(cls, v: str) -> str:
        # The alias rule lives on ClusterEndpoint; check it there rather than repeat it.
        try:
            ClusterEndpoint(alias=v, bootstrap_servers="placeholder.invalid:9092")
        except ValidationError as exc:
            raise ValueError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
        return v

    _arn = field_validator("existing_cluster_arn")(classmethod(lambda cls, v: _optional_msk_arn(v)))

    @model_validator(mode="after")
    def _one(self) -> "TargetCluster":
        _check_full_secret_arns(self.auth, "")
        if bool(self.create) == bool(self.existing_cluster_arn):
            raise ValueError("set exactly one of create (new MSK cluster) or existing_cluster_arn")
        if self.create:
            if self.auth.mode not in ("iam", "scram"):
                raise ValueError(f"a created cluster offers iam (and scram with create.scram: true); auth mode {self.auth.mode!r} is not available")
            if self.auth.mode == "scram":
                if not self.create.scram:
                    raise ValueError("auth mode 'scram' needs create.scram: true")
                _check_msk_scram_secret(self.auth.secret_arn or "", "auth.secret_arn")
            if self.network is not None:
                raise ValueError("network is for existing clusters; a created cluster gets its own security group (remove network)")
        else:
            if self.auth.mode == "plaintext" and not self.allow_plaintext:
                raise _field_error(
                    "TargetCluster", ("auth", "mode"), self.auth.mode,
                    "plaintext sends the data unauthenticated and in clear; use iam, scram or mtls, "
                    "or opt in with target.allow_plaintext: true",
                )
            if self.auth.mode == "scram" and not self.auth.tls:
                raise ValueError("MSK serves SCRAM only over TLS (port 9096); remove auth.tls: false")
            if self.network is None or self.network.is_empty():
                raise ValueError("an existing cluster needs network.security_group_ids (or cidrs/prefix_list_ids) of its brokers")
        return self

    @property
    def port(self) -> int:
        return self.auth.msk_port

    def endpoint(self, bootstrap_servers: str) -> ClusterEndpoint:
        return ClusterEndpoint(alias=self.alias, bootstrap_servers=bootstrap_servers, auth=self.auth)


class ConnectService(BaseModel):
    """The Connect (MM2) Fargate service and its autoscaling."""

    model_config = ConfigDict(extra="forbid")

    cpu: int = Field(1024, description="Fargate CPU units per task.")
    memory: int = Field(4096, description="Fargate memory per task (MiB).")
    desired_count: int = Field(2, ge=1, description="Initial tasks (workers).")
    min_capacity: int = Field(2, ge=1, description="Autoscaling lower bound.")
    max_capacity: int = Field(4, ge=1, description="Autoscaling upper bound; at most migration.tasks_max and 8.")
    cpu_target_percent: int = Field(60, ge=10, le=90, description="Target tracking on average service CPU.")
    scale_in_cooldown_seconds: int = Field(300, ge=0, description="Wait after scale-in (rebalances are costly).")
    scale_out_cooldown_seconds: int = Field(120, ge=0, description="Wait after scale-out.")

    @model_validator(mode="after")
    def _check(self) -> "ConnectService":
        _check_fargate(self.cpu, self.memory)
        if self.max_capacity > MAX_DISCOVERABLE_WORKERS:
            raise _field_error(
                "ConnectService", ("max_capacity",), self.max_capacity,
                f"{self.max_capacity} workers exceed the {MAX_DISCOVERABLE_WORKERS} that Cloud Map DNS (Prometheus' discovery) "
                "returns; use larger tasks (cpu/memory) instead of more than 8 workers",
            )
        if not self.min_capacity <= self.desired_count <= self.max_capacity:
            raise ValueError(
                f"need min_capacity <= desired_count <= max_capacity, got {self.min_capacity} / {self.desired_count} / {self.max_capacity}"
            )
        return self


def _check_fargate(cpu: int, memory: int) -> None:
    if cpu not in FARGATE_SIZES:
        raise ValueError(f"cpu {cpu} is not a Fargate size; use one of {', '.join(map(str, FARGATE_SIZES))}")
    if memory not in FARGATE_SIZES[cpu]:
        allowed = FARGATE_SIZES[cpu]
        raise ValueError(f"memory {memory} does not fit cpu {cpu} on Fargate; use {allowed[0]}..{allowed[-1]} MiB in Fargate steps")


class TaskSize(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpu: int = Field(512, description="Fargate CPU units.")
    memory: int = Field(1024, description="Fargate memory (MiB).")

    @model_validator(mode="after")
    def _check(self) -> "TaskSize":
        _check_fargate(self.cpu, self.memory)
        return self


class GrafanaService(TaskSize):
    cpu: int = Field(256, description="Fargate CPU units.")
    memory: int = Field(512, description="Fargate memory (MiB).")
    admin_user: str = Field("admin", pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Grafana admin login.")
    admin_secret_arn: str | None = Field(
        None,
        description="Secrets Manager secret with the admin password. Unset: the stack creates an empty secret "
        "that the operator fills before Grafana can start (there is never a default password).",
    )
    admin_secret_key: str = Field("password", pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="JSON key of the password in the secret.")

    @field_validator("admin_secret_arn")
    @classmethod
    def _arn(cls, v: str | None) -> str | None:
        return v if v is None else _check_secret_arn(v, "admin_secret_arn")


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
            if not host or not _DNS_NAME.match(host) and not re.fullmatch(r"[0-9.]+", host) or not port.isdigit() or not 0 < int(port) < 65536:
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
    prometheus: TaskSize = Field(default_factory=TaskSize)
    grafana: GrafanaService = Field(default_factory=GrafanaService)

    @field_validator("namespace")
    @classmethod
    def _ns(cls, v: str | None) -> str | None:
        if v is not None and not _DNS_NAME.match(v):
            raise ValueError(f"namespace {v!r} is not a DNS name (e.g. mm2.example.internal)")
        return v


class BackendConfig(BaseModel):
    """Remote state: S3 with locking. Absent = local state under .local/terraform/."""

    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(description="State bucket (exists already; versioned, encrypted).")
    key: str | None = Field(None, description="State object key. Default: msk-migrate/<env>/terraform.tfstate.")
    target_key: str | None = Field(
        None,
        description="State object key of the target-<env> stack (created clusters only). Default: msk-migrate/<env>/target.tfstate.",
    )
    region: str | None = Field(None, description="Bucket region. Default: the environment's region.")
    dynamodb_table: str | None = Field(None, description="DynamoDB lock table (LockID hash key).")
    use_lockfile: bool = Field(False, description="S3-native locking (Terraform >= 1.10) instead of / besides DynamoDB.")
    kms_key_id: str | None = Field(None, description="KMS key ARN for the state object. Default: SSE-S3/bucket default.")

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str) -> str:
        if not re.match(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", v):
            raise ValueError(f"bucket {v!r} is not an S3 bucket name")
        return v

    @field_validator("kms_key_id")
    @classmethod
    def _kms(cls, v: str | None) -> str | None:
        if v is not None and not _KMS_KEY_ARN.match(v):
            raise ValueError(f"kms_key_id {v!r} is not a KMS key ARN")
        return v

    @model_validator(mode="after")
    def _lock(self) -> "BackendConfig":
        if not self.dynamodb_table and not self.use_lockfile:
            raise ValueError("shared state needs locking: set dynamodb_table or use_lockfile: true")
        return self


_ACM_ARN = re.compile(r"^arn:aws[a-z-]*:acm:([a-z0-9-]+):(\d{12}):certificate/[A-Za-z0-9-]+$")
#: TLS policies the operator load balancer may use (TLS 1.2+ only; the first is the default).
ALB_TLS_POLICIES = ("ELBSecurityPolicy-TLS13-1-2-2021-06", "ELBSecurityPolicy-TLS13-1-3-2021-06",
                    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06", "ELBSecurityPolicy-FS-1-2-Res-2020-10")


class OperatorTls(BaseModel):
    """TLS of the operator endpoints (Grafana, Prometheus, Connect REST on the internal load balancer)."""

    model_config = ConfigDict(extra="forbid")

    certificate_arn: str = Field(
        description="ACM certificate (same region) for the internal load balancer's HTTPS listeners; its name is "
        "what operators type (point a private DNS record at the load balancer output)."
    )
    ssl_policy: str = Field(ALB_TLS_POLICIES[0], description="ELB TLS policy (TLS 1.2+ policies only).")

    @field_validator("certificate_arn")
    @classmethod
    def _cert(cls, v: str) -> str:
        if not _ACM_ARN.match(v):
            raise ValueError(f"{v!r} is not an ACM certificate ARN (arn:aws:acm:REGION:ACCOUNT:certificate/ID)")
        return v

    @field_validator("ssl_policy")
    @classmethod
    def _policy(cls, v: str) -> str:
        if v not in ALB_TLS_POLICIES:
            raise ValueError(f"ssl_policy {v!r} is not one of {', '.join(ALB_TLS_POLICIES)}")
        return v


class EcrConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keep_images: int = Field(30, ge=1, le=1000, description="Tagged images kept per repository (older expire).")
    untagged_expire_days: int = Field(7, ge=1, le=365, description="Untagged images expire after this many days.")


class EnvironmentConfig(BaseModel):
    """One environment; the stack ``migration-<name>`` is built from it alone."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Environment name; equals the file name (dev for dev.yaml).")
    account_id: str = Field(description="AWS account (quoted 12 digits); the provider refuses any other.")
    region: str = Field(description="AWS region, e.g. eu-west-1.")
    owner: str = Field(description="Team or person owning the resources (default tag 'owner').")
    project: str = Field("msk-migrate", description="Default tag 'project'.")
    prefix: str | None = Field(None, description="Resource name prefix. Default: msk-migrate-<name>.")
    tags: dict[str, str] = Field(default_factory=dict, description="Extra default tags.")
    vpc_id: str = Field(description="VPC of the ECS tasks (and of the created MSK cluster).")
    subnet_ids: list[str] = Field(description="Private subnets for tasks (and MSK brokers by default), 2+ AZs.")
    operator_access: OperatorAccess = Field(description="Who reaches Connect REST, Prometheus and Grafana.")
    operator_tls: OperatorTls = Field(description="ACM certificate of the operator endpoints (HTTPS only).")
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    source: SourceCluster
    target: TargetCluster
    migration: MigrationSpec = Field(default_factory=MigrationSpec)
    worker: WorkerSpec = Field(default_factory=WorkerSpec)
    connect: ConnectService = Field(default_factory=ConnectService)
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    backend: BackendConfig | None = Field(None, description="S3 remote state; absent = local state.")
    log_retention_days: int = Field(30, description="CloudWatch retention of every log group.")
    log_kms: bool = Field(True, description="Encrypt log groups with the stack's KMS key.")
    secrets_kms_key_arns: list[str] = Field(
        default_factory=list,
        description="Customer-managed KMS keys of the source/target secrets (execution role may decrypt via Secrets Manager).",
    )
    image_tag: str = Field(description="Image tag used when no build manifest pins digests.")
    ecr: EcrConfig = Field(default_factory=EcrConfig)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _ENV_NAME.match(v):
            raise ValueError(f"name {v!r} must be lowercase letters, digits and -, starting with a letter (max 20)")
        return v

    @field_validator("account_id", mode="before")
    @classmethod
    def _account(cls, v: object) -> object:
        if not isinstance(v, str) or not _ACCOUNT.match(v):
            raise ValueError(f"account_id {v!r} must be a quoted 12-digit string, e.g. \"111111111111\"")
        return v

    @field_validator("region")
    @classmethod
    def _region(cls, v: str) -> str:
        if not _REGION.match(v):
            raise ValueError(f"region {v!r} is not an AWS region (e.g. eu-west-1)")
        known = msk_regions()
        if v not in known:
            import difflib

            close = difflib.get_close_matches(v, sorted(known), n=4, cutoff=0.6) or ["us-east-1", "eu-west-1"]
            raise ValueError(f"region {v!r} is not an AWS region with MSK (botocore's endpoint data); did you mean {' or '.join(close)}?")
        return v

    @field_validator("operator_tls")
    @classmethod
    def _operator_tls(cls, v: OperatorTls, info: ValidationInfo) -> OperatorTls:
        region = info.data.get("region")
        cert_region = _ACM_ARN.match(v.certificate_arn).group(1)
        if region and cert_region != region:
            raise _field_error("OperatorTls", ("certificate_arn",), v.certificate_arn,
                               f"the certificate is in {cert_region}; a load balancer in {region} needs one from {region} (request or import it there)")
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str | None) -> str | None:
        if v is not None and not _PREFIX.match(v):
            raise ValueError(f"prefix {v!r} must be 3-40 lowercase letters, digits and -, starting with a letter")
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            if key.lower() in ("environment", "project", "owner"):
                raise ValueError(f"tag {key!r} is set from the {key.lower()} field; remove it from tags")
        return v

    @field_validator("vpc_id")
    @classmethod
    def _vpc(cls, v: str) -> str:
        if not _VPC.match(v):
            raise ValueError(f"{v!r} is not a VPC ID (e.g. vpc-0a1b2c3d4e5f60718)")
        return v

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, v: list[str]) -> list[str]:
        _check_ids(v, _SUBNET, "subnet ID", "subnet-0a1b2c3d4e5f60718")
        if len(v) < 2:
            raise ValueError("give at least 2 private subnets in different AZs")
        return v

    # ---- cross-field checks: model validators, run once every field is valid (no field-order dependence) ----

    @model_validator(mode="after")
    def _target_placement(self) -> "EnvironmentConfig":
        t = self.target
        if t.create:
            msk_subnets = t.create.subnet_ids or self.subnet_ids
            if len(msk_subnets) not in (2, 3):
                raise _field_error(
                    "EnvironmentConfig", ("target", "create", "subnet_ids"), None,
                    f"MSK needs 2 or 3 client subnets and subnet_ids has {len(msk_subnets)}; set create.subnet_ids",
                )
            if t.create.broker_count % len(msk_subnets):
                raise _field_error(
                    "EnvironmentConfig", ("target", "create", "broker_count"), t.create.broker_count,
                    f"{t.create.broker_count} is not a multiple of the {len(msk_subnets)} broker subnets; "
                    f"use {len(msk_subnets) * max(1, t.create.broker_count // len(msk_subnets))} or adjust the subnets",
                )
        if t.existing_cluster_arn:
            arn = parse_msk_arn(t.existing_cluster_arn)
            if (arn["account"], arn["region"]) != (self.account_id, self.region):
                raise _field_error(
                    "EnvironmentConfig", ("target", "existing_cluster_arn"), t.existing_cluster_arn,
                    f"the cluster is in {arn['account']}/{arn['region']}, the environment in {self.account_id}/{self.region}; "
                    "use a cluster of this account and region",
                )
        return self

    @model_validator(mode="after")
    def _replication_factors(self) -> "EnvironmentConfig":
        """Every topic the migration creates survives one broker loss with writes still accepted:
        min.insync.replicas + 1 <= RF <= brokers (created cluster; an existing MSK cluster's default
        min.insync.replicas is 2 on three AZs)."""
        min_isr = int(SAFE_BROKER_DEFAULTS["min.insync.replicas"])
        brokers = self.target.create.broker_count if self.target.create else None
        for loc, rf in (
            (("migration", "replication_factor"), self.migration.replication_factor),
            (("migration", "internal_replication_factor"), self.migration.internal_replication_factor),
            (("worker", "replication_factor"), self.worker.replication_factor),
        ):
            if rf < min_isr + 1:
                raise _field_error(
                    "EnvironmentConfig", loc, rf,
                    f"{rf} is below min.insync.replicas {min_isr} + 1 (one broker down would stop writes); use at least {min_isr + 1}",
                )
            if brokers is not None and rf > brokers:
                raise _field_error(
                    "EnvironmentConfig", loc, rf,
                    f"{rf} is more than the {brokers} brokers of target.create.broker_count; lower it or add brokers",
                )
        return self

    @model_validator(mode="after")
    def _connect_fits(self) -> "EnvironmentConfig":
        c, migration, worker = self.connect, self.migration, self.worker
        if c.max_capacity > migration.tasks_max:
            raise _field_error(
                "EnvironmentConfig", ("connect", "max_capacity"), c.max_capacity,
                f"{c.max_capacity} is above migration.tasks_max {migration.tasks_max} (workers beyond tasks.max get no "
                "MirrorSource task and sit idle); lower connect.max_capacity or raise migration.tasks_max",
            )
        heap_mib = int(worker.heap[:-1]) * (1024 if worker.heap[-1] in "gG" else 1)
        if heap_mib > c.memory * 3 // 4:
            raise _field_error(
                "EnvironmentConfig", ("connect", "memory"), c.memory,
                f"{c.memory} MiB leaves too little room beside worker.heap {worker.heap} (heap <= 75% of task "
                "memory); raise connect.memory or lower worker.heap",
            )
        return self

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, v: int) -> int:
        if v not in LOG_RETENTION_DAYS:
            raise ValueError(f"log_retention_days {v} is not a CloudWatch retention; use one of 1, 3, 5, 7, 14, 30, 60, 90, 180, 365, ...")
        return v

    @field_validator("secrets_kms_key_arns")
    @classmethod
    def _kms(cls, v: list[str]) -> list[str]:
        for arn in v:
            if not _KMS_KEY_ARN.match(arn):
                raise ValueError(f"{arn!r} is not a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID)")
        return v

    @field_validator("image_tag")
    @classmethod
    def _tag(cls, v: str) -> str:
        if not _IMAGE_TAG.match(v):
            raise ValueError(f"image_tag {v!r} is not a Docker tag")
        if v == "latest":
            raise ValueError("repositories are tag-immutable, so 'latest' cannot move; use a release tag such as 0.1.0")
        return v

    # ---- derived names (one place, shared by the stack and build_images.py) ----

    @property
    def resource_prefix(self) -> str:
        return self.prefix or default_prefix(self.name)

    @property
    def stack_name(self) -> str:
        return f"migration-{self.name}"

    @property
    def target_stack_name(self) -> str | None:
        """``target-<name>``: the long-lived stack of a created MSK cluster (None for an existing cluster)."""
        return f"target-{self.name}" if self.target.create else None

    def state_key(self, stack_name: str) -> str:
        """S3 state object key of one of this environment's stacks (``backend`` set)."""
        b = self.backend
        if stack_name == self.target_stack_name:
            return (b.target_key if b else None) or f"msk-migrate/{self.name}/target.tfstate"
        return (b.key if b else None) or f"msk-migrate/{self.name}/terraform.tfstate"

    @property
    def partition(self) -> str:
        return partition_of(self.region)

    @property
    def dns_namespace(self) -> str:
        return self.monitoring.namespace or f"{self.resource_prefix}.internal"

    @property
    def config_bucket_name(self) -> str:
        return f"{self.resource_prefix}-configs-{self.account_id}"

    @property
    def msk_cluster_name(self) -> str:
        if self.target.existing_cluster_arn:
            return parse_msk_arn(self.target.existing_cluster_arn)["name"]
        return (self.target.create.cluster_name if self.target.create else None) or self.resource_prefix

    def ecr_repository_names(self) -> dict[str, str]:
        """``{"kafka-connect": ..., "prometheus": ..., "grafana": ...}``."""
        return ecr_repository_names(self.resource_prefix)

    def default_tags(self) -> dict[str, str]:
        return {"environment": self.name, "project": self.project, "owner": self.owner, **self.tags}

    def secret_arns(self) -> list[str]:
        """Every Secrets Manager ARN of the source/target auth (what the Connect task may read)."""
        arns = []
        for auth in (self.source.auth, self.target.auth):
            arns += [a for a in (auth.secret_arn, auth.ca_secret_arn) if a]
        return sorted(set(arns))


def load_environment(path: str | Path) -> EnvironmentConfig:
    """Load and validate ``infra/environments/<env>.yaml``; ``name`` must equal the file's stem."""
    path = Path(path)
    cfg = load_yaml_model(EnvironmentConfig, path)
    if cfg.name != path.stem:
        raise UsageError(f"{path.name}: name", f"{cfg.name!r} differs from the file name", f"set name: {path.stem}")
    return cfg


def load_environments(paths: list[Path]) -> list[EnvironmentConfig]:
    """Load several environment files; stack names must be unique."""
    envs = [load_environment(p) for p in paths]
    names: dict[str, Path] = {}
    for p, env in zip(paths, envs):
        if env.name in names:
            raise UsageError(f"{p}: name", f"environment {env.name!r} is also defined by {names[env.name]}", "keep one file per environment")
        names[env.name] = Path(p)
    seen: dict[str, str] = {}
    for p, env in zip(paths, envs):
        if env.resource_prefix in seen:
            raise UsageError(f"{Path(p).name}: prefix", f"{env.resource_prefix!r} is also used by {seen[env.resource_prefix]}", "give each environment its own prefix")
        seen[env.resource_prefix] = Path(p).name
    return envs
