"""Every command that takes a flow takes it the same way (docs/design.md, "Commands: one outcome, one renderer"):
the click tree is walked, and each command with ``--env/--config/--local`` is given each combination of them
against the running local environment.

- Accepted everywhere: ``--local``; ``--config F`` (a lab flow file of the local clusters); ``--config F --local``
  (the file's migration, the local worker); ``--config F --connect-url U`` (where the command takes a worker).
  A command that needs what the combination does not give refuses by naming what it needs, never the
  combination: a worker (``--config F`` alone: ``--connect-url``), or the registries the local environment does
  not run (``schemas ... --local`` on an environment started without ``--schema-registry``).
- Refused everywhere, one line naming both options, exit 2, before anything is reached: ``--config`` beside
  ``--env``, and ``--connect-url`` beside ``--local``.

"Accepted" means the command got past its options to the first cluster, worker or registry it would reach: that
first step raises :class:`Reached` and is recorded, so nothing is read, written or fenced (the error boundary
turns it into an internal error, exit 3, which the walk reads as "reached", never as a refusal). A command
that slips past every stop would run for real against the local environment.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import click
import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from tests.cli_tree import leaves

pytestmark = pytest.mark.kafka

#: A value for each option a command requires, so that the walk reaches the flow.
REQUIRED = {"--topic": "lab-orders", "--group": "lab-readers", "--reason": "retired", "--out": "{tmp}/snapshot.json"}
#: What a command needs beyond its required options (checked before its flow is reached).
NEEDS = {("acls", "plan"): ["--cluster-arn", "arn:aws:kafka:eu-west-1:123456789012:cluster/lab/0b1c2d3e-4f5a-6b7c-8d9e-0a1b2c3d4e5f-1"],
         ("cutover", "check"): ["--group", "lab-readers"], ("offsets", "sync"): ["--group", "lab-readers"],
         ("connectors", "render"): ["--out-dir", "{tmp}/render"]}
#: Refusals of what a combination lacks (not of the combination): a worker, or the local environment's registries.
NEEDS_WHAT = ("--connect-url: this command talks to a Kafka Connect worker and none was given",
              "runs no schema registry")


class Reached(BaseException):
    """The command got past its options to a cluster, worker or registry (raised instead of reaching it)."""


#: What the stops were asked for, in order (cleared before each run).
REACHED: list[str] = []




def _flow_commands() -> list[tuple[str, ...]]:
    return [path for path, cmd in leaves(cli) if {"env", "config", "local"} <= {p.name for p in cmd.params}]


def _required(path: tuple[str, ...], tmp: Path) -> list[str]:
    cmd = dict(leaves(cli))[path]
    out: list[str] = []
    for p in cmd.params:
        if isinstance(p, click.Option) and p.required:
            out += [p.opts[0], REQUIRED[p.opts[0]].format(tmp=tmp)]
    return out + [a.format(tmp=tmp) for a in NEEDS.get(path, [])]


def _takes(path: tuple[str, ...], name: str) -> bool:
    return name in {p.name for p in dict(leaves(cli))[path].params}


@pytest.fixture(scope="module")
def stops(local_env):
    """Every first step towards a cluster, worker or registry raises :class:`Reached` (module scope: one patch)."""
    from msk_migrate.access import admin
    from msk_migrate.connect_api import rest
    from msk_migrate.runbook import session
    from msk_migrate.schemas import client as registry

    def reached(what: str):
        def stop(*_a: Any, **_k: Any) -> Any:
            REACHED.append(what)
            raise Reached(what)
        return stop

    mp = pytest.MonkeyPatch()
    mp.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(local_env.base_dir))
    mp.setattr(session, "open_session", reached("open_session"))
    mp.setattr(rest, "client_for", reached("client_for"))
    mp.setattr(rest.ConnectClient, "__init__", reached("ConnectClient"))
    mp.setattr(admin.AdminSession, "__init__", reached("AdminSession"))
    mp.setattr(registry.RegistryClient, "__init__", reached("RegistryClient"))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def lab_flow(local_env, tmp_path_factory) -> Path:
    st = local_env.status()
    path = tmp_path_factory.mktemp("combos") / "lab.yaml"
    path.write_text(json.dumps({"source": {"alias": "source", "bootstrap_servers": st["source"]["bootstrap_servers"]},
                                "target": {"alias": "target", "bootstrap_servers": st["target"]["bootstrap_servers"]},
                                "migration": {"name": "lab", "topics": ["lab-.*"], "waves": {"first": ["lab-orders"]}},
                                # registries nobody serves: a schemas command stops at its first registry client
                                "schema_registry": {"source": "http://127.0.0.1:9/", "target": "http://127.0.0.1:9/"}}))
    return path


def _run(path: tuple[str, ...], args: list[str], local_env) -> tuple[str, Any]:
    """``("reached", what)``, ``("exit", (code, stderr))`` (a refusal or failure before any stop) or ``("ran",
    code)`` (nothing stopped it: it ran against the local environment)."""
    REACHED.clear()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_cli(cli, [*path, *args], "msk-migrate")
    if REACHED:
        return "reached", REACHED[0]
    return ("exit", (code, err.getvalue())) if code != 0 else ("ran", code)


def _combinations(flow: Path) -> dict[str, list[str]]:
    return {"--local": ["--local"], "--config F": ["--config", str(flow)],
            "--config F --local": ["--config", str(flow), "--local"],
            "--config F --connect-url U": ["--config", str(flow), "--connect-url", "http://127.0.0.1:9"]}


def test_every_command_with_a_flow_accepts_each_combination_of_the_flow_options(local_env, lab_flow, stops, tmp_path):
    refused: dict[str, list[str]] = {}
    reached = 0
    for path in _flow_commands():
        base = [*_required(path, tmp_path), *(["--output", "json"] if _takes(path, "output") else [])]
        for name, args in _combinations(lab_flow).items():
            if "--connect-url" in args and not _takes(path, "connect_url"):
                continue  # a command that reaches no worker takes no worker option
            kind, what = _run(path, [*args, *base], local_env)
            if kind == "reached":
                reached += 1
            elif kind == "exit" and not (what[0] == 2 and any(n in what[1] for n in NEEDS_WHAT)):
                refused.setdefault(" ".join(path), []).append(f"{name}: exit {what[0]}: {what[1].strip()}")
    assert not refused, "\n".join(f"{cmd}: {'; '.join(v)}" for cmd, v in refused.items())
    assert reached >= 3 * len(_flow_commands()), reached  # most combinations got to a cluster, worker or registry


@pytest.mark.parametrize("args, names", [
    (["--env", "dev", "--config", "{flow}"], ("--env", "--config")),
    (["--local", "--connect-url", "http://127.0.0.1:9"], ("--connect-url", "--local")),
])
def test_every_command_with_a_flow_refuses_two_sources_of_one_thing_in_one_line(local_env, lab_flow, stops, tmp_path,
                                                                                 args, names):
    args = [a.format(flow=lab_flow) for a in args]
    wrong: dict[str, str] = {}
    for path in _flow_commands():
        if "--connect-url" in args and not _takes(path, "connect_url"):
            continue  # a command that reaches no worker takes no worker option
        kind, what = _run(path, [*args, *_required(path, tmp_path)], local_env)
        err = what[1].strip() if kind == "exit" else ""
        if kind != "exit" or what[0] != 2 or err.count("\n") or not all(n in err for n in names):
            wrong[" ".join(path)] = f"{kind} {what}"
    assert not wrong, wrong


def test_every_command_refuses_an_exported_target_bootstrap_of_another_region_beside_env(local_env, stops, tmp_path,
                                                                                        monkeypatch):
    """MSK_MIGRATE_TARGET_BOOTSTRAP left exported from another environment is checked against ``--env`` by every
    command that takes the target's bootstrap servers (``validate`` too, whose option has no variable of its own):
    one line naming the variable, exit 2, before any cluster, worker or registry is reached."""
    monkeypatch.setenv("MSK_MIGRATE_TARGET_BOOTSTRAP", "b-1.other.c2.kafka.us-east-1.amazonaws.com:9098")
    wrong: dict[str, str] = {}
    checked = 0
    for path in _flow_commands():
        if not _takes(path, "target_bootstrap"):
            continue  # a command without the target's servers (schemas) reads no such variable
        checked += 1
        kind, what = _run(path, ["--env", "dev", *_required(path, tmp_path)], local_env)
        err = what[1].strip() if kind == "exit" else ""
        if kind != "exit" or what[0] != 2 or err.count("\n") or "MSK_MIGRATE_TARGET_BOOTSTRAP" not in err \
                or "us-east-1; --env dev is in eu-west-1" not in err:
            wrong[" ".join(path)] = f"{kind} {what}"
    assert not wrong, wrong
    assert checked >= 10 and ("validate",) in [p for p in _flow_commands() if _takes(p, "target_bootstrap")]


def test_every_command_with_a_worker_refuses_an_exported_connect_url_of_another_environment_beside_env(
        local_env, stops, tmp_path, monkeypatch):
    """MSK_MIGRATE_CONNECT_URL holding environment prod's recorded worker, beside ``--env dev``: every command that
    takes a worker refuses it (the ``connectors`` commands too), one line naming the variable, exit 2."""
    import json as _json

    from msk_migrate.config.recorded import RECORD_DIR_ENV

    records = tmp_path / "recorded"
    records.mkdir()
    (records / "prod.json").write_text(_json.dumps({"environment": "prod", "connect_url": "https://connect.prod.example:8083"}))
    monkeypatch.setenv(RECORD_DIR_ENV, str(records))
    monkeypatch.delenv("MSK_MIGRATE_TARGET_BOOTSTRAP", raising=False)
    monkeypatch.setenv("MSK_MIGRATE_CONNECT_URL", "https://connect.prod.example:8083")
    wrong: dict[str, str] = {}
    takers = [p for p in _flow_commands() if _takes(p, "connect_url")]
    for path in takers:
        kind, what = _run(path, ["--env", "dev", *_required(path, tmp_path)], local_env)
        err = what[1].strip() if kind == "exit" else ""
        if kind != "exit" or what[0] != 2 or err.count("\n") or "environment prod's connect url, not dev's" not in err:
            wrong[" ".join(path)] = f"{kind} {what}"
    assert not wrong, wrong
    assert ("connectors", "apply") in takers and len(takers) >= 10


def test_every_command_with_a_worker_sends_it_no_rest_secret_of_another_environment(local_env, stops, tmp_path, monkeypatch):
    """MSK_MIGRATE_CONNECT_SECRET_ARN (or --connect-secret-arn) beside ``--env dev`` must be one of dev's Connect REST
    secrets (``<prefix>/connect-rest`` or a person's ``<prefix>/connect-rest/<name>``, in dev's account and region):
    prod's, or one of another account or region, is one line naming where it came from, exit 2, and Secrets Manager
    is never asked (the password would otherwise go to dev's worker). dev's own secret gets past the check."""
    from msk_migrate.config.environment import load_environment
    from msk_migrate.config.environment_files import environment_path
    from msk_migrate.connect_api import rest

    asked: list[str] = []
    monkeypatch.setattr(rest, "credentials_from_secret", lambda arn: asked.append(arn) or ("u", "p"))
    dev = load_environment(environment_path("dev"))
    own = f"arn:aws:secretsmanager:{dev.region}:{dev.account_id}:secret:{dev.connect_rest_secret_name}-AbCdEf"
    person = f"arn:aws:secretsmanager:{dev.region}:{dev.account_id}:secret:{dev.connect_rest_secret_name}/alice-AbCdEf"
    foreign = {"prod's": own.replace(dev.connect_rest_secret_name, "msk-migrate-prod/connect-rest"),
               "another account's": own.replace(dev.account_id, "222222222222"),
               "another region's": own.replace(dev.region, "us-east-1"),
               "a look-alike": own.replace("connect-rest", "connect-rest-copy")}
    monkeypatch.delenv("MSK_MIGRATE_CONNECT_URL", raising=False)
    takers = [p for p in _flow_commands() if _takes(p, "connect_url")]
    base = ["--env", "dev", "--connect-url", "http://127.0.0.1:9", "--target-bootstrap", "127.0.0.1:9"]
    wrong: dict[str, str] = {}
    for path in takers:
        args = [*base, *_required(path, tmp_path)]
        for what, arn in foreign.items():
            monkeypatch.setenv("MSK_MIGRATE_CONNECT_SECRET_ARN", arn)
            kind, got = _run(path, args, local_env)
            err = got[1].strip() if kind == "exit" else ""
            if kind != "exit" or got[0] != 2 or err.count("\n") or "MSK_MIGRATE_CONNECT_SECRET_ARN" not in err \
                    or "is not a Connect REST secret of --env dev" not in err:
                wrong[f"{' '.join(path)} ({what})"] = f"{kind} {got}"
        monkeypatch.delenv("MSK_MIGRATE_CONNECT_SECRET_ARN")
        kind, got = _run(path, [*args, "--connect-secret-arn", foreign["prod's"]], local_env)
        if kind != "exit" or got[0] != 2 or "--connect-secret-arn" not in got[1]:
            wrong[f"{' '.join(path)} (option)"] = f"{kind} {got}"
        for mine in (own, person):
            monkeypatch.setenv("MSK_MIGRATE_CONNECT_SECRET_ARN", mine)
            kind, got = _run(path, args, local_env)
            if kind == "exit" and "is not a Connect REST secret" in got[1]:
                wrong[f"{' '.join(path)} (dev's own)"] = f"{kind} {got}"
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
    assert asked and set(asked) <= {own, person}, asked  # only dev's own secrets were ever read
    assert ("connectors", "apply") in takers and ("lag",) in takers
