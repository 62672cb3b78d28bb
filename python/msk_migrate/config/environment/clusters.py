"""The source cluster and the MSK target (created, or existing by ARN)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..auth import AuthConfig
from ..identifiers import SECRET_ARN, SECRET_ARN_SUFFIX, SUBNET_ID, check_ids, check_secret_arn, parse_msk_arn, secret_name
from ..migration import ClusterEndpoint
from ._fields import field_error
from .network import Peers

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

_KAFKA_VERSION = re.compile(r"^\d+\.\d+\.(\d+|x)(\.tiered|\.kraft)?$")


def check_full_secret_arns(auth: AuthConfig, where: str) -> None:
    """ECS and IAM need the complete ARN (with the random 6-character suffix Secrets Manager appends)."""
    if auth.secrets_from != "secrets_manager":
        raise ValueError(f"{where}auth.secrets_from must be secrets_manager on ECS (tasks get secrets from Secrets Manager)")
    for name in ("secret_arn", "ca_secret_arn"):
        value = getattr(auth, name)
        if value and not (SECRET_ARN.match(value) and SECRET_ARN_SUFFIX.search(value)):
            raise ValueError(
                f"{where}auth.{name} {value!r} must be the full secret ARN including its 6-character suffix "
                "(aws secretsmanager describe-secret --query ARN)"
            )


def optional_msk_arn(v: str | None) -> str | None:
    if v is not None:
        parse_msk_arn(v)
    return v


def check_msk_scram_secret(arn: str, field: str) -> None:
    check_secret_arn(arn, field)
    name = secret_name(arn)
    if not name.startswith("AmazonMSK_"):
        raise ValueError(f"{field} {arn!r}: MSK only associates secrets whose name starts with AmazonMSK_")


class SourceCluster(ClusterEndpoint):
    """The self-managed (or MSK) source cluster: a :class:`ClusterEndpoint` plus where it lives."""

    alias: str = Field("source", description="MM2 alias of the source cluster.")
    auth: AuthConfig = Field(
        default_factory=AuthConfig,
        description="How Connect authenticates to the source (`auth`); plaintext only with allow_plaintext.",
    )
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

    _arn = field_validator("msk_cluster_arn")(classmethod(lambda cls, v: optional_msk_arn(v)))

    @model_validator(mode="after")
    def _iam(self) -> SourceCluster:
        if self.auth.mode == "plaintext" and not self.allow_plaintext:
            raise field_error(
                "SourceCluster", ("auth", "mode"), self.auth.mode,
                "plaintext (the default) sends the data unauthenticated and in clear; set auth.mode to scram, mtls or iam, "
                "or opt in with source.allow_plaintext: true",
            )
        check_full_secret_arns(self.auth, "")
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
    kafka_version: str = Field("3.9.x", description=f"An MSK version supported for new clusters: {', '.join(SUPPORTED_MSK_VERSIONS)}.")
    instance_type: str = Field("kafka.m7g.large", description="MSK Standard broker type: kafka.t3.small, kafka.m5.large ... 24xlarge, kafka.m7g.large ... 16xlarge.")  # noqa: E501
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
            check_ids(v, SUBNET_ID, "subnet ID", "subnet-0a1b2c3d4e5f60718")
            if len(v) not in (2, 3):
                raise ValueError("MSK needs 2 or 3 client subnets in different AZs")
        return v

    @field_validator("scram_secret_arns")
    @classmethod
    def _scram_arns(cls, v: list[str]) -> list[str]:
        for arn in v:
            check_msk_scram_secret(arn, "scram_secret_arns entry")
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
    def _scram(self) -> MskCreate:
        if self.scram_secret_arns and not self.scram:
            raise ValueError("scram_secret_arns needs scram: true")
        if self.max_ebs_gb is None:
            self.max_ebs_gb = min(16384, 4 * self.ebs_gb)
        elif self.max_ebs_gb < self.ebs_gb:
            raise field_error(
                "MskCreate", ("max_ebs_gb",), self.max_ebs_gb,
                f"{self.max_ebs_gb} is below ebs_gb {self.ebs_gb} (MSK volumes only grow); raise max_ebs_gb or lower ebs_gb",
            )
        return self


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
    broker_type: str | None = Field(
        None,
        description="Existing cluster only: its broker instance type (e.g. kafka.m7g.large); preflight checks "
        "partitions per broker against AWS's limit for it (a created cluster uses create.instance_type).",
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

    _arn = field_validator("existing_cluster_arn")(classmethod(lambda cls, v: optional_msk_arn(v)))

    @field_validator("broker_type")
    @classmethod
    def _broker_type(cls, v: str | None) -> str | None:
        if v is not None and v not in MSK_INSTANCE_TYPES:
            family = ".".join(v.split(".")[:2])
            close = [t for t in MSK_INSTANCE_TYPES if t.startswith(family + ".")] or [t for t in MSK_INSTANCE_TYPES if "m7g" in t]
            raise ValueError(f"broker_type {v!r} is not an MSK broker type; use one of {', '.join(close)}")
        return v

    @model_validator(mode="after")
    def _one(self) -> TargetCluster:
        check_full_secret_arns(self.auth, "")
        if bool(self.create) == bool(self.existing_cluster_arn):
            raise ValueError("set exactly one of create (new MSK cluster) or existing_cluster_arn")
        if self.create:
            if self.auth.mode not in ("iam", "scram"):
                raise ValueError(f"a created cluster offers iam (and scram with create.scram: true); auth mode {self.auth.mode!r} is not available")
            if self.auth.mode == "scram":
                if not self.create.scram:
                    raise ValueError("auth mode 'scram' needs create.scram: true")
                check_msk_scram_secret(self.auth.secret_arn or "", "auth.secret_arn")
            if self.broker_type is not None:
                raise ValueError("broker_type is for existing clusters; a created cluster's is create.instance_type (remove broker_type)")
            if self.network is not None:
                raise ValueError("network is for existing clusters; a created cluster gets its own security group (remove network)")
        else:
            if self.auth.mode == "plaintext" and not self.allow_plaintext:
                raise field_error(
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

    @property
    def instance_type(self) -> str | None:
        """The brokers' instance type: ``create.instance_type``, or ``broker_type`` of an existing cluster."""
        return self.create.instance_type if self.create else self.broker_type

    def endpoint(self, bootstrap_servers: str) -> ClusterEndpoint:
        return ClusterEndpoint(alias=self.alias, bootstrap_servers=bootstrap_servers, auth=self.auth,
                               msk_broker_type=self.instance_type)
