"""The root model :class:`EnvironmentConfig` of ``infra/environments/<env>.yaml`` and its loaders."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...errors import UsageError
from ..identifiers import (
    SUBNET_ID,
    VPC_ID,
    check_account_id,
    check_env_name,
    check_ids,
    check_image_tag,
    check_kms_key_arn,
    check_region,
    parse_msk_arn,
    partition_of,
)
from ..loader import load_yaml_model
from ..migration import MigrationSpec, WorkerSpec
from ..schema_registry import SchemaRegistrySection
from ._fields import field_error
from .clusters import SAFE_BROKER_DEFAULTS, SourceCluster, TargetCluster
from .monitoring import MonitoringConfig
from .network import NetworkConfig, OperatorAccess, OperatorTls, acm_certificate_region
from .proof import ProofService
from .services import ConnectService
from .state import BackendConfig, EcrConfig, default_prefix, ecr_repository_names
from .validation import ValidationHomes

#: CloudWatch Logs accepts only these retention periods (days).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)

_PREFIX = re.compile(r"^[a-z][a-z0-9-]{1,38}[a-z0-9]$")


class EnvironmentConfig(BaseModel):
    """One environment; the stack ``migration-<name>`` is built from it alone."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Environment name; equals the file name (dev for dev.yaml).")
    account_id: str = Field(description="AWS account (quoted 12 digits); the provider gets allowed_account_ids = [account_id], so credentials of another account fail before changing anything.")  # noqa: E501
    region: str = Field(description="AWS region with MSK, e.g. eu-west-1 (checked against botocore's endpoint data).")
    owner: str = Field(description="Team or person owning the resources (default tag 'owner').")
    project: str = Field("msk-migrate", description="Default tag 'project'.")
    prefix: str | None = Field(None, description="Resource name prefix. Default: msk-migrate-<name>.")
    tags: dict[str, str] = Field(default_factory=dict, description="Extra default tags.")
    vpc_id: str = Field(description="VPC of the ECS tasks (and of the created MSK cluster).")
    subnet_ids: list[str] = Field(description="Private subnets for tasks (and MSK brokers by default), 2+ AZs.")
    operator_access: OperatorAccess = Field(description="Who reaches Connect REST, Prometheus and Grafana.")
    operator_tls: OperatorTls = Field(description="ACM certificate of the operator endpoints (HTTPS only).")
    network: NetworkConfig = Field(default_factory=NetworkConfig, description="How the tasks reach AWS APIs: VPC endpoints the stack makes "
                                   "(`network.aws_endpoints: create`) or the VPC's own (`existing`, `network.https_egress`).")
    source: SourceCluster = Field(description="The cluster migrated from (`source`).")
    target: TargetCluster = Field(description="The MSK cluster migrated to: created (`target-<env>`) or existing (`target`).")
    migration: MigrationSpec = Field(default_factory=MigrationSpec, description="What MM2 replicates (`migration`).")
    worker: WorkerSpec = Field(default_factory=WorkerSpec, description="The Connect worker group (`worker`).")
    connect: ConnectService = Field(default_factory=ConnectService, description="The Connect service size and autoscaling (`connect`).")
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig, description="Cloud Map namespace, Prometheus, Grafana, Alertmanager (`monitoring`).")
    proof: ProofService = Field(default_factory=ProofService,
                                description="The proof follower service (`validate --follow` on Fargate; `proof`), off by default.")
    validation: ValidationHomes = Field(default_factory=ValidationHomes,
                                        description="The validation job's second home, an AWS Glue 5.0 job (`validation`), off by default.")
    backend: BackendConfig | None = Field(None, description="S3 remote state; absent = local state.")
    log_retention_days: int = Field(30, description="CloudWatch retention of every log group.")
    log_kms: bool = Field(True, description="Encrypt log groups with the stack's KMS key.")
    ledger_retention_days: int = Field(
        365, ge=1, le=36500,
        description="Days every object version written to the config bucket (the ledger's events and evidence, "
        "proof marks, connector configs) stays under S3 Object Lock in GOVERNANCE mode: until then no one without "
        "s3:BypassGovernanceRetention can delete that version or shorten its retention (docs/infra.md, The ledger's bucket).")
    secrets_kms_key_arns: list[str] = Field(
        default_factory=list,
        description="Customer-managed KMS keys of the source/target secrets (execution role may decrypt via Secrets Manager).",
    )
    image_tag: str = Field(description="Image tag used when no build manifest pins digests.")
    ecr: EcrConfig = Field(default_factory=EcrConfig, description="ECR lifecycle (`ecr`).")
    schema_registry: SchemaRegistrySection | None = Field(
        None, description="The source and target schema registries' Confluent-API URLs (`msk-migrate schemas`, the "
        "validator's proof per record); their basic-auth secrets are read by the operator task.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_env_name(v)

    @field_validator("account_id", mode="before")
    @classmethod
    def _account(cls, v: object) -> object:
        return check_account_id(v)

    @field_validator("region")
    @classmethod
    def _region(cls, v: str) -> str:
        return check_region(v)

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
        if not VPC_ID.match(v):
            raise ValueError(f"{v!r} is not a VPC ID (e.g. vpc-0a1b2c3d4e5f60718)")
        return v

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, v: list[str]) -> list[str]:
        check_ids(v, SUBNET_ID, "subnet ID", "subnet-0a1b2c3d4e5f60718")
        if len(v) < 2:
            raise ValueError("give at least 2 private subnets in different AZs")
        return v

    # ---- cross-field checks: model validators, run once every field is valid (no field-order dependence) ----

    @model_validator(mode="after")
    def _operator_tls_region(self) -> EnvironmentConfig:
        cert_region = acm_certificate_region(self.operator_tls.certificate_arn)
        if cert_region != self.region:
            raise field_error("EnvironmentConfig", ("operator_tls", "certificate_arn"), self.operator_tls.certificate_arn,
                              f"the certificate is in {cert_region}; a load balancer in {self.region} needs one from "
                              f"{self.region} (request or import it there)")
        return self

    @model_validator(mode="after")
    def _target_placement(self) -> EnvironmentConfig:
        t = self.target
        if t.create:
            msk_subnets = t.create.subnet_ids or self.subnet_ids
            if len(msk_subnets) not in (2, 3):
                raise field_error(
                    "EnvironmentConfig", ("target", "create", "subnet_ids"), None,
                    f"MSK needs 2 or 3 client subnets and subnet_ids has {len(msk_subnets)}; set create.subnet_ids",
                )
            if t.create.broker_count % len(msk_subnets):
                raise field_error(
                    "EnvironmentConfig", ("target", "create", "broker_count"), t.create.broker_count,
                    f"{t.create.broker_count} is not a multiple of the {len(msk_subnets)} broker subnets; "
                    f"use {len(msk_subnets) * max(1, t.create.broker_count // len(msk_subnets))} or adjust the subnets",
                )
        if t.existing_cluster_arn:
            arn = parse_msk_arn(t.existing_cluster_arn)
            if (arn["account"], arn["region"]) != (self.account_id, self.region):
                raise field_error(
                    "EnvironmentConfig", ("target", "existing_cluster_arn"), t.existing_cluster_arn,
                    f"the cluster is in {arn['account']}/{arn['region']}, the environment in {self.account_id}/{self.region}; "
                    "use a cluster of this account and region",
                )
        return self

    @model_validator(mode="after")
    def _replication_factors(self) -> EnvironmentConfig:
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
                raise field_error(
                    "EnvironmentConfig", loc, rf,
                    f"{rf} is below min.insync.replicas {min_isr} + 1 (one broker down would stop writes); use at least {min_isr + 1}",
                )
            if brokers is not None and rf > brokers:
                raise field_error(
                    "EnvironmentConfig", loc, rf,
                    f"{rf} is more than the {brokers} brokers of target.create.broker_count; lower it or add brokers",
                )
        return self

    @model_validator(mode="after")
    def _people_are_not_the_grafana_admin(self) -> EnvironmentConfig:
        """A person's Grafana user is made with their name as login (images/grafana/people.sh), so a person named
        like the admin would reset the break-glass admin's password to theirs."""
        admin = self.monitoring.grafana.admin_user
        if admin.lower() in self.connect.people:
            raise field_error(
                "EnvironmentConfig", ("connect", "people"), self.connect.people,
                f"{admin.lower()!r} is Grafana's admin login (monitoring.grafana.admin_user), not a person: name the "
                "person, or change the admin login",
            )
        return self

    @model_validator(mode="after")
    def _registries_have_a_network(self) -> EnvironmentConfig:
        """The stack's tasks reach a registry only where the environment says it is (no 443 to everywhere): a
        registry without its network is refused when the file loads, before any synth or command."""
        regs = self.schema_registry
        for role in ("source", "target"):
            if regs is not None and getattr(regs, f"{role}_network") is None:
                raise field_error(
                    "EnvironmentConfig", ("schema_registry", f"{role}_network"), None,
                    f"the tasks reach the {role} registry ({getattr(regs, role)}) only where this says, and it is not "
                    "set: give its cidrs, prefix_list_ids or security_group_ids",
                )
        return self

    @model_validator(mode="after")
    def _connect_fits(self) -> EnvironmentConfig:
        c, migration, worker = self.connect, self.migration, self.worker
        if c.max_capacity > migration.tasks_max:
            raise field_error(
                "EnvironmentConfig", ("connect", "max_capacity"), c.max_capacity,
                f"{c.max_capacity} is above migration.tasks_max {migration.tasks_max} (workers beyond tasks.max get no "
                "MirrorSource task and sit idle); lower connect.max_capacity or raise migration.tasks_max",
            )
        if c.partitions is not None:
            worker = self._sized_by_partitions()
        heap_mib = int(worker.heap[:-1]) * (1024 if worker.heap[-1] in "gG" else 1)
        if heap_mib > c.memory * 3 // 4:
            raise field_error(
                "EnvironmentConfig", ("connect", "memory"), c.memory,
                f"{c.memory} MiB leaves too little room beside worker.heap {worker.heap} (heap <= 75% of task "
                "memory); raise connect.memory or lower worker.heap",
            )
        return self

    def _sized_by_partitions(self) -> WorkerSpec:
        """``connect.partitions`` given: ``worker.heap`` and ``connect.memory`` left out take the memory model's
        figures for the busiest of ``connect.min_capacity`` workers (never below the defaults); given ones below
        it are refused with the figure. Source brokers: the addresses of ``source.bootstrap_servers``."""
        from ..worker_sizing import OVERHEAD_MIB, heap_mib, load_for, worker_memory
        from .services import FARGATE_SIZES

        c, worker = self.connect, self.worker
        assert c.partitions is not None
        brokers = len([a for a in self.source.bootstrap_servers.split(",") if a.strip()]) if self.source.bootstrap_servers else 1
        need = worker_memory(load_for(self.migration, c.partitions, max(brokers, 1), c.min_capacity))
        why = f"connect.partitions {c.partitions:,} need it ({need.explain()})"
        if "heap" not in worker.model_fields_set:
            if need.heap_mib > heap_mib(worker.heap):
                worker = self.worker = worker.model_copy(update={"heap": need.heap})
        elif heap_mib(worker.heap) < need.heap_mib:
            raise field_error("EnvironmentConfig", ("worker", "heap"), worker.heap,
                              f"{worker.heap} is below the {need.heap} {why}; set worker.heap: {need.heap} or more, "
                              "or leave it out to take the model's")
        task = max(heap_mib(worker.heap) + OVERHEAD_MIB, -(-heap_mib(worker.heap) * 4 // 3))
        if "memory" not in c.model_fields_set and c.memory < task:
            fits = [m for m in FARGATE_SIZES[c.cpu] if m >= task]
            if not fits:
                raise field_error("EnvironmentConfig", ("connect", "cpu"), c.cpu,
                                  f"cpu {c.cpu} allows at most {FARGATE_SIZES[c.cpu][-1]} MiB, below the {task} MiB task "
                                  f"memory worker.heap {worker.heap} needs; raise connect.cpu")
            c.memory = fits[0]
        elif c.memory < task:
            raise field_error("EnvironmentConfig", ("connect", "memory"), c.memory,
                              f"{c.memory} MiB is below the {task} MiB worker.heap {worker.heap} + {OVERHEAD_MIB} MiB off-heap "
                              f"needs; set connect.memory: {task} or more (a Fargate size for cpu {c.cpu})")
        return worker

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
            check_kms_key_arn(arn)
        return v

    @field_validator("image_tag")
    @classmethod
    def _tag(cls, v: str) -> str:
        return check_image_tag(v)

    # ---- derived names (one place, shared by the stack and build_images.py) ----

    @property
    def resource_prefix(self) -> str:
        return self.prefix or default_prefix(self.name)

    @property
    def connect_rest_secret_name(self) -> str:
        """The Connect REST basic-auth secret the stack generates (``<prefix>/connect-rest``); each person's own
        login of ``connect.people`` is ``<prefix>/connect-rest/<person>``. A command given ``--env`` refuses any
        other secret for its worker (:func:`msk_migrate.config.flow.check_rest_secret`)."""
        return f"{self.resource_prefix}/connect-rest"

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

    def registry_secret_arns(self) -> list[str]:
        """The schema registries' basic-auth secrets (the operator task reads them; Connect never does)."""
        r = self.schema_registry
        return sorted({a for a in ((r.source_secret_arn, r.target_secret_arn) if r else ()) if a})


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
    for p, env in zip(paths, envs, strict=False):
        if env.name in names:
            raise UsageError(f"{p}: name", f"environment {env.name!r} is also defined by {names[env.name]}", "keep one file per environment")
        names[env.name] = Path(p)
    seen: dict[str, str] = {}
    for p, env in zip(paths, envs, strict=False):
        if env.resource_prefix in seen:
            raise UsageError(f"{Path(p).name}: prefix", f"{env.resource_prefix!r} is also used by {seen[env.resource_prefix]}", "give each environment its own prefix")  # noqa: E501
        seen[env.resource_prefix] = Path(p).name
    return envs
