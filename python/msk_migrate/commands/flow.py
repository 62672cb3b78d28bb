"""The flow of an operator command, from its options: ONE flow (clusters, migration, worker) and ONE
Connect worker, chosen explicitly, and stated on the console.

Where the flow comes from (exactly one):

- ``--env dev`` (or a path): the environment YAML of ``infra/environments/`` -- the same file the stack
  renders and uploads the connectors from. A created target has no bootstrap servers in that file:
  pass the stack output ``target_bootstrap_brokers_connect`` as ``--target-bootstrap`` (or
  ``MSK_MIGRATE_TARGET_BOOTSTRAP``); commands that need no target (preflight before deploy) run without it.
- ``--config FILE``: a flow file for lab clusters (:func:`msk_migrate.config.flow.read_flow`).
- ``--local``: the local rehearsal environment (``msk-migrate local up`` / ``make rehearse``) and its flow.

The Connect worker is never implied: ``--connect-url http(s)://...`` (or ``MSK_MIGRATE_CONNECT_URL``),
or ``--local`` for the rehearsal worker.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..config.environ import CA_ENV, SECRET_ARN_ENV
from ..config.flow import VARIABLES, Flow, check_connect_url, check_one_source, check_rest_secret, read_flow
from ..config.identifiers import SECRET_ARN
from ..errors import UsageError
from ..paths import LOCAL_DIR
from .options import CONNECT_URL, ENV, READ_FILE

if TYPE_CHECKING:  # the session imports the Kafka client: loaded when a command opens one, not at start-up
    from ..config.schema_registry import LocalRegistries
    from ..local.state import LocalState
    from ..runbook.session import MigrationSession, Needs

#: The local harness's state file (``msk-migrate local up`` writes it); read as data, never imported.
LOCAL_ENV_DIR = LOCAL_DIR / "env"


def local_dir(base_dir: Path | None = None) -> Path:
    """The local environment's directory: ``--local-dir``, else ``MSK_MIGRATE_LOCAL_ENV_DIR``, else .local/env."""
    return Path(base_dir or os.environ.get("MSK_MIGRATE_LOCAL_ENV_DIR") or LOCAL_ENV_DIR)


def local_state(base_dir: Path | None = None) -> LocalState:
    """The local environment's recorded state (typed, :mod:`msk_migrate.local.state`); one line when there is
    none or it has no Connect worker."""
    from ..local.state import StateFile

    base = local_dir(base_dir)
    store = StateFile(base)
    if not store.exists():
        raise UsageError("--local", f"no local environment under {base}", "run `make rehearse` or `msk-migrate local up`")
    state = store.load()
    if state.proc("connect") is None or state.worker is None or state.shape is None:
        raise UsageError("--local", f"the local environment under {base} has no Connect worker", "run `msk-migrate local up`")
    return state


def local_flow(base_dir: Path | None = None) -> Flow:
    """The rehearsal's flow on the local environment as it is now: its clusters (a secured source's
    endpoint names the MM2 user's secrets file, so nothing goes through this process's environment), its
    worker, and the rehearsal's migration at the target's replication factor."""
    from ..local.endpoints import cluster_endpoint
    from ..rehearsal.demo import REHEARSAL_MIGRATION  # the rehearsal's flow (imports the Kafka client)

    state = local_state(base_dir)
    worker = state.worker
    assert worker is not None  # local_state refuses a state without one
    rf = state.side("target").replication_factor
    return Flow(
        origin="local rehearsal environment",
        source=cluster_endpoint(state, "source"),
        target=cluster_endpoint(state, "target"),
        migration=REHEARSAL_MIGRATION.model_copy(update={"replication_factor": rf, "internal_replication_factor": rf}),
        worker=worker,
        connect_url=f"http://127.0.0.1:{worker.rest_port}",
        ledger_location=str(local_dir(base_dir) / "ledger"),
        local_registries=registries_of_state(local_dir(base_dir), state),
    )


def registries_of_state(base: Path, state: LocalState) -> LocalRegistries:
    """The registries a local environment's state records (``msk-migrate local up --schema-registry``; none
    without one), as the registry resolver takes them."""
    from ..config.schema_registry import LocalRegistries

    return LocalRegistries(base, {role: ports.url for role, ports in state.registries.items()})


def local_worker_url(flow: Flow | None, base_dir: Path | None = None) -> str:
    """The local worker ``flow`` names: the environment's worker of the flow's ``worker.group_id`` (a flow worker
    of a topology rehearsal, or the pair's group), else the pair's worker (a flow file naming no local group).
    A second migration's flow file so reaches its own worker, never the pair's (issue 47)."""
    state = local_state(base_dir)
    pair = state.worker
    assert pair is not None  # local_state refuses a state without one
    if flow is not None:
        for fw in state.flow_workers.values():
            if fw.spec.group_id == flow.worker.group_id:
                return f"http://127.0.0.1:{fw.spec.rest_port}"
    return f"http://127.0.0.1:{pair.rest_port}"


def resolve_flow(env: str | None, config: Path | None, local: bool, connect_url: str | None,
                 target_bootstrap: str | None, local_dir: Path | None = None,
                 from_variables: set[str] | None = None) -> Flow:
    """The flow of ``--env``/``--config`` (:func:`~msk_migrate.config.flow.read_flow`) or ``--local``, and
    its worker (``--connect-url`` or the local one)."""
    check_one_source(env, config)
    if connect_url and local:
        raise UsageError("--connect-url/--local", "give one Connect worker", "drop --local or --connect-url")
    flow = read_flow(env, config, target_bootstrap, connect_url, from_variables)
    if flow is None:
        if not local:
            raise UsageError("--env", "no migration given", "pass --env NAME (infra/environments/NAME.yaml), "
                             "--config FILE, or --local for the rehearsal environment")
        flow = local_flow(local_dir)
    if local:
        flow.connect_url = local_worker_url(flow if (env or config) else None, local_dir)
    elif connect_url:
        flow.connect_url = check_connect_url(connect_url)
    return flow


#: ``click.Context.meta`` key of the worker's REST options (``--connect-ca``, ``--connect-secret-arn``).
REST_OPTIONS = "msk_migrate.rest_options"


def _rest_option(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """The worker's REST CA and credentials secret: checked here, at parse time, for every command that
    takes them (even one that ends up not calling the worker), then kept on the click context until
    :func:`flow_from_kwargs` puts them on the :class:`Flow` (no command signature carries them, and
    nothing is written to the process environment)."""
    if not value:
        return
    if param.name == "connect_secret_arn" and not SECRET_ARN.match(value):
        raise UsageError("--connect-secret-arn", f"{value!r} is not a Secrets Manager secret ARN",
                         "pass arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME (stack output connect_rest_auth_secret_arn)")
    if param.name == "connect_ca" and not Path(value).is_file():
        raise UsageError("--connect-ca", f"{value} is not a file", "pass the PEM CA bundle of the worker's certificate")
    ctx.meta.setdefault(REST_OPTIONS, {})[str(param.name)] = value
    if ctx.get_parameter_source(str(param.name)) == click.core.ParameterSource.ENVIRONMENT:
        ctx.meta[REST_OPTIONS][f"{param.name}_variable"] = param.envvar


def _check_target_bootstrap(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        parts = [p.strip() for p in value.split(",")]
        if not all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]:]+:\d{1,5}", p) for p in parts):
            raise UsageError("--target-bootstrap", f"{value!r} is not a host:port[,host:port...] list",
                             "pass the stack output target_bootstrap_brokers_connect")
    return value


def flow_options(f):
    """--env / --config / --local / --connect-url / --target-bootstrap / REST credentials (+ hidden --local-dir)."""
    f = click.option("--connect-ca", envvar=CA_ENV, expose_value=False, callback=_rest_option,
                     help=f"PEM CA bundle of an HTTPS worker with a private CA (env {CA_ENV}).")(f)
    f = click.option("--connect-secret-arn", envvar=SECRET_ARN_ENV, expose_value=False, callback=_rest_option,
                     help="Secrets Manager secret with the worker's REST username/password (stack output "
                          "connect_rest_auth_secret_arn; or env MSK_MIGRATE_CONNECT_USER / MSK_MIGRATE_CONNECT_PASSWORD).")(f)
    f = click.option("--local-dir", "local_dir", type=click.Path(path_type=Path), hidden=True,
                     envvar="MSK_MIGRATE_LOCAL_ENV_DIR")(f)
    f = click.option("--target-bootstrap", "target_bootstrap", envvar="MSK_MIGRATE_TARGET_BOOTSTRAP", callback=_check_target_bootstrap,
                     help="Target bootstrap servers for --env (stack output target_bootstrap_brokers_connect).")(f)
    f = click.option("--connect-url", "connect_url", envvar="MSK_MIGRATE_CONNECT_URL", type=CONNECT_URL,
                     help="Kafka Connect REST URL, http(s) (stack output connect_rest_url).")(f)
    f = click.option("--local", "local", is_flag=True,
                     help="Use the local rehearsal environment (clusters and worker of `msk-migrate local up`).")(f)
    f = click.option("--config", "config", type=READ_FILE,
                     help="Flow file for lab clusters (source, target, migration, worker sections).")(f)
    f = click.option("--env", "env", type=ENV, help="Environment name (infra/environments/NAME.yaml) or its path.")(f)
    return f


def from_variables() -> set[str]:
    """The options of the running command whose value came from an exported variable."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return set()
    return {opt for opt in VARIABLES if ctx.get_parameter_source(opt) == click.core.ParameterSource.ENVIRONMENT}


def flow_from_kwargs(kw: dict[str, Any]) -> Flow:
    return with_rest_options(resolve_flow(kw.pop("env"), kw.pop("config"), kw.pop("local"), kw.pop("connect_url"),
                                          kw.pop("target_bootstrap"), kw.pop("local_dir"), from_variables()))


def with_rest_options(flow: Flow) -> Flow:
    """``flow`` with the running command's ``--connect-ca`` / ``--connect-secret-arn`` (or their variables)."""
    ctx = click.get_current_context(silent=True)
    rest = ctx.meta.get(REST_OPTIONS, {}) if ctx is not None else {}
    flow.connect_ca, flow.connect_secret_arn = rest.get("connect_ca"), rest.get("connect_secret_arn")
    if flow.connect_secret_arn:
        check_rest_secret(flow, flow.connect_secret_arn, rest.get("connect_secret_arn_variable") or "--connect-secret-arn")
    return flow


def session_from_kwargs(kw: dict[str, Any], output: str, target: Needs = "yes", worker: Needs = "no",
                        creating: bool = False, why: str = "this command") -> MigrationSession:
    """The command's flow (:func:`flow_from_kwargs`), stated on the console, opened as the one session its
    operation takes (:func:`msk_migrate.runbook.session.open_session`)."""
    from ..runbook.session import open_session

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    return open_session(flow, target=target, worker=worker, creating=creating, why=why)


def announce(flow: Flow, output: str = "text") -> None:
    """Say which clusters and worker the command talks to: first line of the text output. With
    ``--output json`` the document carries it (``talked_to``) and stderr stays for the one error line."""
    from ..render import banner

    banner(flow.describe(), output)


def talked_to(flow: Flow) -> dict[str, Any]:
    """The clusters and worker a command talked to, with what it verified on them (cluster ids, the
    worker's Kafka cluster and this migration's connectors there)."""
    from ..config.flow import talked_to as of_flow

    return of_flow(flow, flow.found, source=flow.source.bootstrap_servers,
                   target=flow.target.bootstrap_servers if flow.target else None, worker=flow.connect_url)
