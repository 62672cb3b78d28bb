"""`msk-migrate connectors render | apply | status | restart | pause | resume | delete`.

The worker is always named (``--connect-url`` or ``--local``) and printed; connector names default to
the flow's (``--env``/``--config``/``--local``), never to a literal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cliutil import emit_json, human, output_option
from ..clivalues import Aliased
from ..config.flow import Flow, check_connect_url
from ..connect_api.apply import connector_problems, status_rows
from ..connect_api.rest import ConnectClient, client_for, verify_worker
from ..connect_api.sources import from_dir, from_s3
from ..errors import UsageError
from ..outcome import Outcome, View, col
from ..render import render
from .flow import flow_from_kwargs, flow_options, with_rest_options
from .options import READ_DIR, S3_PREFIX, WRITE_DIR, seconds
from .topology import other_flows, with_flows_options
from .waves import check_wave, wave_option
from .worker_down import WorkerPlace, explained

if TYPE_CHECKING:
    from ..runbook.connectors_apply import Neighbours


def _flow(kw: dict, need_flow: bool = False) -> Flow:
    """The flow and worker of the options (a flow without migration when neither --env/--config/--local
    was given: only the worker named by --connect-url)."""
    if kw.get("env") or kw.get("config") or kw.get("local"):
        return flow_from_kwargs(kw)  # as every runbook command: exported variables checked against --env
    url = kw.pop("connect_url", None)
    for key in ("env", "config", "local", "target_bootstrap", "local_dir"):
        kw.pop(key, None)
    if need_flow:
        raise UsageError("--env", "no migration given", "pass --env NAME, --config FILE or --local")
    flow = Flow("-", None, None, None, None)  # type: ignore[arg-type]
    flow.connect_url = check_connect_url(url) if url else None
    return with_rest_options(flow)


def _client(flow: Flow, creating: bool = False) -> ConnectClient:
    """The worker named on the command line (never a default); every outcome names it (``talked_to`` and
    its table's title)."""
    client = client_for(flow)
    if flow.migration is not None:
        verify_worker(flow, client, creating)  # another migration's worker, or other clusters: exit 2, nothing changed
    return client


def _talked(flow: Flow, client: ConnectClient) -> dict:
    """``talked_to``: the worker (and the flow's file, if any)."""
    return {"worker": client.url, "config": flow.origin}


def _problem(r: dict) -> str:
    bad = connector_problems([r], checkpoint_needs_tasks=False)
    return "; ".join(bad) or ("0 tasks: no consumer group matches yet" if r["tasks"] == 0 else "")


def _status_view(client: ConnectClient, flow: Flow) -> View:
    """The connectors table; its title names the worker (and the flow's file)."""
    where = client.url + (f" (config: {flow.origin})" if flow.origin != "-" else "")
    return View(f"connectors on {where}", [
        col("name", "name"),
        col("state", "state", ok=lambda r: not connector_problems([r], checkpoint_needs_tasks=False)),
        col("tasks", lambda r: f"{r['tasks_running']}/{r['tasks']} running"),
        col("problem", _problem),
    ])


def _status_outcome(command: str, flow: Flow, client: ConnectClient, rows: list[dict], **extra) -> Outcome:
    """Exit 1 when a connector or task is not RUNNING (a checkpoint connector may have 0 tasks)."""
    code = 1 if connector_problems(rows, checkpoint_needs_tasks=False) else 0
    return Outcome(command, "running" if code == 0 else "not-running", code, rows=rows, talked_to=_talked(flow, client),
                   extra=extra, views=[_status_view(client, flow)])


def _names(flow: Flow, names: tuple[str, ...], all_flows: bool = True) -> list[str]:
    """Explicit names, else the flow's connectors (forward, and its reverse ones when present)."""
    if names:
        return list(names)
    if flow.migration is None:
        raise UsageError("NAMES", "no connector named and no migration given",
                         "name the connectors, or pass --env NAME / --config FILE / --local to use the flow's")
    out = list(flow.migration.connector_names().values())
    if all_flows:
        out += [f"{flow.migration.name}-reverse-{r}" for r in ("source", "checkpoint")]
    return out


def _configs(flow: Flow | None, directory: Path | None, s3: str | None, s3_endpoint: str | None) -> dict:
    files = [x for x in (directory, s3) if x]
    if len(files) > 1 or not (files or (flow and flow.migration)):
        raise UsageError("--env/--config/--from-dir/--from-s3", "give exactly one source of connector configs",
                         "e.g. --from-s3 s3://BUCKET/connectors/ (the stack output connector_config_s3_uris)")
    if files:  # with --env/--config too: the files are applied, the flow names the environment they belong to
        configs = from_dir(directory) if directory else from_s3(str(s3), endpoint_url=s3_endpoint)
        if flow is not None and flow.migration is not None:
            from ..connect_api.rest import configs_of_flow

            configs_of_flow(configs, flow.migration.name, flow.source.bootstrap_servers,
                            flow.target.bootstrap_servers if flow.target else None)
        return configs
    from ..connectors.render import render_connectors

    assert flow is not None
    return render_connectors(flow.source, flow.require_target("rendering the connectors"), flow.migration)


def source_options(f):
    """Where connector configs come from besides the flow: ``--from-dir`` or ``--from-s3`` (``--dir``, hidden, keeps older scripts working)."""
    f = click.option("--s3-endpoint-url", envvar="AWS_ENDPOINT_URL_S3", hidden=True)(f)
    f = click.option("--from-s3", "s3", type=S3_PREFIX, help="s3://bucket/prefix/ holding the stack's rendered *.json.")(f)
    f = click.option("--from-dir", "--dir", "directory", cls=Aliased, hidden_aliases=["--dir"], type=READ_DIR,
                     help="Directory of *.json configs.")(f)
    return f


@click.group("connectors")
def connectors() -> None:
    """Render, apply and operate the MM2 connectors on a Connect worker."""


@connectors.command("render")
@flow_options
@source_options
@click.option("--out-dir", "--out", "out_dir", cls=Aliased, hidden_aliases=["--out"], type=WRITE_DIR,
              help="Write one <name>.json per connector here (default: all of them as one JSON object on stdout).")
def render_cmd(directory, s3, s3_endpoint_url, out_dir, **kw) -> None:
    """Print (or write) the connector configs exactly as `apply` would send them."""
    configs = _configs(_flow(kw), directory, s3, s3_endpoint_url)
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, cfg in configs.items():
            (out_dir / f"{name}.json").write_text(json.dumps({"name": name, "config": cfg}, indent=2, sort_keys=True) + "\n")
    else:
        emit_json(configs)  # the configs themselves (what `apply` sends), for other tools: not an outcome document


@connectors.command("apply")
@flow_options
@source_options
@click.option("--no-wait", is_flag=True, help="Do not wait for RUNNING.")
@click.option("--timeout", default=180.0, show_default=True, type=seconds(1), help="Seconds to wait for RUNNING.")
@click.option("--force", is_flag=True, help="Apply although the worker's heap is below what the flow's partitions need "
              "(docs/sizing.md); the outcome says so.")
@with_flows_options
@output_option
def apply_cmd(directory, s3, s3_endpoint_url, no_wait, timeout, force, with_envs, with_configs, output, **kw) -> None:
    """Validate every config with the worker, then create/update them and wait for connectors AND tasks RUNNING.
    Refuses (exit 2) a flow whose worker heap or ECS task memory is below the memory model for its partitions
    (msk_migrate.config.worker_sizing) unless --force, and a flow that collides with another migration into the
    same target (a topic or group both sources send there, one migration name, ...: docs/topologies.md), known from
    --with-env/--with-config, the environments recorded on that target and the MM2 connectors of the workers it
    reaches; with none known, the outcome says so."""
    local_dir = kw.get("local_dir") if kw.get("local") else None
    state_dir = kw.get("local_dir")
    local = bool(kw.get("local"))
    flow = _flow(kw)
    _refuse_another_migrations_worker(flow, state_dir)
    if (with_envs or with_configs) and flow.migration is None:
        raise UsageError("--with-env/--with-config", "the other migrations are compared with a flow, and none is given",
                         "pass --env NAME, --config FILE or --local")
    given = other_flows(flow, with_envs, with_configs)  # a collision the configurations alone show: exit 2, before any connection
    configs = _configs(flow, directory, s3, s3_endpoint_url)
    client = _client(flow, creating=True)
    from ..runbook.connectors_apply import apply_flow

    local_heap = None
    if local and flow.migration is not None:
        from .flow import local_flow

        local_heap = local_flow(local_dir).worker.heap
    with human(output).status(f"applying connectors on {client.url}") as sp:  # ConnectorFailed: one line, exit 1
        done = apply_flow(flow, client, configs, neighbours=_neighbours(flow, client, given, local_dir if local else None, local),
                          wait=not no_wait, timeout=timeout, force=force, local_heap=local_heap, progress=sp.update)
    res, forced, shared = done.applied, done.forced, done.other_migrations
    o = _status_outcome("connectors apply", flow, client, done.rows, created=res.created, updated=res.updated,
                        unchanged=res.unchanged, connectors=done.rows)
    if no_wait:  # not waited for: the states are a snapshot, not a verdict
        o.verdict, o.exit_code = "applied", 0
    o.notes.append(f"created: {', '.join(res.created) or '-'}  updated: {', '.join(res.updated) or '-'}  "
                   f"unchanged: {', '.join(res.unchanged) or '-'}")
    if forced:
        o.notes.append(forced)
    o.notes += shared
    o.extra["other_migrations"] = shared  # what the flow was compared with on its target (or that none is known)
    render(o, output)


def _refuse_another_migrations_worker(flow: Flow, state_dir: Path | None) -> None:
    """A worker that belongs to another migration, refused by name (exit 2) before it is called: another
    environment's recorded worker (``--env``), or a worker of the local environment whose Connect group is not the
    one the flow names when the flow names one of its groups."""
    url = flow.connect_url
    if flow.migration is None or not url:
        return
    if flow.env_name:
        from ..config.recorded import owner_of

        other = owner_of("connect_url", url, flow.env_name)
        if other:
            raise UsageError("--connect-url", f"{url} is environment {other}'s worker, not {flow.env_name}'s",
                             f"point --connect-url at {flow.env_name}'s worker (stack output connect_rest_url)")
    from .flow import local_dir as local_base

    base = local_base(state_dir)
    if not (base / "state.json").is_file() or "127.0.0.1" not in url:
        return
    from .flow import local_state

    try:
        state = local_state(state_dir)
    except UsageError:
        return  # no local worker recorded there: nothing of another migration to mistake this one for
    groups = {f"http://127.0.0.1:{w.rest_port}": (w.group_id, "the environment's worker") for w in state.workers}
    groups.update({f"http://127.0.0.1:{fw.spec.rest_port}": (fw.spec.group_id, f"migration {name}'s worker")
                   for name, fw in state.flow_workers.items()})
    want = flow.worker.group_id
    if want in {g for g, _ in groups.values()} and url in groups and groups[url][0] != want:
        owner = next(u for u, (g, _) in groups.items() if g == want)
        raise UsageError("--connect-url", f"{url} is {groups[url][1]} (Connect group {groups[url][0]}); flow "
                         f"{flow.origin} names worker group {want}, whose worker is {owner}",
                         f"point --connect-url at {owner}, or use --local")


def _neighbours(flow: Flow, client: ConnectClient, given: list, local_dir: Path | None, local: bool) -> Neighbours:
    """Whom the flow is compared with on its target (msk_migrate.runbook.shared_target): the flows given with
    --with-env/--with-config and, with ``--local``, every other worker and cluster of the local environment."""
    from ..runbook.connectors_apply import Neighbours

    if not local or flow.migration is None or flow.target is None:
        return Neighbours(flows=given)
    from ..local.endpoints import cluster_endpoint
    from .flow import local_state

    state = local_state(local_dir)
    urls = [f"http://127.0.0.1:{w.rest_port}" for w in state.workers]
    urls += [f"http://127.0.0.1:{fw.spec.rest_port}" for fw in state.flow_workers.values()]
    return Neighbours(flows=given, workers=[ConnectClient(u) for u in dict.fromkeys(urls) if u != client.url],
                      endpoints=[cluster_endpoint(state, r) for r in state.roles])


@connectors.command("status")
@flow_options
@wave_option
@click.argument("names", nargs=-1)
@output_option
def status_cmd(names, wave, output, **kw) -> None:
    """Connector and task states (default: the flow's connectors; all on the worker without a flow).
    Exit 1 if a connector or task is not RUNNING, or a source/heartbeat connector has 0 tasks. --wave W also
    shows each topic of the wave with the source connector's tasks that copy it (exit 1 when a partition is
    copied by no task, or by a task that is not RUNNING). A worker that does not answer is exit 2; when what it
    left says why (a local worker's log, the stack's stopped ECS tasks), the line names it: `worker died:
    OutOfMemoryError (Java heap space) at …`."""
    place = WorkerPlace.of(kw)
    flow = _flow(kw, need_flow=wave is not None)
    if wave is not None:
        check_wave(flow, wave)
        if names:
            raise UsageError("--wave", "the wave's topics are copied by the flow's source connector",
                             "drop the connector NAMES (or --wave)")

    def status() -> Outcome:
        client = _client(flow)
        wanted = list(names) or (None if flow.migration is None else
                                 [n for n in _names(flow, ()) if n in set(client.connectors())])
        o = _status_outcome("connectors status", flow, client, status_rows(client, wanted))
        if wave is not None:
            _wave_copies(o, flow, client, wave)
        return o

    render(explained("connectors status", place, status), output)


def _wave_copies(o: Outcome, flow: Flow, client: ConnectClient, wave: str) -> None:
    """Add the wave's topics, each with the tasks of the flow's source connector that copy it, to ``o``."""
    from ..access.admin import AdminSession
    from ..connect_api.assignment import assignment, topic_copies
    from ..runbook.waves import plan_waves

    assert flow.migration is not None
    source = AdminSession.for_endpoint("source", flow.source)
    topics = plan_waves(source, flow.migration).topics_of(wave)
    o.talked_to.update(source=source.bootstrap, source_cluster_id=source.cluster_id())
    name = flow.migration.connector_names()["source"]
    live = name in set(client.connectors())
    held = assignment(client.task_configs(name)) if live else {}
    states = {int(t["id"]): t["state"] for t in client.status(name).get("tasks", [])} if live else {}
    sizes = source.topics()
    rows = topic_copies({t: sizes[t] for t in topics}, held, states)
    o.extra.update(wave=wave, wave_topics=[r.to_dict() for r in rows])
    o.views.append(View(f"wave {wave}: its topics as {name} copies them", [
        col("topic", "topic"), col("partitions", "partitions"),
        col("tasks", lambda r: ", ".join(f"{t} {s}" for t, s in zip(r.tasks, r.states, strict=True)) or "-", ok=lambda r: r.ok),
        col("not copied", lambda r: ", ".join(map(str, r.unassigned)) or "-")], rows))
    bad = [r.topic for r in rows if not r.ok]
    if not rows:
        o.verdict, o.exit_code = "nothing-in-wave", 1
        o.notes.append(f"wave {wave}: no topic of the migration is in it on the source {source.bootstrap}; nothing shown")
    elif bad:
        o.verdict, o.exit_code = "not-running", 1
        o.notes.append(f"wave {wave}: {', '.join(bad[:10])} not copied by a RUNNING task of {name}"
                       + ("" if live else f" ({name} is not on {client.url})"))
    else:
        o.notes.append(f"wave {wave}: every partition of its {len(rows)} topic(s) is copied by a RUNNING task of {name}")


def _simple(action: str, help_text: str):
    @connectors.command(action, help=help_text + " NAMES default to the flow's connectors (--env/--config/--local).")
    @flow_options
    @click.argument("names", nargs=-1)
    @output_option
    def _cmd(names, output, **kw) -> None:
        flow = _flow(kw)
        client = _client(flow)
        live = set(client.connectors())
        wanted = _names(flow, names)
        if not names:
            wanted = [n for n in wanted if n in live]
        missing = [n for n in wanted if n not in live]
        if missing or not wanted:
            raise UsageError("NAMES", f"no connector {missing[0] if missing else 'of this flow'} on {client.url}",
                             "check the names with `msk-migrate connectors status`; nothing was changed")
        for name in wanted:
            if action == "restart":
                client.restart(name, only_failed=True)
            else:
                getattr(client, action)(name)
        render(Outcome(f"connectors {action}", "done", 0, rows=[{"connector": n, "action": action} for n in wanted],
                       talked_to=_talked(flow, client), extra={action: wanted, "worker": client.url},
                       notes=[f"{action}: {', '.join(wanted)} on {client.url}"]), output)

    return _cmd


_simple("restart", "Restart the failed connector instances and tasks only.")
_simple("pause", "Pause connectors (replication stops, offsets kept).")
_simple("resume", "Resume paused connectors.")
_simple("delete", "Delete connectors (their offsets stay in the Connect offsets topic).")
