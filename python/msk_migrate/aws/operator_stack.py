"""What the stack tells the operator image: every endpoint, secret and network the task may use.

The stack writes these values into the task definition's environment (infra/mskinfra/ecs.py for the operator
task, infra/mskinfra/proof_follower.py for the proof follower); :func:`stack_environment` is the only writer
and :meth:`StackSettings.from_environ` the only reader. The entrypoint (:mod:`.operator_entry`) trusts them only
after ECS itself has said that no one overrode them (:mod:`.task_view`): a value the caller could have sent is
never read as the stack's.

============================================  ==================================================================
``MSK_MIGRATE_STACK_ENVIRONMENT``             the environment (YAML of the environment model: clusters, secrets
                                              as ARNs only, migration, worker, registries); commands get ``--env``
``MSK_MIGRATE_ENVIRONMENT``                   its name
``MSK_MIGRATE_TARGET_BOOTSTRAP``              the target's bootstrap servers (the stack's MSK cluster)
``MSK_MIGRATE_CONNECT_URL``                   the worker's REST URL (the operator load balancer's listener)
``MSK_MIGRATE_CONNECT_SECRET_ARN``            the worker's REST credentials (Secrets Manager)
``MSK_MIGRATE_CLEANUP_ROLE_ARN``              the role ``cleanup --yes`` assumes (IAM targets)
``MSK_MIGRATE_STACK_SUBNETS``                 JSON list: the subnets a task of this definition may run in
``MSK_MIGRATE_STACK_SECURITY_GROUPS``         JSON list: exactly the security groups it runs with
``MSK_MIGRATE_STACK_ARGV``                    a service's own request (the proof follower), JSON list of words
``MSK_MIGRATE_CONFIG_YAML``                   a service's flow file (the proof follower's ``--config``)
============================================  ==================================================================
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..config.environ import CLEANUP_ROLE_ENV, SECRET_ARN_ENV

ENVIRONMENT_YAML_ENV = "MSK_MIGRATE_STACK_ENVIRONMENT"
ENVIRONMENT_NAME_ENV = "MSK_MIGRATE_ENVIRONMENT"
TARGET_BOOTSTRAP_ENV = "MSK_MIGRATE_TARGET_BOOTSTRAP"
CONNECT_URL_ENV = "MSK_MIGRATE_CONNECT_URL"
CONNECT_SECRET_ARN_ENV = SECRET_ARN_ENV
SUBNETS_ENV = "MSK_MIGRATE_STACK_SUBNETS"
SECURITY_GROUPS_ENV = "MSK_MIGRATE_STACK_SECURITY_GROUPS"
STACK_ARGV_ENV = "MSK_MIGRATE_STACK_ARGV"
CONFIG_ENV = "MSK_MIGRATE_CONFIG_YAML"

#: Every name the stack may set, and so every name of this family the entrypoint accepts in its environment.
STACK_NAMES = (ENVIRONMENT_YAML_ENV, ENVIRONMENT_NAME_ENV, TARGET_BOOTSTRAP_ENV, CONNECT_URL_ENV, CONNECT_SECRET_ARN_ENV,
               CLEANUP_ROLE_ENV, SUBNETS_ENV, SECURITY_GROUPS_ENV, STACK_ARGV_ENV, CONFIG_ENV)
#: The stack's values a command reads from its environment (click ``envvar``s and the cleanup role).
COMMAND_NAMES = (ENVIRONMENT_NAME_ENV, TARGET_BOOTSTRAP_ENV, CONNECT_URL_ENV, CONNECT_SECRET_ARN_ENV, CLEANUP_ROLE_ENV)


#: The migration's own S3 prefixes in the config bucket a caller may name (``{migration}`` filled in): its
#: ledger (evidence and certificates are under it), the proof follower's marks, the validation job's reports
#: and the connector configs the deploy rendered (read by ``connectors apply --from-s3``).
S3_PREFIXES = ("ledger/{migration}/", "proof/{migration}/", "validation/reports/", "connectors/")


@dataclass(frozen=True)
class Prefixes:
    """Where a caller may point an S3 option: ``s3://<bucket>/<prefix>…`` of the migration."""

    bucket: str
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, bucket: str, migration: str) -> Prefixes:
        return cls(bucket, tuple(p.format(migration=migration) for p in S3_PREFIXES))

    def admits(self, value: str) -> bool:
        """True for ``s3://<bucket>/<one of the prefixes>…`` with no empty, ``.`` or ``..`` segment and no escapes."""
        head = f"s3://{self.bucket}/"
        if not value.startswith(head):
            return False
        key = value[len(head):]
        parts = key.split("/")
        if any(p in (".", "..") for p in parts) or any(p == "" for p in parts[:-1]) or "\\" in key or "%" in key:
            return False
        return any(key.startswith(p) for p in self.prefixes)

    def describe(self) -> str:
        return ", ".join(f"s3://{self.bucket}/{p}" for p in self.prefixes)


class RequestRefused(Exception):
    """A caller's request the operator grammar does not admit: one line naming the option and the fix."""

    def __init__(self, field: str, message: str, fix: str):
        self.field, self.message, self.fix = field, message, fix
        super().__init__(f"{field}: {message} (fix: {fix})")


class StackIncomplete(Exception):
    """The task definition lacks a value the entrypoint needs (a task definition the stack did not write)."""


@dataclass(frozen=True)
class StackSettings:
    """The values of one task definition, as the stack wrote them."""

    values: Mapping[str, str]
    subnets: tuple[str, ...]
    security_groups: tuple[str, ...]

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> StackSettings:
        values = {k: environ[k] for k in STACK_NAMES if environ.get(k)}
        return cls(values, _json_list(values, SUBNETS_ENV), _json_list(values, SECURITY_GROUPS_ENV))

    @property
    def environment_yaml(self) -> str | None:
        return self.values.get(ENVIRONMENT_YAML_ENV)

    @property
    def environment_name(self) -> str | None:
        return self.values.get(ENVIRONMENT_NAME_ENV)

    def command_environment(self) -> dict[str, str]:
        """The stack's values a command reads from its environment."""
        return {k: self.values[k] for k in COMMAND_NAMES if self.values.get(k)}


def string_list(raw: str, name: str) -> list[str]:
    """``raw`` as the non-empty JSON list of non-empty strings it must be; ValueError naming ``name`` otherwise."""
    try:
        items = json.loads(raw)
    except ValueError:
        raise ValueError(f"{name} is not JSON: give a JSON list of strings") from None
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i for i in items):
        raise ValueError(f"{name} must be a non-empty JSON list of strings")
    return items


def _json_list(values: Mapping[str, str], name: str) -> tuple[str, ...]:
    raw = values.get(name)
    if not raw:
        raise StackIncomplete(f"{name} is not set: this task definition was not written by the stack")
    try:
        return tuple(string_list(raw, name))
    except ValueError as exc:
        raise StackIncomplete(str(exc)) from None


def environment_yaml(cfg) -> str:
    """The environment as the task reads it back with ``--env`` (the model's own dump: equal after loading)."""
    import yaml

    return yaml.safe_dump(cfg.model_dump(mode="json", exclude_defaults=True, by_alias=True), sort_keys=True)


def stack_environment(*, subnets: list[str], security_groups: list[str], environment: str | None = None,
                      environment_name: str | None = None, target_bootstrap: str | None = None, connect_url: str | None = None,
                      connect_secret_arn: str | None = None, cleanup_role_arn: str | None = None,
                      stack_argv: list[str] | None = None, flow_yaml: str | None = None) -> dict[str, str]:
    """The task definition's environment for the operator image (the stack's side of :class:`StackSettings`)."""
    values = {
        ENVIRONMENT_YAML_ENV: environment,
        ENVIRONMENT_NAME_ENV: environment_name,
        TARGET_BOOTSTRAP_ENV: target_bootstrap,
        CONNECT_URL_ENV: connect_url,
        CONNECT_SECRET_ARN_ENV: connect_secret_arn,
        CLEANUP_ROLE_ENV: cleanup_role_arn,
        SUBNETS_ENV: json.dumps(list(subnets)),
        SECURITY_GROUPS_ENV: json.dumps(list(security_groups)),
        STACK_ARGV_ENV: json.dumps(stack_argv) if stack_argv else None,
        CONFIG_ENV: flow_yaml,
    }
    return {k: v for k, v in values.items() if v}
