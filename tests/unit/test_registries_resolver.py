"""The one registry resolver (msk_migrate.schemas.registries.resolve_registries): its rules, one test each, on
values already read (no file, no local environment, no registry); and its inputs gathered from a command's options."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.config.schema_registry import LocalRegistries, RegistryFile, SchemaRegistrySection
from msk_migrate.errors import UsageError
from msk_migrate.schemas.registries import resolve_registries

SRC, TGT = "http://opt-source:8081", "http://opt-target:8081"
SECTION = SchemaRegistrySection(source="http://file-source:8081", target="https://file-target/apis/ccompat/v7",
                                target_secret_arn="arn:aws:secretsmanager:eu-west-1:111122223333:secret:reg-target")
WITH = RegistryFile("--config", Path("/nowhere/flow.yaml"), SECTION)  # the resolver never reads the path
WITHOUT = RegistryFile("--config", Path("/nowhere/bare.yaml"), None)
LOCAL = LocalRegistries(Path("/nowhere/env"), {"source": "http://127.0.0.1:1/apis/ccompat/v7", "target": "http://127.0.0.1:2/apis/ccompat/v7"})
NO_LOCAL = LocalRegistries(Path("/nowhere/env"), {})


def _named(regs) -> dict[str, tuple[str, str]]:
    return {e.role: (e.url, e.named_by) for e in (regs.source, regs.target)}


def test_rule_1_an_option_wins_over_the_file_for_its_role_only() -> None:
    regs = resolve_registries(source_url=SRC, file=WITH)
    assert _named(regs) == {"source": (SRC, "--source-registry"),
                            "target": (SECTION.target, "--config (schema_registry.target)")}


def test_rule_2_the_files_section_names_both_and_its_secrets_with_where_they_came_from() -> None:
    regs = resolve_registries(file=WITH)
    assert regs is not None and regs.urls() == {"source": SECTION.source, "target": SECTION.target}
    assert regs.source.secret_arn is None and regs.source.secret_named_by == "--source-registry-secret-arn"
    assert (regs.target.secret_arn, regs.target.secret_named_by) == (SECTION.target_secret_arn, "--config (schema_registry.target_secret_arn)")
    given = resolve_registries(file=WITH, target_secret="arn:aws:secretsmanager:eu-west-1:111122223333:secret:mine")
    assert given is not None and given.target.secret_named_by == "--target-registry-secret-arn"


def test_rule_2_a_section_url_is_checked_under_the_setting_that_gave_it() -> None:
    bad = RegistryFile("--env", Path("/nowhere/dev.yaml"), SchemaRegistrySection(source="registry:8081", target=TGT))
    with pytest.raises(UsageError) as err:
        resolve_registries(file=bad)
    assert err.value.field == "--env (schema_registry.source)"
    assert resolve_registries(file=bad, source_url=SRC) is not None  # the option's URL replaces it: not read


def test_rule_3_the_local_registries_name_the_roles_only_when_no_file_gives_the_flow() -> None:
    regs = resolve_registries(local=LOCAL)
    assert regs is not None and _named(regs)["target"] == (LOCAL.urls["target"], "--local")
    assert _named(resolve_registries(local=LOCAL, target_url=TGT))["target"] == (TGT, "--target-registry")
    # `--config F --local`: --local chooses the worker; the file names the registries, or none
    assert resolve_registries(file=WITHOUT, local=LOCAL) is None
    assert resolve_registries(file=WITH, local=LOCAL).urls() == {"source": SECTION.source, "target": SECTION.target}


@pytest.mark.parametrize(("inputs", "field", "says"), [
    ({"file": WITHOUT}, "--config", "/nowhere/bare.yaml has no schema_registry section"),
    ({"local": NO_LOCAL}, "--local", "the local environment under /nowhere/env runs no schema registry"),
    ({"file": WITHOUT, "local": LOCAL}, "--config", "has no schema_registry section"),  # never the local one
])
def test_rule_4_wanted_registries_need_the_given_file_or_local_environment_to_name_them(inputs, field, says) -> None:
    for wanted in ({"required": True}, {"source_url": SRC}, {"source_url": SRC, "target_url": TGT}):
        with pytest.raises(UsageError) as err:
            resolve_registries(**wanted, **inputs)
        assert err.value.field == field and says in err.value.message, wanted
    assert resolve_registries(**inputs) is None  # not wanted: nothing to check


def test_rule_5_nothing_named_is_none_and_required_names_the_source_option() -> None:
    assert resolve_registries() is None
    with pytest.raises(UsageError) as err:
        resolve_registries(required=True)
    assert (err.value.field, err.value.message) == ("--source-registry", "no source registry given")


def test_rule_6_one_role_without_the_other_names_the_others_option() -> None:
    with pytest.raises(UsageError) as err:
        resolve_registries(source_url=SRC)
    assert (err.value.field, err.value.message) == ("--target-registry", "no target registry given")
    regs = resolve_registries(source_url=SRC, target_url=TGT)
    assert regs is not None and regs.urls() == {"source": SRC, "target": TGT}


def test_the_clients_carry_the_name_of_what_gave_each_url(monkeypatch) -> None:
    for role in ("SOURCE", "TARGET"):
        for var in ("USER", "PASSWORD", "CA", "CERT", "KEY"):
            monkeypatch.delenv(f"MSK_MIGRATE_{role}_REGISTRY_{var}", raising=False)
    monkeypatch.setenv("MSK_MIGRATE_SOURCE_REGISTRY_USER", "u")
    monkeypatch.setenv("MSK_MIGRATE_SOURCE_REGISTRY_PASSWORD", "p")
    src, tgt = resolve_registries(source_url=SRC, local=LOCAL).clients()
    assert (src.role, src.url, src.option, src.auth) == ("source", SRC, "--source-registry", ("u", "p"))
    assert (tgt.role, tgt.url, tgt.option, tgt.auth) == ("target", LOCAL.urls["target"], "--local", None)


def test_rule_7_an_exported_url_or_secret_that_contradicts_the_files_section_is_refused_naming_the_variable() -> None:
    with pytest.raises(UsageError) as err:
        resolve_registries(target_url=TGT, file=WITH, exported={"target_url": "MSK_MIGRATE_TARGET_REGISTRY_URL"})
    assert err.value.field == "MSK_MIGRATE_TARGET_REGISTRY_URL"
    assert "contradicts --config (schema_registry.target), which names https://file-target" in str(err.value)
    other = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:reg-prod"
    with pytest.raises(UsageError) as err:
        resolve_registries(target_secret=other, file=WITH, exported={"target_secret": "MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN"})
    assert err.value.field == "MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN" and "schema_registry.target_secret_arn" in str(err.value)
    # the same values typed on the command line are the operator's choice (rule 1); the section's own value exported
    # agrees; without a section, or where the section names no secret, nothing contradicts
    assert resolve_registries(target_url=TGT, file=WITH).target.url == TGT
    same = resolve_registries(target_url=SECTION.target + "/", file=WITH, exported={"target_url": "MSK_MIGRATE_TARGET_REGISTRY_URL"})
    assert same is not None
    assert resolve_registries(source_url=SRC, target_url=TGT, exported={"target_url": "MSK_MIGRATE_TARGET_REGISTRY_URL"}) is not None
    assert resolve_registries(source_secret=other, file=WITH, exported={"source_secret": "MSK_MIGRATE_SOURCE_REGISTRY_SECRET_ARN"})


def test_an_exported_registry_of_another_flow_reaches_no_registry(tmp_path: Path, monkeypatch, capfd) -> None:
    """The boundary from the other side: MSK_MIGRATE_TARGET_REGISTRY_URL left exported from another environment
    points at a listener of this test's own; `schemas copy --config F` (F names its registries) and `lag --config F`
    refuse it in one line naming the variable, exit 2, and the listener never hears a request."""
    import socket

    from msk_migrate.cliutil import run_cli
    from msk_migrate.commands.root import cli

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)  # a connection made at any time waits in the backlog: accept() finds it at once
    port = listener.getsockname()[1]
    flow = tmp_path / "flow.yaml"
    flow.write_text(FLOW + "migration: {name: lab, topics: ['lab-.*']}\n"
                    "schema_registry: {source: 'http://127.0.0.1:9/', target: 'http://127.0.0.1:9/'}\n")
    monkeypatch.setenv("MSK_MIGRATE_TARGET_REGISTRY_URL", f"http://127.0.0.1:{port}/apis/ccompat/v7")
    try:
        for command in (["schemas", "copy"], ["schemas", "plan"], ["lag", "--connect-url", "http://127.0.0.1:9"]):
            code = run_cli(cli, [*command, "--config", str(flow)], "msk-migrate")
            _, err = capfd.readouterr()
            assert code == 2 and err.count("\n") == 1 and "MSK_MIGRATE_TARGET_REGISTRY_URL" in err \
                and "contradicts --config (schema_registry.target)" in err, (command, err)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing connected
    finally:
        listener.close()


# ---- the inputs, from a command's options (msk_migrate.commands.schemas.registries_from_options) ----------------
FLOW = "source: {alias: source, bootstrap_servers: '127.0.0.1:9'}\ntarget: {alias: target, bootstrap_servers: '127.0.0.1:9'}\n"


def _local_env(base: Path) -> Path:
    from msk_migrate.local.layout import RegistryPorts
    from msk_migrate.local.state import LocalState, StateFile

    StateFile(base).save(LocalState(registries={"source": RegistryPorts(port=1, management_port=2),
                                                "target": RegistryPorts(port=3, management_port=4)}))
    return base


def test_the_options_give_the_files_section_else_the_local_registries(tmp_path: Path) -> None:
    from msk_migrate.commands.schemas import registries_from_options

    base = _local_env(tmp_path / "env")
    bare, named = tmp_path / "bare.yaml", tmp_path / "named.yaml"
    bare.write_text(FLOW)
    named.write_text(FLOW + "schema_registry: {source: 'http://s:8081', target: 'http://t:8081'}\n")
    local = {"local": True, "local_dir": base}
    assert registries_from_options(local).urls() == {"source": "http://127.0.0.1:1/apis/ccompat/v7",
                                                    "target": "http://127.0.0.1:3/apis/ccompat/v7"}
    assert registries_from_options({**local, "config": bare}) is None
    assert registries_from_options({**local, "config": named}).urls() == {"source": "http://s:8081", "target": "http://t:8081"}
    assert registries_from_options({"local": True, "local_dir": tmp_path / "none"}) is None  # no local environment there
    with pytest.raises(UsageError, match="runs no schema registry"):
        registries_from_options({"local": True, "local_dir": tmp_path / "none"}, required=True)
