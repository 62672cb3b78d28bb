"""What an operator command acts on: ONE flow (clusters, migration, worker) and ONE Connect worker,
chosen explicitly, and stated on the console.

Where the flow comes from (exactly one):

- ``--env dev`` (or a path): the environment YAML of ``infra/environments/`` -- the same file the stack
  renders and uploads the connectors from. A created target has no bootstrap servers in that file:
  pass the stack output ``target_bootstrap_brokers_connect`` as ``--target-bootstrap`` (or
  ``MSK_MIGRATE_TARGET_BOOTSTRAP``); commands that need no target (preflight before deploy) run without it.
- ``--config FILE``: a flow file for lab clusters: the ``source``, ``target`` (with bootstrap servers),
  ``migration`` and ``worker`` sections of an environment YAML, same models.
- ``--local``: the local rehearsal environment (``msk-migrate local up`` / ``make rehearse``) and its flow.

The Connect worker is never implied: ``--connect-url http(s)://...`` (or ``MSK_MIGRATE_CONNECT_URL``),
or ``--local`` for the rehearsal worker.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import click

from ..errors import UsageError
from ..paths import LOCAL_DIR, REPO_ROOT
from .environ import CA_ENV, SECRET_ARN_ENV
from .identifiers import SECRET_ARN
from .migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from .recorded import load_record, owner_of, record_path, save_record

ENVIRONMENTS_DIR = REPO_ROOT / "infra" / "environments"
#: The local harness's state file (``msk-migrate local up`` writes it); read as data, never imported.
LOCAL_ENV_DIR = LOCAL_DIR / "env"


#: The flow of the local rehearsal (``make rehearse``, ``--local``): demo topics and groups, fast intervals.
REHEARSAL_MIGRATION = MigrationSpec(
    name="mm2",
    topics=["shop\\..*"],
    groups=["shop-.*"],
    tasks_max=2,
    replication_factor=1,
    internal_replication_factor=1,
    emit_checkpoints_interval_seconds=2,
    sync_group_offsets_interval_seconds=2,
    emit_heartbeats_interval_seconds=2,
    refresh_topics_interval_seconds=5,
    refresh_groups_interval_seconds=5,
    offset_lag_max=50,
    # shop.orders accepts 2 MiB records on the source (DEMO_TOPICS): the preflight's record-size check asks for
    # exactly this override, so the rehearsal follows the fix an operator would apply.
    producer_overrides={"max.request.size": 2097152},
)


@dataclass
class Flow:
    origin: str  #: where the flow came from, as printed
    source: ClusterEndpoint
    target: ClusterEndpoint | None
    migration: MigrationSpec
    worker: WorkerSpec
    connect_url: str | None = None
    env_name: str | None = None  #: the environment (``--env``) the flow came from
    #: ``source``/``target`` -> the MSK cluster ARN the environment names (an MSK-IAM source, an existing target)
    msk_cluster_arns: dict[str, str] = field(default_factory=dict)
    #: what the command found on the clusters and worker it reached (cluster ids, the worker's connectors)
    verified: dict[str, Any] = field(default_factory=dict)

    # ---- no command acts on the wrong cluster ----------------------------------------------------
    def verify_clusters(self, source: Any = None, target: Any = None) -> None:
        """Record the cluster ids of the sessions a command opened and refuse (exit 2) a target that is
        not the cluster this environment was first applied to (:mod:`.recorded`)."""
        if source is not None:
            self.verified["source_cluster_id"] = source.cluster_id()
        if target is None:
            return
        tid = self.verified["target_cluster_id"] = target.cluster_id()
        env = self.env_name
        rec = load_record(env) if env else None
        if env and rec and rec.get("target_cluster_id") and rec["target_cluster_id"] != tid:
            assert self.target is not None
            raise UsageError("--target-bootstrap", f"target {self.target.bootstrap_servers} is Kafka cluster {tid}; "
                             f"environment {self.env_name} was applied to cluster {rec['target_cluster_id']} "
                             f"({rec.get('target_bootstrap')}) on {rec.get('recorded_at')}",
                             f"pass {self.env_name}'s target (stack output target_bootstrap_brokers_connect), "
                             f"or another --env; the record is {record_path(env)}")
        worker = self.verified.get("worker")
        if worker and worker.get("kafka_cluster_id") and worker["kafka_cluster_id"] != tid:
            raise UsageError("--connect-url", f"worker {worker['url']} keeps its state on Kafka cluster "
                             f"{worker['kafka_cluster_id']}, not on this flow's target {tid} ({self.target and self.target.bootstrap_servers})",
                             "point --connect-url (or MSK_MIGRATE_CONNECT_URL) at this environment's worker")


    def record_first_apply(self) -> None:
        """``connectors apply --env``: the environment's clusters become the recorded ones (first apply only)."""
        if self.env_name and "target_cluster_id" in self.verified and self.target is not None:
            save_record(self.env_name, target_cluster_id=self.verified["target_cluster_id"],
                        source_cluster_id=self.verified.get("source_cluster_id"),
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


def local_state(base_dir: Path | None = None) -> dict[str, Any]:
    base = Path(base_dir or os.environ.get("MSK_MIGRATE_LOCAL_ENV_DIR") or LOCAL_ENV_DIR)
    state_file = base / "state.json"
    if not state_file.is_file():
        raise UsageError("--local", f"no local environment under {base}", "run `make rehearse` or `msk-migrate local up`")
    state = json.loads(state_file.read_text())
    if "connect" not in state.get("procs", {}) or "worker" not in state:
        raise UsageError("--local", f"the local environment under {base} has no Connect worker", "run `msk-migrate local up`")
    return state


def local_flow(base_dir: Path | None = None) -> Flow:
    state = local_state(base_dir)
    eps = state.get("endpoints", {})  # every broker and the auth of a secured source (local/harness.py)
    if state.get("secret_env_file"):  # its MM2 user's credentials, as an operator's shell would hold them
        for name, value in json.loads(Path(state["secret_env_file"]).read_text()).items():
            os.environ.setdefault(name, value)
    return Flow(
        origin="local rehearsal environment",
        source=ClusterEndpoint(**eps["source"]) if "source" in eps else
        ClusterEndpoint(alias="source", bootstrap_servers=f"127.0.0.1:{state['ports']['source']}"),
        target=ClusterEndpoint(**eps["target"]) if "target" in eps else
        ClusterEndpoint(alias="target", bootstrap_servers=f"127.0.0.1:{state['ports']['target']}"),
        migration=REHEARSAL_MIGRATION,
        worker=WorkerSpec(**state["worker"]),
        connect_url=f"http://127.0.0.1:{state['worker']['rest_port']}",
    )


def environment_path(env: str) -> Path:
    if env.endswith((".yaml", ".yml")) or "/" in env:
        return Path(env)
    path = ENVIRONMENTS_DIR / f"{env}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in ENVIRONMENTS_DIR.glob("*.yaml"))) or "none"
        raise UsageError("--env", f"no environment {env!r} in {ENVIRONMENTS_DIR}", f"use one of: {known}")
    return path


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


def resolve_flow(env: str | None, config: Path | None, local: bool, connect_url: str | None,
                 target_bootstrap: str | None, local_dir: Path | None = None,
                 from_variables: set[str] | None = None) -> Flow:
    chosen = [n for n, v in (("--env", env), ("--config", config)) if v]
    if len(chosen) > 1:
        raise UsageError("/".join(chosen), "give one source of the flow", "use --env NAME for an environment")
    if connect_url and local:
        raise UsageError("--connect-url/--local", "give one Connect worker", "drop --local or --connect-url")
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
                    env_name=cfg.name, msk_cluster_arns={k: v for k, v in arns.items() if v})
        check_variables(cfg.name, cfg.region, {"connect_url": connect_url, "target_bootstrap": target_bootstrap},
                        from_variables or set())
    elif config:
        from .loader import load_yaml_model
        from .migration_file import MigrationFile

        mf = load_yaml_model(MigrationFile, config)
        flow = Flow(f"flow file {config}", mf.source, mf.target, mf.migration, mf.worker)
    elif local:
        flow = local_flow(local_dir)
    else:
        raise UsageError("--env", "no migration given", "pass --env NAME (infra/environments/NAME.yaml), "
                         "--config FILE, or --local for the rehearsal environment")
    if local:
        flow.connect_url = local_flow(local_dir).connect_url
    elif connect_url:
        flow.connect_url = check_connect_url(connect_url)
    return flow


def _to_environment(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """REST credentials and CA reach every ConnectClient of the command through its environment
    variable (connect/rest.py reads them), so no command signature carries them. Checked here, at
    parse time, for every command that takes them (even one that ends up not calling the worker)."""
    if not value:
        return
    if param.name == "connect_secret_arn" and not SECRET_ARN.match(value):
        raise UsageError("--connect-secret-arn", f"{value!r} is not a Secrets Manager secret ARN",
                         "pass arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME (stack output connect_rest_auth_secret_arn)")
    if param.name == "connect_ca" and not Path(value).is_file():
        raise UsageError("--connect-ca", f"{value} is not a file", "pass the PEM CA bundle of the worker's certificate")
    if param.envvar:
        os.environ[str(param.envvar)] = value


def _check_target_bootstrap(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        parts = [p.strip() for p in value.split(",")]
        if not all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]:]+:\d{1,5}", p) for p in parts):
            raise UsageError("--target-bootstrap", f"{value!r} is not a host:port[,host:port...] list",
                             "pass the stack output target_bootstrap_brokers_connect")
    return value


def flow_options(f):
    """--env / --config / --local / --connect-url / --target-bootstrap / REST credentials (+ hidden --local-dir)."""
    f = click.option("--connect-ca", envvar=CA_ENV, expose_value=False, callback=_to_environment,
                     help=f"PEM CA bundle of an HTTPS worker with a private CA (env {CA_ENV}).")(f)
    f = click.option("--connect-secret-arn", envvar=SECRET_ARN_ENV, expose_value=False, callback=_to_environment,
                     help="Secrets Manager secret with the worker's REST username/password (stack output "
                          "connect_rest_auth_secret_arn; or env MSK_MIGRATE_CONNECT_USER / MSK_MIGRATE_CONNECT_PASSWORD).")(f)
    f = click.option("--local-dir", "local_dir", type=click.Path(path_type=Path), hidden=True,
                     envvar="MSK_MIGRATE_LOCAL_ENV_DIR")(f)
    f = click.option("--target-bootstrap", "target_bootstrap", envvar="MSK_MIGRATE_TARGET_BOOTSTRAP", callback=_check_target_bootstrap,
                     help="Target bootstrap servers for --env (stack output target_bootstrap_brokers_connect).")(f)
    f = click.option("--connect-url", "connect_url", envvar="MSK_MIGRATE_CONNECT_URL",
                     help="Kafka Connect REST URL, http(s) (stack output connect_rest_url).")(f)
    f = click.option("--local", "local", is_flag=True,
                     help="Use the local rehearsal environment (clusters and worker of `msk-migrate local up`).")(f)
    f = click.option("--config", "config", type=click.Path(path_type=Path),
                     help="Flow file for lab clusters (source, target, migration, worker sections).")(f)
    f = click.option("--env", "env", help="Environment name (infra/environments/NAME.yaml) or its path.")(f)
    return f


def from_variables() -> set[str]:
    """The options of the running command whose value came from an exported variable."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return set()
    return {opt for opt in VARIABLES if ctx.get_parameter_source(opt) == click.core.ParameterSource.ENVIRONMENT}


def flow_from_kwargs(kw: dict[str, Any]) -> Flow:
    return resolve_flow(kw.pop("env"), kw.pop("config"), kw.pop("local"), kw.pop("connect_url"),
                        kw.pop("target_bootstrap"), kw.pop("local_dir"), from_variables())


def announce(flow: Flow, output: str = "text") -> None:
    """Say which clusters and worker the command talks to: first line of the text output. With
    ``--output json`` the document carries it (``talked_to``) and stderr stays for the one error line."""
    if output != "json":
        from ..cliutil import console

        console.print(flow.describe(), highlight=False, soft_wrap=True)


def talked_to(flow: Flow) -> dict[str, Any]:
    """The clusters and worker a command talked to, with what it verified on them (cluster ids, the
    worker's Kafka cluster and this migration's connectors there)."""
    worker = flow.verified.get("worker") or {}
    return {"config": flow.origin, "environment": flow.env_name, "source": flow.source.bootstrap_servers,
            "target": flow.target.bootstrap_servers if flow.target else None, "worker": flow.connect_url,
            "source_cluster_id": flow.verified.get("source_cluster_id"),
            "target_cluster_id": flow.verified.get("target_cluster_id"),
            "worker_kafka_cluster_id": worker.get("kafka_cluster_id"),
            "worker_connectors": worker.get("connectors")}
