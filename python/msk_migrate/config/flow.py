"""What an operator command acts on: ONE flow (clusters, migration, worker) and ONE Connect worker.

:class:`Flow` is the configuration a command resolved; :func:`read_flow` reads it from an environment
YAML of ``infra/environments/`` (``--env``) or a flow file for lab clusters (``--config``: the ``source``,
``target``, ``migration`` and ``worker`` sections of an environment YAML, same models). The command
options, the local rehearsal environment (``--local``) and the console banner are the commands layer's
(:mod:`msk_migrate.commands.flow`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..errors import UsageError
from .environment_files import environment_path
from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from .recorded import load_record, owner_of, save_record
from .schema_registry import LocalRegistries, RegistryFile


@dataclass(frozen=True)
class Found:
    """What a command proved about what it reached, recorded once per command: the clusters' ids and the worker
    (its Kafka cluster id, this migration's connectors there). Built up as each check passes, never edited."""

    source_cluster_id: str | None = None
    target_cluster_id: str | None = None
    worker: dict[str, Any] | None = None

    def with_clusters(self, source_cluster_id: str | None, target_cluster_id: str | None) -> Found:
        return replace(self, source_cluster_id=source_cluster_id, target_cluster_id=target_cluster_id)

    def with_worker(self, worker: dict[str, Any] | None) -> Found:
        return replace(self, worker=worker)


def talked_to(flow: Flow | None, found: Found, *, source: str | None, target: str | None, worker: str | None) -> dict[str, Any]:
    """The one ``talked_to`` of every outcome: the flow's file and environment, the clusters and worker reached,
    and what was proved about them (:class:`Found`)."""
    w = found.worker or {}
    return {"config": flow.origin if flow else None, "environment": flow.env_name if flow else None,
            "source": source, "target": target, "worker": worker,
            "source_cluster_id": found.source_cluster_id, "target_cluster_id": found.target_cluster_id,
            "worker_kafka_cluster_id": w.get("kafka_cluster_id"), "worker_connectors": w.get("connectors")}


@dataclass
class Flow:
    origin: str  #: where the flow came from, as printed
    source: ClusterEndpoint
    target: ClusterEndpoint | None
    migration: MigrationSpec
    worker: WorkerSpec
    connect_url: str | None = None
    connect_ca: str | None = None  #: PEM CA bundle of an HTTPS worker with a private CA (``--connect-ca``)
    connect_secret_arn: str | None = None  #: the worker's REST credentials secret (``--connect-secret-arn``)
    env_name: str | None = None  #: the environment (``--env``) the flow came from
    #: ``source``/``target`` -> the MSK cluster ARN the environment names (an MSK-IAM source, an existing target)
    msk_cluster_arns: dict[str, str] = field(default_factory=dict)
    #: what a command that reaches the clusters without a session (``connectors``, ``status``, ``acls``) proved
    #: about them: what ``connectors apply``'s first apply records. Runbook commands keep theirs on the
    #: session (``MigrationSession.found``), of the same type.
    found: Found = field(default_factory=Found)
    #: where the migration's ledger lives (msk_migrate.ledger.location): set where the flow is read, from
    #: the same file or directory the flow came from, so no caller parses :attr:`origin` for it
    ledger_location: str | None = None
    #: ``--env``'s Connect REST secrets, as (region, account, name): the stack's ``<prefix>/connect-rest`` and each
    #: person's ``<prefix>/connect-rest/<person>``; the only secrets a command sends to this flow's worker
    rest_secret: tuple[str, str, str] | None = None
    #: the file's ``schema_registry`` section as read with the flow (``--env``/``--config``; its section may be None):
    #: the input of the one registry resolver (msk_migrate.schemas.registries), so no command reads the file again
    registry_file: RegistryFile | None = None
    #: the local environment's registries (``--local`` without a file): the resolver's other input
    local_registries: LocalRegistries | None = None

    def registry_urls(self) -> dict[str, str] | None:
        """``{"source": URL, "target": URL}`` the flow names (its file's section, else the local environment's
        registries), or None: what the flow says, as preflight reports it. Which registry a command talks to
        (its options first) is the resolver's to decide."""
        if self.registry_file is not None:
            section = self.registry_file.section
            return {"source": section.source, "target": section.target} if section is not None else None
        urls = self.local_registries.urls if self.local_registries is not None else {}
        return {"source": urls["source"], "target": urls["target"]} if "source" in urls and "target" in urls else None

    def record_first_apply(self) -> None:
        """``connectors apply --env``: the environment's clusters become the recorded ones (first apply only)."""
        if self.env_name and self.found.target_cluster_id is not None and self.target is not None:
            save_record(self.env_name, target_cluster_id=self.found.target_cluster_id,
                        source_cluster_id=self.found.source_cluster_id,
                        target_bootstrap=self.target.bootstrap_servers, source_bootstrap=self.source.bootstrap_servers,
                        connect_url=self.connect_url, migration=self.migration.name)

    def require_target(self, why: str) -> ClusterEndpoint:
        if self.target is None:
            raise UsageError("--target-bootstrap", f"{why} needs the target cluster, whose bootstrap servers the "
                             "environment YAML does not hold (the stack creates the cluster)",
                             "pass --target-bootstrap with the stack output target_bootstrap_brokers_connect")
        return self.target

    def require_connect(self) -> str:
        if not self.connect_url:
            raise UsageError("--connect-url", "this command talks to a Kafka Connect worker and none was given",
                             "pass --connect-url https://HOST:8083 (stack output connect_rest_url), "
                             "or --local for the rehearsal worker")
        return self.connect_url

    def describe(self) -> str:
        parts = [f"config: {self.origin}",
                 f"source: {self.source.bootstrap_servers} ({self.source.auth.mode})",
                 f"target: {self.target.bootstrap_servers} ({self.target.auth.mode})" if self.target else "target: -"]
        if self.connect_url:
            parts.append(f"worker: {self.connect_url}")
        return " | ".join(parts)


def check_connect_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError("--connect-url", f"{url!r} is not an http(s) URL",
                         "give the worker's REST URL, e.g. https://kafka-connect.example:8083")
    try:
        parsed.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise UsageError("--connect-url", f"{url!r} has an invalid port", "use http(s)://HOST:PORT") from None
    return url.rstrip("/")


#: The exported variables an operator command reads, by option.
VARIABLES = {"connect_url": "MSK_MIGRATE_CONNECT_URL", "target_bootstrap": "MSK_MIGRATE_TARGET_BOOTSTRAP"}
#: The key of each in an environment's record (:mod:`.recorded`).
_RECORD_KEYS = {"connect_url": "connect_url", "target_bootstrap": "target_bootstrap"}


def check_variables(env: str, region: str, values: dict[str, str | None], from_variables: set[str]) -> None:
    """An exported variable (``MSK_MIGRATE_CONNECT_URL``, ``MSK_MIGRATE_TARGET_BOOTSTRAP``) that contradicts
    ``--env`` is bad input (exit 2, naming both sides): it holds another environment's recorded value, a
    value other than this environment's record, or an MSK bootstrap in another AWS region."""
    from .identifiers import msk_region

    rec = load_record(env) or {}
    for opt in sorted(from_variables):
        value, var = values.get(opt), VARIABLES.get(opt)
        if not value or not var:
            continue
        key = _RECORD_KEYS[opt]
        other = owner_of(key, value, env)
        if other:
            raise UsageError(var, f"{value} is environment {other}'s {key.replace('_', ' ')}, not {env}'s (--env {env})",
                             f"unset {var}, or pass --env {other}")
        if rec.get(key) and str(rec[key]).rstrip("/") != value.rstrip("/"):
            raise UsageError(var, f"{value} contradicts --env {env}, whose recorded {key.replace('_', ' ')} is {rec[key]}",
                             f"unset {var} (or export {env}'s value)")
        if opt == "target_bootstrap":
            where = msk_region(value, environ={})
            if where and where != region:
                raise UsageError(var, f"{value} is an MSK cluster in {where}; --env {env} is in {region}",
                                 f"unset {var}, or pass the --env of that cluster")


def check_rest_secret(flow: Flow, arn: str, field: str) -> None:
    """``arn`` (the worker's REST credentials secret) beside ``--env`` must be one of that environment's REST
    secrets (:attr:`Flow.rest_secret`): another environment's, account's or region's secret is bad input naming
    ``field`` (the option, or the exported variable it came from), refused before the secret is read, so its
    password never reaches this flow's worker."""
    from .identifiers import SECRET_ARN_SUFFIX, secret_name

    if flow.rest_secret is None:
        return
    region, account, name = flow.rest_secret
    try:
        secret = SECRET_ARN_SUFFIX.sub("", secret_name(arn))
    except ValueError:
        secret = ""
    parts = arn.split(":")
    if not secret or parts[3] != region or parts[4] != account or not (secret == name or secret.startswith(name + "/")):
        raise UsageError(field, f"{arn} is not a Connect REST secret of --env {flow.env_name} ({name} or "
                         f"{name}/<person> in account {account}, {region})",
                         f"pass the stack output connect_rest_auth_secret_arn of {flow.env_name}, or unset it")


def check_one_source(env: str | None, config: Path | None) -> None:
    """``--env`` and ``--config`` are two sources of the flow: at most one may be given."""
    chosen = [n for n, v in (("--env", env), ("--config", config)) if v]
    if len(chosen) > 1:
        raise UsageError("/".join(chosen), "give one source of the flow", "use --env NAME for an environment")


def ledger_key_prefix(migration_name: str) -> str:
    """The config bucket's key prefix of a migration's ledger (msk_migrate.ledger): ``--env`` flows read and
    append there, and the stack grants the operator task exactly this prefix (infra/mskinfra/iam_policy.py)."""
    return f"ledger/{migration_name}/"


def read_flow(env: str | None, config: Path | None, target_bootstrap: str | None = None,
              connect_url: str | None = None, from_variables: set[str] | None = None) -> Flow | None:
    """The flow of ``--env`` (an environment; ``target_bootstrap`` the created target's servers) or of
    ``--config`` (a flow file); None when neither is given. ``connect_url`` and ``target_bootstrap``,
    when ``from_variables`` says they came from exported variables, must not contradict ``--env``
    (:func:`check_variables`); the worker itself is the caller's to attach."""
    check_one_source(env, config)
    if env:
        from .environment import load_environment

        path = environment_path(env)
        cfg = load_environment(path)
        target = None
        if target_bootstrap:
            try:
                target = cfg.target.endpoint(target_bootstrap)
            except ValueError as exc:
                raise UsageError("--target-bootstrap", str(exc).splitlines()[-1].strip(), "give host:port[,host:port]") from None
        arns = {"source": cfg.source.msk_cluster_arn, "target": cfg.target.existing_cluster_arn}
        flow = Flow(f"environment {cfg.name} ({path})", cfg.source.endpoint(), target, cfg.migration, cfg.worker,
                    env_name=cfg.name, msk_cluster_arns={k: v for k, v in arns.items() if v},
                    ledger_location=f"s3://{cfg.config_bucket_name}/{ledger_key_prefix(cfg.migration.name)}",
                    registry_file=RegistryFile("--env", path, cfg.schema_registry),
                    rest_secret=(cfg.region, cfg.account_id, cfg.connect_rest_secret_name))
        check_variables(cfg.name, cfg.region, {"connect_url": connect_url, "target_bootstrap": target_bootstrap},
                        from_variables or set())
        return flow
    if config:
        from .loader import load_yaml_model
        from .migration_file import MigrationFile

        mf = load_yaml_model(MigrationFile, config)
        where = Path(config).resolve()  # the same ledger from any working directory
        return Flow(f"flow file {config}", mf.source, mf.target, mf.migration, mf.worker,
                    ledger_location=str(where.parent / f"{where.stem}-ledger"),
                    registry_file=RegistryFile("--config", Path(str(config)), mf.schema_registry))
    return None
