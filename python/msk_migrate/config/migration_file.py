"""A migration described in one YAML file: the flow, without the AWS infrastructure.

Used by ``msk-migrate connectors render|apply --config`` and by runbook helpers. The environment
YAML of the CDKTF stacks embeds the same sections.

```yaml
source: {alias: source, bootstrap_servers: "broker1:9096", auth: {mode: scram, secret_arn: arn:aws:...}}
target: {alias: target, bootstrap_servers: "b-1.msk...:9098", auth: {mode: iam}}
migration: {topics: ["orders.*"], groups: [".*"], tasks_max: 8}
schema_registry: {source: "https://registry.corp:8081", target: "https://registry.msk/apis/ccompat/v7"}  # optional
```
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from .schema_registry import SchemaRegistrySection


class MigrationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: ClusterEndpoint
    target: ClusterEndpoint
    migration: MigrationSpec = Field(default_factory=MigrationSpec)
    worker: WorkerSpec = Field(default_factory=WorkerSpec)
    #: the registries `msk-migrate schemas` copies between (their Confluent-compatible APIs)
    schema_registry: SchemaRegistrySection | None = None

    @model_validator(mode="after")
    def _aliases(self) -> MigrationFile:
        if self.source.alias == self.target.alias:
            raise ValueError("source.alias and target.alias must differ")
        return self
