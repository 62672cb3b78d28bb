"""The ``schema_registry`` section of an environment YAML or a flow file: where the source and target
registries' Confluent-compatible APIs are.

    schema_registry:
      source: https://registry.corp.example:8081
      target: https://registry.msk.example/apis/ccompat/v7

Optional. A flow file's model (:class:`~.migration_file.MigrationFile`) and the environment model
(:class:`~.environment.model.EnvironmentConfig`) both declare it; the commands read the section here from the
file as it is, so a registry command needs no cluster settings. Credentials never live here: each registry's
basic auth comes from a Secrets Manager secret (``*_secret_arn``) or MSK_MIGRATE_<ROLE>_REGISTRY_USER / _PASSWORD.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UsageError
from .loader import safe_load


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


def optional_registry_section(env: str | None, config: Path | None) -> SchemaRegistrySection | None:
    """The section of ``--env`` / ``--config`` when the file has one, else None (a malformed one is bad input)."""
    try:
        return registry_section(env, config)
    except UsageError as exc:
        if "has no schema_registry section" in str(exc):
            return None
        raise


def registry_section(env: str | None, config: Path | None) -> SchemaRegistrySection:
    """The section of ``--env`` (infra/environments/NAME.yaml or a path) or ``--config``."""
    from .flow import environment_path

    option = "--env" if env else "--config"
    path = environment_path(env) if env else Path(str(config))
    try:
        raw = safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(option, f"cannot read {path} ({type(exc).__name__})", "give a readable YAML file") from None
    section = raw.get("schema_registry") if isinstance(raw, dict) else None
    if not section:
        raise UsageError(option, f"{path} has no schema_registry section",
                         "add schema_registry: {source: URL, target: URL}, or pass --source-registry/--target-registry")
    try:
        return SchemaRegistrySection.model_validate(section)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"{option} (schema_registry.{'.'.join(map(str, first['loc']))})", first["msg"],
                         "give schema_registry: {source: URL, target: URL}") from None
