"""Every command and every option of `msk-migrate`, fed malformed values: refused where the value is parsed.

A case passes only because its value was refused: exit 2, one line on stderr, and that line names the
option under test. The network is refused at the socket and at the Kafka client (:func:`tripwire`): a value
that escapes its check and reaches a cluster, a worker, AWS or a JVM fails its case with what it tried to
reach, at once, instead of waiting for a timeout and exiting 2 for the wrong reason ("cluster unreachable").
:func:`test_baselines_are_valid_up_to_the_network` shows that each baseline command line, without a bad
value, does get as far as the network (or succeeds), so the bad value is the one thing a case changes.

The table is generated from the click command tree, so a new command or option cannot escape it: each
option is classified below (malformed values for it, or listed as free text that accepts any value).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from tests.cli_tree import named_leaves

REPO_ROOT = Path(__file__).resolve().parents[2]
NOWHERE_URL = "http://127.0.0.1:9"
MISSING_FILE = "/nonexistent-msk-migrate/input.yaml"
#: A path under a regular file: no process can create it, root included (root ignores permission bits).
UNWRITABLE = str(REPO_ROOT / "README.md" / "no-such-dir" / "out")


class NetworkReached(BaseException):
    """A command under test tried to reach a cluster, worker, AWS API or start a JVM (a BaseException, so no
    command's ``except Exception`` can swallow it)."""


@pytest.fixture
def tripwire(monkeypatch):
    """Refuse the network at the socket (requests, boto3, urllib) and at confluent-kafka's client constructors
    (librdkafka opens its own sockets in C), and refuse starting a JVM or a builder: each attempt is recorded
    and raises :class:`NetworkReached`. Yields the list of attempts."""
    import confluent_kafka
    import confluent_kafka.admin

    reached: list[str] = []

    def refuse(what: str):
        reached.append(what)
        raise NetworkReached(what)

    def connect(self, address, *a, **k):
        refuse(f"socket connect {address}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect)
    monkeypatch.setattr(socket, "create_connection", lambda address, *a, **k: refuse(f"create_connection {address}"))
    originals = {id(confluent_kafka.Consumer): "Consumer", id(confluent_kafka.Producer): "Producer",
                 id(confluent_kafka.admin.AdminClient): "AdminClient"}

    def client(name):
        def make(config, *a, **k):
            refuse(f"Kafka {name} to {dict(config).get('bootstrap.servers')}")
        return make

    monkeypatch.setattr(confluent_kafka, "Consumer", client("Consumer"))
    monkeypatch.setattr(confluent_kafka, "Producer", client("Producer"))
    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", client("AdminClient"))
    for mod in [m for n, m in sys.modules.items() if n.startswith("msk_migrate") and m is not None]:
        for attr, value in list(vars(mod).items()):
            if id(value) in originals:
                monkeypatch.setattr(mod, attr, client(originals[id(value)]))
    real_popen_init = subprocess.Popen.__init__

    def popen(self, args, *a, **k):
        argv = [args] if isinstance(args, str | bytes) else list(args)
        exe = Path(str(argv[0])).name if argv else ""
        if exe in {"java", "spark-submit", "mvn", "buildah", "docker", "skopeo", "aws", "terraform", "npx"}:
            refuse(f"process {exe}")
        real_popen_init(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    yield reached


#: Malformed values per long option name ("command --option" when commands differ on what is malformed).
BAD_BY_NAME: dict[str, list[str]] = {
    "--connect-url": ["ht!tp://x", "ftp://127.0.0.1:8083", "127.0.0.1:8083", "http://"],
    "--connect-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--connect-ca": [MISSING_FILE],
    "--mark": [UNWRITABLE, "s3:/bucket", "s3://Not_A_Bucket/x"],
    "--source-registry": ["registry.example:8081", "ftp://x", "http://", "https://u:p@r.example"],
    "--target-registry": ["registry.example:8081", "ftp://x", "http://", "https://u:p@r.example"],
    "--subject": ["", "bad\nsubject"],
    "--source-registry-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--target-registry-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--target-bootstrap": ["no-port", "host:notaport", ","],
    "--env": ["../prod", "UPPER", "no-such-env"],
    "build-images --env": ["../prod", "UPPER"],
    "--config": [MISSING_FILE, str(REPO_ROOT / "tests")],
    "--with-env": ["../prod", "UPPER", "no-such-env"],
    "--with-config": [MISSING_FILE, str(REPO_ROOT / "tests")],
    "--out": [UNWRITABLE, str(REPO_ROOT / "tests")],
    "--out-dir": [UNWRITABLE, str(REPO_ROOT / "README.md")],
    "--job-request": [UNWRITABLE, str(REPO_ROOT / "tests")],
    "--from-dir": [MISSING_FILE, str(REPO_ROOT / "README.md")],
    "--from-s3": ["s3:/bucket", "https://bucket/prefix", "s3://", "s3://Not_A_Bucket/x"],
    "--source-bootstrap": ["no-port", "host:notaport", ",", "h:99999"],
    "--source-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--target-secret-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--source-ca-secret-arn": ["arn:aws:s3:::bucket"],
    "--target-ca-secret-arn": ["arn:aws:s3:::bucket"],
    "--clusters": [MISSING_FILE],
    "--offsets-snapshot": [MISSING_FILE],
    "--topic-regex": ["a,b", "(unclosed", ""],
    "--exclude-regex": ["(unclosed"],
    "--topic-map": ["no-equals-sign", "a=", "=b", "a=bad topic"],
    "validate --topic": ["a,,b", "bad topic name", "..", "x" * 250],
    "--topic": ["bad topic name", "", ".", "..", "x" * 250, "a,b"],
    "--from-timestamp": ["yesterday-ish", "2026-13-45T00:00:00Z", "1700000000"],
    "--until-timestamp": ["yesterday-ish"],
    "--kafka-option": ["no-equals", "security.protocol=PLAINTEXT", "sasl.jaas.config=x"],
    "--ignore-config": ["", "not a config key!"],
    "--tag": ["latest", "has space"],
    "--kafka-version": ["latest", "2.8.0"],
    "--source-kafka": ["2.7.0", "latest"],  # versions the harness cannot start
    "--broker-heap": ["12x", "64m"],
    "--peer-brokers": ["-1", "100000", "two"],
    "--topology": ["star", "active_active"],
    "--metrics-bind": ["not-an-ip", "localhost", "300.1.1.1"],
    "--images": ["no-such-image"],
    "--repository-prefix": ["UPPER/Case!"],
    "--group": ["", "bad group\n", "tab\there"],
    "--wave": ["bad wave!", "no-such-wave"],  # malformed at parsing; unknown once the flow is read, before any network
    "--cluster-arn": ["arn:aws:s3:::bucket", "not-an-arn"],
    "--validation-report": [MISSING_FILE, "s3:/no-bucket", "https://bucket/report.json"],
    "validate --validation-report": [UNWRITABLE + "/reports", "s3:/no-bucket", "s3://"],
    "validate --copy-marks": ["a,b,c", "bad alias!", "same,same", "", ",msk"],
    "offsets sync --certificate": [UNWRITABLE + "/certs", "s3://", "ftp://host/certs"],
    "cutover check --certificate": [MISSING_FILE, "s3:/x"],
    "cutover run --certificate": [UNWRITABLE + "/certs", "s3://", "ftp://host/certs"],
    "cutover confirm --certificate": [UNWRITABLE + "/certs", "s3://", "ftp://host/certs"],
    "--builder": ["bogus-builder"],
    "--registry": ["not a host!"],
    "--registry-ca": [MISSING_FILE],
    "--env-file": [MISSING_FILE],
    "--aws-region": ["eu-westt-1", "EU-WEST-1", "moon-1"],
    # `local up --dir` creates a missing directory (a valid value): only one that cannot be created is bad.
    "local up --local-dir": [UNWRITABLE + "/env"],
    "account": ["12345", "not-an-account"],
    "region": ["eu-westt-1", "EU-WEST-1"],
}
#: Options whose every value is acceptable here, with why.
FREE_TEXT = {
    "--s3-endpoint-url": "test hook (moto)", "--ecr-endpoint-url": "test hook (moto)",
    "--local-dir": "test hook (hidden)", "names": "connector names: the worker answers 404 for unknown ones",
    "--ecs-cluster": "read only with --in-vpc", "--ecs-service": "read only with --in-vpc",
    "--task-definition": "read only with --in-vpc", "--task-container": "read only with --in-vpc",
    "local status --local-dir": "a missing directory is a valid answer: nothing is running there",
    "local down --local-dir": "a missing directory is a valid answer: nothing to stop",
    "--reason": "the operator's words, recorded in the ledger as given",
}

FLOW = ["--config", "tests/unit/data/nowhere-flow.yaml", "--connect-url", NOWHERE_URL]
#: The rest of a valid command line for each command (so only the option under test is wrong).
BASE: dict[str, list[str]] = {
    "local up": ["--local-dir", "/tmp/msk-migrate-bad-input/env"],
    "local status": ["--local-dir", "/nonexistent-msk-migrate/env"],
    "local down": ["--local-dir", "/nonexistent-msk-migrate/env"],
    "connectors render": ["--config", "tests/unit/data/nowhere-flow.yaml"],
    "connectors apply": [*FLOW],
    "connectors status": [*FLOW],
    "connectors restart": [*FLOW, "mm2-source"],
    "connectors pause": [*FLOW, "mm2-source"],
    "connectors resume": [*FLOW, "mm2-source"],
    "connectors delete": [*FLOW, "mm2-source"],
    "connectors reset-topic": [*FLOW, "--topic", "orders"],
    "preflight": [*FLOW],
    "offsets verify": [*FLOW],
    "offsets sync": [*FLOW, "--group", "g1", "--dry-run"],
    "acls plan": [*FLOW, "--cluster-arn", "arn:aws:kafka:eu-west-1:111111111111:cluster/msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"],
    "offsets snapshot": [*FLOW, "--out", "/tmp/msk-migrate-bad-input-snapshot.json"],
    "lag": [*FLOW],
    "cutover check": [*FLOW, "--group", "g1"],
    "cutover fence": [*FLOW],
    "cutover unfence": [*FLOW],
    "cutover run": [*FLOW],
    "cutover confirm": [*FLOW],
    "cutover abort": [*FLOW],
    "cutover abandon-group": [*FLOW, "--group", "g1", "--reason", "retired"],
    "rollback plan": [*FLOW, "--topic", "orders"],
    "rollback apply": [*FLOW, "--topic", "orders"],
    "cleanup": [*FLOW],
    "status": [*FLOW],
    "topology check": ["--config", "tests/unit/data/nowhere-flow-b.yaml", "--config", "tests/unit/data/nowhere-flow-c.yaml"],
    "validate": ["--source-bootstrap", "127.0.0.1:9", "--target-bootstrap", "127.0.0.1:9",
                 "--topic", "t", "--no-report", "--metadata-timeout", "1"],
    "build-images": ["123456789012", "eu-west-1", "--dry-run", "--builder", "buildah"],
    **{f"schemas {c}": ["--source-registry", NOWHERE_URL, "--target-registry", NOWHERE_URL] for c in ("plan", "copy", "verify")},
}
#: What each baseline does without a bad value: "network" = gets as far as a cluster, worker or JVM (and is
#: stopped there by the tripwire); a number = exits with it, reaching nothing.
BASELINE: dict[str, str | int] = {
    **{path: "network" for path in BASE},
    "local status": 1,  # nothing runs under a missing directory
    "local down": 0,  # nothing to stop
    "connectors render": 0,  # renders from the flow file alone
    "build-images": 0,  # --dry-run prints the commands and runs none
}
#: Commands never fed values here, with the reason.
EXEMPT = {"rehearse": "starts the local environment; its shape options are `local up`'s (fed bad values there)"}




def _long_name(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return param.name or "?"
    longs = [o for o in param.opts if o.startswith("--")]
    return longs[0] if longs else param.opts[0]


def _named(param: click.Parameter) -> str:
    """How the error line must name ``param``: its first long option, or an argument's metavar (ACCOUNT)."""
    return param.human_readable_name if isinstance(param, click.Argument) else _long_name(param)


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
    else:
        return None  # unclassified
    return values


def _cases():
    cases, unclassified = [], []
    for path, cmd in named_leaves(cli):
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
                shown = value if len(value) < 40 else value[:20] + f"...({len(value)})"
                cases.append(pytest.param(path, param, value, id=f"{path} {_long_name(param)}={shown!r}"))
    return cases, unclassified


CASES, UNCLASSIFIED = _cases()


def test_every_command_and_option_is_classified_for_bad_input():
    assert not UNCLASSIFIED, "classify these in tests/unit/test_cli_bad_input.py: " + "; ".join(UNCLASSIFIED)


def _argv(path: str, param: click.Parameter, value: str) -> list[str]:
    base = list(BASE[path])
    name = _long_name(param)
    if isinstance(param, click.Argument):
        # Replace the baseline's positional value(s) in order: the first ones belong to the first arguments.
        cmd = dict(named_leaves(cli))[path]
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
    return [*path.split(), *base, f"{name}={value}" if value.startswith("-") else name, *([] if value.startswith("-") else [value])]


def _run(argv: list[str], capfd) -> tuple[int, str, str]:
    code = run_cli(cli, argv, "msk-migrate")
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture(scope="module", autouse=True)
def _region_data():
    """botocore's bundled endpoint data (which regions have MSK, ECS, ECR) is read once per process, by the
    first region check: loaded here, so each case's time is its own check's (the load takes 0.5-2 s)."""
    from msk_migrate.config.identifiers import regions_of
    from msk_migrate.imagebuild.inputs import _ecr_regions

    for service in ("kafka", "ecs"):
        regions_of(service)
    _ecr_regions()


@pytest.fixture
def cli_env(monkeypatch, tripwire):
    monkeypatch.delenv("MSK_MIGRATE_DEBUG", raising=False)
    for var in ("MSK_MIGRATE_CONNECT_URL", "MSK_MIGRATE_TARGET_BOOTSTRAP", "MSK_MIGRATE_LOCAL_ENV_DIR",
                "MSK_MIGRATE_CONNECT_CA", "MSK_MIGRATE_CONNECT_SECRET_ARN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(REPO_ROOT)
    return tripwire


@pytest.mark.parametrize(("path", "param", "value"), CASES)
def test_malformed_value_is_refused_naming_its_option_before_any_network(path, param, value, capfd, cli_env):
    code, out, err = _run(_argv(path, param, value), capfd)
    assert not cli_env, f"{path} {_named(param)}={value!r} was not refused: the command went on to reach {cli_env[0]}"
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, f"exit {code}, expected 2; stderr: {err.strip()[-400:]}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {lines}"
    assert _named(param) in lines[0], f"the error does not name {_named(param)}: {lines[0]}"


@pytest.mark.parametrize("path", sorted(BASE))
def test_baselines_are_valid_up_to_the_network(path, capfd, cli_env, tmp_path):
    """Each baseline alone is accepted: it gets as far as the network (stopped there by the tripwire) or ends
    as its command does with nothing to reach; so in a case above, the bad value is what was refused."""
    base = [str(tmp_path / "env") if a == "/tmp/msk-migrate-bad-input/env" else a for a in BASE[path]]
    code, _, err = _run([*path.split(), *base], capfd)
    expected = BASELINE[path]
    if expected == "network":
        assert cli_env, f"`{path}` baseline reached nothing (exit {code}): {err.strip()[-300:]}"
    else:
        assert not cli_env and code == expected, f"`{path}` baseline: exit {code}, reached {cli_env}; {err.strip()[-300:]}"


# ---- the other entry points: the same boundary (cliutil.run_guarded) ---------------------------------
# infra/main.py and infra/handover.py are argparse scripts (the cdktf CLI runs main.py); their table is
# generated from their parsers the same way. ./build_images.py and the EMR entry of validate run the
# click commands above through their own mains, checked here with one case each.

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


SCRIPTS = {"main": _script("main"), "handover": _script("handover"), "prerequisites": _script("prerequisites")}
#: A valid command line per script that starts nothing slow (no jsii synth, no terraform).
SCRIPT_BASE = {"main": ["--check", "--env", "dev"], "handover": ["prod"],
               "prerequisites": ["dev"]}  # its baseline asks AWS (tests/infra/test_infra_deploy_rehearsal.py runs it)
SCRIPT_BAD: dict[str, list[str]] = {
    "main --environments": [MISSING_DIR],
    "main --env": ["../prod", "UPPER", "staging"],
    "handover env": ["../prod", "UPPER", "staging"],
    "handover --environments": [MISSING_DIR],
    "prerequisites env": ["../prod", "UPPER", "staging"],
    "prerequisites --environments": [MISSING_DIR],
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
    from msk_migrate.commands.validate import run_cli as validate_run_cli

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
