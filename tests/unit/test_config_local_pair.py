"""Issue 48's user path: a lab flow file (`--config F`) and the local worker (`--local`), on a local environment that
runs its registries (as after `make rehearse`). `lag` and `cutover check` take the pair as `offsets verify` and
`preflight` do: F's clusters, the local worker, and F's registries (or none), never the local environment's; only the
`schemas` commands, where --local names the registries, refuse it. No cluster is asked: the session's opening is
replaced by a stop that keeps the flow it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from msk_migrate.errors import UsageError

LAB = """\
source: {alias: source, bootstrap_servers: "10.9.9.1:9092"}
target: {alias: target, bootstrap_servers: "10.9.9.2:9092"}
migration: {name: lab, topics: ["lab-.*"]}
"""
NAMED = LAB + "schema_registry: {source: 'http://lab-source:8081', target: 'http://lab-target:8081'}\n"


#: Where the command would open its session (connect to the clusters) it stops, with this line.
STOP = UsageError("session", "stopped before any connection", "nothing to fix: the test stops here")


@pytest.fixture
def recorded_env(tmp_path: Path, monkeypatch) -> Path:
    """A recorded local environment with a Connect worker and both registries (no process: nothing is asked)."""
    from msk_migrate.local.connect_worker import local_worker_spec
    from msk_migrate.local.layout import RegistryPorts, plan_layout
    from msk_migrate.local.procs import ProcRecord
    from msk_migrate.local.shape import default_shape
    from msk_migrate.local.state import LocalState, StateFile

    base = tmp_path / "env"
    shape = default_shape()
    state = LocalState(shape=shape, workers=[local_worker_spec()],
                       clusters={role: plan_layout(shape.side(role)) for role in ("source", "target")},
                       procs={"connect": ProcRecord("connect", 1, 1, str(base / "connect.log"))},
                       registries={"source": RegistryPorts(port=18081, management_port=19081),
                                   "target": RegistryPorts(port=18082, management_port=19082)})
    StateFile(base).save(state)
    for var in ("MSK_MIGRATE_CONNECT_URL", "MSK_MIGRATE_SOURCE_REGISTRY_URL", "MSK_MIGRATE_TARGET_REGISTRY_URL",
                "MSK_MIGRATE_TARGET_BOOTSTRAP", "MSK_MIGRATE_LEDGER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(base))
    return base


@pytest.fixture
def stops(monkeypatch) -> dict:
    """The flow each command got to, and the registries the resolver gave it, with the session never opened."""
    import msk_migrate.runbook.session as session
    import msk_migrate.schemas.registries as registries

    seen: dict = {}
    resolve = registries.resolve_registries

    def resolving(**kw):
        seen["registries"] = resolve(**kw)
        return seen["registries"]

    def stop(flow, **needs):
        seen["flow"] = flow
        raise STOP

    monkeypatch.setattr(registries, "resolve_registries", resolving)
    monkeypatch.setattr(session, "open_session", stop)
    return seen


COMMANDS = [["lag"], ["cutover", "check", "--group", "g"], ["offsets", "verify"], ["preflight"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("flow_text", [LAB, NAMED], ids=["bare", "named"])
def test_config_and_local_are_one_flow_and_one_worker_for_every_command(command, flow_text, recorded_env, stops, tmp_path, capfd):
    flow_file = tmp_path / "lab.yaml"
    flow_file.write_text(flow_text)
    code = run_cli(cli, [*command, "--config", str(flow_file), "--local"], "msk-migrate")
    _, err = capfd.readouterr()
    assert code == 2 and "stopped before any connection" in err and "give one of them" not in err, err
    flow = stops["flow"]
    assert flow.source.bootstrap_servers == "10.9.9.1:9092" and flow.origin == f"flow file {flow_file}"  # F's clusters
    assert flow.connect_url and flow.connect_url.startswith("http://127.0.0.1:")  # the local worker
    if command[0] in ("lag", "cutover"):  # the gates resolve their registries: F's, never the local environment's
        regs = stops["registries"]
        assert (regs.urls() if regs else None) == (
            {"source": "http://lab-source:8081", "target": "http://lab-target:8081"} if flow_text == NAMED else None)


def test_without_local_the_gates_ask_for_a_worker_and_schemas_beside_local_take_the_files_registries(recorded_env, tmp_path, capfd):
    flow_file = tmp_path / "lab.yaml"
    flow_file.write_text(LAB)
    for command in (["lag"], ["cutover", "check", "--group", "g"]):
        assert run_cli(cli, [*command, "--config", str(flow_file)], "msk-migrate") == 2
        _, err = capfd.readouterr()
        assert "--connect-url" in err and "--local" in err, err
    # `schemas`: beside a flow file --local names the local worker, as for every command, and the file's registries
    # are the ones used: a file without them is refused for that, never for the combination
    assert run_cli(cli, ["schemas", "plan", "--config", str(flow_file), "--local"], "msk-migrate") == 2
    _, err = capfd.readouterr()
    assert "--config/--local" not in err and "no schema_registry section" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("command", [["lag"], ["cutover", "check", "--group", "g"], ["validate"]], ids=lambda c: c[0])
def test_a_command_with_a_flow_takes_its_registries_from_the_flow_without_reading_the_file_again(command, recorded_env, stops,
                                                                                               tmp_path, capfd, monkeypatch):
    """The flow's file is read once, with the flow: the registry resolver gets the section read then (a second read,
    which could see another file, is refused here). `validate` stops where it would read the clusters."""
    import msk_migrate.config.schema_registry as schema_registry

    def read_again(*_a, **_k):
        raise AssertionError("the flow's file was read again for its registries")

    monkeypatch.setattr(schema_registry, "registry_file", read_again)
    flow_file = tmp_path / "lab.yaml"
    flow_file.write_text(NAMED)
    if command == ["validate"]:
        import msk_migrate.validation.job as job

        def stop_validation(req, **_k):
            stops["request"] = req
            raise STOP

        monkeypatch.setattr(job, "run_validation", stop_validation)
    code = run_cli(cli, [*command, "--config", str(flow_file), "--local"], "msk-migrate")
    _, err = capfd.readouterr()
    assert code == 2 and "stopped before any connection" in err, err
    regs = stops["registries"]
    assert regs.urls() == {"source": "http://lab-source:8081", "target": "http://lab-target:8081"}
    assert regs.source.named_by == "--config (schema_registry.source)"


def test_a_local_flow_names_the_local_environments_registries_and_a_file_flow_its_section(recorded_env, tmp_path) -> None:
    from msk_migrate.commands.flow import resolve_flow

    local = resolve_flow(None, None, True, None, None)
    assert local.registry_file is None and local.registry_urls() == {
        "source": "http://127.0.0.1:18081/apis/ccompat/v7", "target": "http://127.0.0.1:18082/apis/ccompat/v7"}
    flow_file = tmp_path / "lab.yaml"
    flow_file.write_text(LAB)
    bare = resolve_flow(None, flow_file, True, None, None)  # beside a file, --local is the worker only
    assert bare.local_registries is None and bare.registry_urls() is None
    flow_file.write_text(NAMED)
    named = resolve_flow(None, flow_file, False, None, None)
    assert named.registry_urls() == {"source": "http://lab-source:8081", "target": "http://lab-target:8081"}
