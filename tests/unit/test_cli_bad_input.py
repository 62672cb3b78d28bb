"""Every command and every option of `msk-migrate`, fed malformed values: exit 2, one line, no traceback.

The table is generated from the click command tree, so a new command or option cannot escape it:
each option is classified below (a malformed value for it, or listed as free text that accepts any
value). Baselines make the rest of the command line valid and point at endpoints that do not exist,
so a value that escaped validation shows up as a wrong exit code, never as a change anywhere.
"""

from __future__ import annotations

import click
import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli

NOWHERE_URL = "http://127.0.0.1:9"
MISSING_FILE = "/nonexistent-msk-migrate/input.yaml"
UNWRITABLE = "/proc/msk-migrate-no-such-dir/out"

#: Malformed values per long option name.
BAD_BY_NAME: dict[str, list[str]] = {
    "--connect-url": ["ht!tp://x", "ftp://127.0.0.1:8083", "127.0.0.1:8083", "http://"],
    "--connect-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--connect-ca": [MISSING_FILE],
    "--target-bootstrap": ["no-port", "host:notaport", ","],
    "--env": ["../prod", "UPPER"],
    "--config": [MISSING_FILE],
    "--out": [UNWRITABLE],
    "--report-dir": [UNWRITABLE + "/reports", "s3:/no-bucket"],
    "--from-s3": ["s3:/bucket", "https://bucket/prefix", "s3://"],
    "--source-bootstrap-servers": ["no-port", "host:notaport", ","],
    "--target-bootstrap-servers": ["no-port", "host:notaport", ","],
    "--source-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--target-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--source-ca-secret-arn": ["arn:aws:s3:::bucket"],
    "--target-ca-secret-arn": ["arn:aws:s3:::bucket"],
    "--topic-regex": ["a,b", "(unclosed"],
    "--exclude-regex": ["(unclosed"],
    "--topic-map": ["no-equals-sign", "a=", "=b"],
    "--topics": ["a,,b", "bad topic name"],
    "--topic": ["bad topic name", ""],
    "--from-timestamp": ["yesterday-ish", "2026-13-45T00:00:00Z"],
    "--until-timestamp": ["yesterday-ish"],
    "--kafka-option": ["no-equals", "security.protocol=PLAINTEXT"],
    "--ignore-config": ["", "not a config key!"],
    "--tag": ["latest", "has space"],
    "--kafka-version": ["latest", "2.8.0"],
    "--source-kafka": ["2.7.0", "latest"],  # versions the harness cannot start
    "--broker-heap": ["12x", "64m"],
    "--images": ["no-such-image"],
    "--repository-prefix": ["UPPER/Case!"],
    "--group": ["", "bad group\n"],
    "--wave": ["bad wave!", "no-such-wave"],  # malformed at parsing; unknown once the flow is read, before any network
    "--cluster-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--validation-report": [MISSING_FILE],
    "offsets sync --certificate": [UNWRITABLE + "/certs", "s3://"],
    "cutover check --certificate": [MISSING_FILE],
    "--builder": ["bogus-builder"],
    "--registry": ["not a host!"],
    "--region": ["eu-westt-1"],
    # `local up --dir` creates a missing directory (a valid value): only an unwritable one is bad.
    "local up --dir": [UNWRITABLE + "/env"],
    "account": ["12345", "not-an-account"],
    "region": ["eu-westt-1", "EU-WEST-1"],
}
#: Options whose every value is acceptable here, with why.
FREE_TEXT = {
    "--s3-endpoint-url": "test hook (moto)", "--ecr-endpoint-url": "test hook (moto)",
    "--local-dir": "test hook (hidden)", "names": "connector names: the worker answers 404 for unknown ones",
    "--ecs-cluster": "read only with --in-vpc", "--ecs-service": "read only with --in-vpc",
    "--task-definition": "read only with --in-vpc", "--container": "read only with --in-vpc",
    "local status --dir": "a missing directory is a valid answer: nothing is running there",
    "local down --dir": "a missing directory is a valid answer: nothing to stop",
}

FLOW = ["--config", "tests/unit/data/nowhere-flow.yaml", "--connect-url", NOWHERE_URL]
#: The rest of a valid command line for each command (so only the option under test is wrong).
BASE: dict[str, list[str]] = {
    "local up": ["--dir", UNWRITABLE],
    "local status": ["--dir", UNWRITABLE],
    "local down": ["--dir", UNWRITABLE],
    "connectors render": ["--config", "tests/unit/data/nowhere-flow.yaml"],
    "connectors apply": [*FLOW],
    "connectors status": [*FLOW],
    "connectors restart": [*FLOW, "mm2-source"],
    "connectors pause": [*FLOW, "mm2-source"],
    "connectors resume": [*FLOW, "mm2-source"],
    "connectors delete": [*FLOW, "mm2-source"],
    "preflight": [*FLOW],
    "offsets verify": [*FLOW],
    "offsets sync": [*FLOW, "--group", "g1", "--dry-run"],
    "acls plan": [*FLOW, "--cluster-arn", "arn:aws:kafka:eu-west-1:111111111111:cluster/msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"],
    "offsets snapshot": [*FLOW, "--out", "/tmp/msk-migrate-bad-input-snapshot.json"],
    "lag": [*FLOW],
    "cutover check": [*FLOW, "--group", "g1"],
    "rollback plan": [*FLOW, "--topic", "orders"],
    "rollback apply": [*FLOW, "--topic", "orders"],
    "cleanup": [*FLOW],
    "status": [*FLOW],
    "validate": ["--source-bootstrap-servers", "127.0.0.1:9", "--target-bootstrap-servers", "127.0.0.1:9",
                 "--topics", "t", "--no-report", "--metadata-timeout", "1"],
    "build-images": ["123456789012", "eu-west-1", "--dry-run"],
}
#: Commands never fed values here, with the reason.
EXEMPT = {"rehearse": "starts the local environment; its shape options are `local up`'s (fed bad values there)"}


def _leaves(group: click.Group, path: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, (*path, name))
        else:
            yield " ".join((*path, name)), cmd


def _long_name(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return param.name or "?"
    longs = [o for o in param.opts if o.startswith("--")]
    return longs[0] if longs else param.opts[0]


def _bad_values(param: click.Parameter, path: str = "") -> list[str] | None:
    name = _long_name(param)
    if f"{path} {name}" in FREE_TEXT:
        return []
    if f"{path} {name}" in BAD_BY_NAME:
        return list(BAD_BY_NAME[f"{path} {name}"])
    if isinstance(param, click.Option) and (param.is_flag or param.count):
        return []
    if isinstance(param, click.Option) and param.hidden and name not in BAD_BY_NAME:
        return []
    if name in {"--output", "--help"} and isinstance(param.type, click.Choice):
        return ["bogus-output"]
    if name in BAD_BY_NAME:
        values = list(BAD_BY_NAME[name])
    elif name in FREE_TEXT:
        return []
    elif isinstance(param.type, click.Choice):
        values = ["bogus-choice"]
    elif isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        values = ["abc", "-5"]
    elif isinstance(param.type, click.Path | click.File):
        values = [MISSING_FILE]
    else:
        return None  # unclassified
    return values


def _cases():
    cases, unclassified = [], []
    for path, cmd in _leaves(cli):
        if path in EXEMPT:
            continue
        if path not in BASE:
            unclassified.append(f"{path}: no baseline command line in BASE")
            continue
        for param in cmd.params:
            values = _bad_values(param, path)
            if values is None:
                unclassified.append(f"{path} {_long_name(param)}")
                continue
            for value in values:
                cases.append(pytest.param(path, param, value, id=f"{path} {_long_name(param)}={value!r}"))
    return cases, unclassified


CASES, UNCLASSIFIED = _cases()


def test_every_command_and_option_is_classified_for_bad_input():
    assert not UNCLASSIFIED, "classify these in tests/unit/test_cli_bad_input.py: " + "; ".join(UNCLASSIFIED)


def _argv(path: str, param: click.Parameter, value: str) -> list[str]:
    base = list(BASE[path])
    name = _long_name(param)
    if isinstance(param, click.Argument):
        # Replace the baseline's positional value(s) in order: the first ones belong to the first arguments.
        cmd = dict(_leaves(cli))[path]
        positional = [p for p in cmd.params if isinstance(p, click.Argument)]
        idx = positional.index(param)
        flags_and_values = []
        pos_values = []
        it = iter(base)
        for tok in it:
            if tok.startswith("--"):
                flags_and_values.append(tok)
                opt = next((p for p in cmd.params if tok in getattr(p, "opts", [])), None)
                if opt is not None and not getattr(opt, "is_flag", False):
                    flags_and_values.append(next(it))
            else:
                pos_values.append(tok)
        pos_values[idx] = value
        return [*path.split(), *pos_values, *flags_and_values]
    if name in base:  # the baseline already sets it: replace its value
        i = base.index(name)
        base[i + 1] = value
        return [*path.split(), *base]
    return [*path.split(), *base, name, value]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("path", "param", "value"), CASES)
def test_malformed_value_is_one_line_exit_2_and_no_traceback(path, param, value, capfd, monkeypatch):
    monkeypatch.delenv("MSK_MIGRATE_DEBUG", raising=False)
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[2])
    code = run_cli(cli, _argv(path, param, value), "msk-migrate")
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, f"exit {code}, expected 2; stderr: {err.strip()[-400:]}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {lines}"


# ---- the other entry points: the same boundary (cliutil.run_guarded) ---------------------------------
# infra/main.py and infra/handover.py are argparse scripts (the cdktf CLI runs main.py); their table is
# generated from their parsers the same way. ./build_images.py and the EMR entry of validate run the
# click commands above through their own mains, checked here with one case each.

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
MISSING_DIR = "/nonexistent-msk-migrate/environments"


def _script(name: str):
    import importlib.util
    import sys

    infra = REPO_ROOT / "infra"
    if str(infra) not in sys.path:
        sys.path.insert(0, str(infra))
    spec = importlib.util.spec_from_file_location(f"msk_migrate_bad_input_{name}", infra / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPTS = {"main": _script("main"), "handover": _script("handover")}
#: A valid command line per script that starts nothing slow (no jsii synth, no terraform).
SCRIPT_BASE = {"main": ["--check", "--env", "dev"], "handover": ["prod"]}
SCRIPT_BAD: dict[str, list[str]] = {
    "main --environments": [MISSING_DIR],
    "main --env": ["../prod", "UPPER", "staging"],
    "handover env": ["../prod", "UPPER", "staging"],
    "handover --environments": [MISSING_DIR],
}
#: Options read only after a synth or by terraform (not startable in this tier), with why.
SCRIPT_EXEMPT = {
    "main --outdir": "written by the jsii synth only (--check does not use it)",
    "main --state-dir": "created by the synth only",
    "main --build-dir": "a missing directory is valid: no manifest yet, the stacks use placeholders",
    "handover --outdir": "read after the synth (terraform tier)",
    "handover --state-dir": "passed to the synth",
    "handover --build-dir": "passed to the synth",
}
#: Malformed command lines every script refuses the same way.
MALFORMED_LINES = [["--no-such-option"], ["--environments"]]


def _script_cases():
    cases, unclassified = [], []
    for name, module in SCRIPTS.items():
        for action in module.parser()._actions:
            if action.nargs == 0:  # flags and --help
                continue
            key = f"{name} {action.option_strings[0] if action.option_strings else action.dest}"
            if key in SCRIPT_EXEMPT:
                continue
            if key not in SCRIPT_BAD:
                unclassified.append(key)
                continue
            for value in SCRIPT_BAD[key]:
                argv = list(SCRIPT_BASE[name])
                if action.option_strings:
                    argv += [action.option_strings[0], value]
                else:
                    argv = [value if a == SCRIPT_BASE[name][0] else a for a in argv]
                cases.append(pytest.param(name, argv, value, id=f"{key}={value!r}"))
        cases += [pytest.param(name, [*SCRIPT_BASE[name], *line], line[0], id=f"{name} {' '.join(line)}") for line in MALFORMED_LINES]
    return cases, unclassified


SCRIPT_CASES, SCRIPT_UNCLASSIFIED = _script_cases()


def test_every_script_option_is_classified_for_bad_input():
    assert not SCRIPT_UNCLASSIFIED, "classify these in tests/unit/test_cli_bad_input.py: " + "; ".join(SCRIPT_UNCLASSIFIED)


def _assert_one_line_exit_2(code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, f"exit {code}, expected 2; stderr: {err.strip()[-400:]}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {lines}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("script", "argv", "named"), SCRIPT_CASES)
def test_malformed_script_argument_is_one_line_exit_2_and_no_traceback(script, argv, named, capfd, monkeypatch):
    monkeypatch.delenv("MSK_MIGRATE_DEBUG", raising=False)
    monkeypatch.chdir(REPO_ROOT)
    code = SCRIPTS[script].main(argv)
    out, err = capfd.readouterr()
    _assert_one_line_exit_2(code, out, err)
    assert named in err, f"the error does not name {named!r}: {err.strip()}"


def test_script_baselines_are_valid(capfd, monkeypatch):
    """The baselines above are accepted (main) or refused for the documented reason only (handover: prod
    did not create its cluster), so each malformed value is what makes its case fail."""
    monkeypatch.chdir(REPO_ROOT)
    assert SCRIPTS["main"].main(SCRIPT_BASE["main"]) == 0
    assert SCRIPTS["handover"].main(SCRIPT_BASE["handover"]) == 2
    err = capfd.readouterr().err
    assert "target.existing_cluster_arn" in err and err.count("error: ") == 1


def test_build_images_script_and_standalone_validate_use_the_same_boundary(capfd, monkeypatch):
    from msk_migrate.commands.build_images import main as build_images_main
    from msk_migrate.validation.cli import run_cli as validate_run_cli

    monkeypatch.delenv("MSK_MIGRATE_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exited:
        build_images_main(["12345", "eu-west-1", "--dry-run"])
    out, err = capfd.readouterr()
    _assert_one_line_exit_2(exited.value.code, out, err)
    assert err.startswith("error: ACCOUNT")
    code = validate_run_cli([*BASE["validate"], "--topic-map", "no-equals-sign"])
    out, err = capfd.readouterr()
    _assert_one_line_exit_2(code, out, err)
    assert "--topic-map" in err
