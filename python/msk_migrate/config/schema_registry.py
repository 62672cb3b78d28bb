"""The ``schema_registry`` section of an environment YAML or a flow file: where the source and target
registries' Confluent-compatible APIs are.

    schema_registry:
      source: https://registry.corp.example:8081
      target: https://registry.msk.example/apis/ccompat/v7

Optional. A flow file's model (:class:`~.migration_file.MigrationFile`) and the environment model
(:class:`~.environment.model.EnvironmentConfig`) both declare it; the commands read the section here from the
file as it is (:func:`registry_file`), so a registry command needs no cluster settings; which registry a command
then talks to is decided in one place, :func:`msk_migrate.schemas.registries.resolve_registries`. Credentials never live here: each registry's
basic auth comes from a Secrets Manager secret (``*_secret_arn``) or MSK_MIGRATE_<ROLE>_REGISTRY_USER / _PASSWORD.

In an environment, ``source_network`` / ``target_network`` say where each registry is (CIDRs, prefix lists, security
groups, like ``source.network``): the stack's tasks that talk to the registries (the operator task, the proof follower,
the validation job) get egress to those peers on the port of the registry's URL, and nowhere else.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError
from .identifiers import PREFIX_LIST_ID, SECURITY_GROUP_ID, check_ids
from .loader import safe_load

#: A URL's port when it names none.
_DEFAULT_PORTS = {"https": 443, "http": 80}


class RegistryNetwork(BaseModel):
    """Where one registry is on the network: CIDR blocks, managed prefix lists and/or security groups (never ``/0``).

    Its own small model rather than the environment's ``Peers``: the environment model imports this module."""

    model_config = ConfigDict(extra="forbid")

    cidrs: list[str] = Field(default_factory=list, description="IPv4/IPv6 CIDR blocks of the registry, e.g. 10.20.5.0/24.")
    prefix_list_ids: list[str] = Field(default_factory=list, description="Managed prefix list IDs (pl-...).")
    security_group_ids: list[str] = Field(default_factory=list, description="Security group IDs (sg-...) of the registry "
                                          "(or its load balancer) in this VPC or a peered one.")

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            try:
                net = ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR block ({exc}); write it like 10.20.5.0/24") from None
            if net.prefixlen == 0:
                raise ValueError(f"{cidr} opens the flow to the whole internet; give the registry's own CIDR, a prefix list "
                                 "or a security group")
        if len(set(v)) != len(v):
            raise ValueError("duplicate CIDR entries; list each once")
        return v

    @field_validator("prefix_list_ids")
    @classmethod
    def _pls(cls, v: list[str]) -> list[str]:
        return check_ids(v, PREFIX_LIST_ID, "prefix list ID", "pl-0a1b2c3d4e5f60718")

    @field_validator("security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        return check_ids(v, SECURITY_GROUP_ID, "security group ID", "sg-0a1b2c3d4e5f60718")

    @model_validator(mode="after")
    def _some(self) -> RegistryNetwork:
        if not (self.cidrs or self.prefix_list_ids or self.security_group_ids):
            raise ValueError("give at least one of cidrs, prefix_list_ids, security_group_ids (where the registry is)")
        return self


class SchemaRegistrySection(BaseModel):
    """The ``schema_registry`` section: each registry's Confluent-compatible API and its basic-auth secret."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="The source registry's Confluent-compatible API URL (e.g. https://registry.corp:8081).")
    target: str = Field(description="The target registry's Confluent-compatible API URL (Apicurio: https://HOST/apis/ccompat/v7); "
                        "never AWS Glue Schema Registry, which cannot keep the records' ids.")
    source_secret_arn: str | None = Field(None, description="Secrets Manager secret (JSON username, password) of the source "
                                          "registry's basic auth, when it has one.")
    target_secret_arn: str | None = Field(None, description="Secrets Manager secret (JSON username, password) of the target "
                                          "registry's basic auth, when it has one.")
    source_network: RegistryNetwork | None = Field(None, description="Where the source registry is (CIDRs, prefix lists, "
                                                   "security groups); required in an environment: the tasks reach it there "
                                                   "only, on its URL's port.")
    target_network: RegistryNetwork | None = Field(None, description="Where the target registry is; required in an "
                                                   "environment, like source_network.")

    def port(self, role: Literal["source", "target"]) -> int:
        """The TCP port of the registry's URL (its scheme's default when it names none)."""
        url = urlsplit(getattr(self, role))
        try:
            port = url.port
        except ValueError:
            port = None
        return port or _DEFAULT_PORTS.get(url.scheme.lower(), 443)


@dataclass(frozen=True)
class RegistryFile:
    """The flow's file (``--env`` / ``--config``) as the registries see it: the option that named it, the file, and
    its ``schema_registry`` section (None: the file has none). The input of the one registry resolver
    (:func:`msk_migrate.schemas.registries.resolve_registries`)."""

    option: str  #: ``--env`` or ``--config``
    path: Path
    section: SchemaRegistrySection | None

    def where(self, key: str) -> str:
        """How messages name one of the section's settings, e.g. ``--config (schema_registry.source)``."""
        return f"{self.option} (schema_registry.{key})"

    def no_section(self) -> UsageError:
        """The bad input of a file that has no section where one is needed, naming the option."""
        return UsageError(self.option, f"{self.path} has no schema_registry section",
                          "add schema_registry: {source: URL, target: URL}, or pass --source-registry/--target-registry")

    def required(self) -> SchemaRegistrySection:
        """The section; a file without one is bad input (:meth:`no_section`)."""
        if self.section is None:
            raise self.no_section()
        return self.section


@dataclass(frozen=True)
class LocalRegistries:
    """The local environment's registries: its directory (named in messages) and role -> Confluent-API URL
    (empty when it runs none, or when there is no local environment there). The input of the one registry
    resolver beside :class:`RegistryFile`."""

    base: Path
    urls: Mapping[str, str] = field(default_factory=dict)


def registry_file(env: str | None, config: Path | None) -> RegistryFile:
    """The ``schema_registry`` section of ``--env`` (infra/environments/NAME.yaml or a path) or ``--config``, read
    from the file as it is (a registry command needs no cluster settings); an unreadable file or a malformed
    section is bad input naming the option, a missing section is ``section=None``."""
    from .environment_files import environment_path

    option = "--env" if env else "--config"
    path = environment_path(env) if env else Path(str(config))
    try:
        raw = safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(option, f"cannot read {path} ({type(exc).__name__})", "give a readable YAML file") from None
    section = raw.get("schema_registry") if isinstance(raw, dict) else None
    return RegistryFile(option, path, _validated(option, section) if section else None)


def optional_registry_section(env: str | None, config: Path | None) -> SchemaRegistrySection | None:
    """The section of ``--env`` / ``--config`` when the file has one, else None (a malformed one is bad input)."""
    return registry_file(env, config).section


def registry_section(env: str | None, config: Path | None) -> SchemaRegistrySection:
    """The section of ``--env`` (infra/environments/NAME.yaml or a path) or ``--config``; a file without one is
    bad input naming the option."""
    return registry_file(env, config).required()


def _validated(option: str, section: Any) -> SchemaRegistrySection:
    try:
        return SchemaRegistrySection.model_validate(section)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"{option} (schema_registry.{'.'.join(map(str, first['loc']))})", first["msg"],
                         "give schema_registry: {source: URL, target: URL}") from None
