"""The operator grammar: every option of every runbook command is decided, and each kind of value is checked."""

from __future__ import annotations

import click
import pytest

from msk_migrate.aws.operator_entry import RUNBOOK_COMMANDS
from msk_migrate.aws.operator_stack import Prefixes, RequestRefused
from msk_migrate.commands.operator_grammar import CALLER_OPTIONS, STACK_OPTIONS, check_request, classified
from msk_migrate.commands.root import cli

PREFIXES = Prefixes.of("msk-migrate-dev-configs", "mm2-dev")


def _commands(cmd: click.Command, path: list[str]):
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, [*path, name])
    else:
        yield path, cmd


def test_every_option_of_every_runbook_command_is_decided_by_the_grammar() -> None:
    undecided = [f"{' '.join(path)} {opt}" for name in RUNBOOK_COMMANDS for path, cmd in _commands(cli.commands[name], [name])
                 for p in cmd.params if isinstance(p, click.Option) for opt in p.opts if opt.startswith("--") and not classified(opt)]
    assert undecided == [], "a new option must be classified as the caller's (with a kind) or the stack's"
    # every spelling of one option is decided alike (an alias is never a way around the table)
    split = [f"{' '.join(path)} {p.opts}" for name in RUNBOOK_COMMANDS for path, cmd in _commands(cli.commands[name], [name])
             for p in cmd.params if isinstance(p, click.Option)
             if len({("stack" if o in STACK_OPTIONS else CALLER_OPTIONS.get(o)) for o in p.opts if o.startswith("--")}) > 1]
    assert split == []
    assert not set(CALLER_OPTIONS) & set(STACK_OPTIONS)


def test_the_laptop_commands_are_not_runbook_commands() -> None:
    assert not {"local", "rehearse", "build-images", "topology"} & set(RUNBOOK_COMMANDS)
    assert set(RUNBOOK_COMMANDS) <= set(cli.commands)


@pytest.mark.parametrize("words", [
    ["lag", "--output", "json", "--topic", "orders", "--max-age", "30"],
    ["cutover", "check", "--group", "billing.v2", "--wave", "wave-1", "--validation-report", "s3://msk-migrate-dev-configs/proof/mm2-dev/"],
    ["connectors", "status", "mm2-dev-source"],
    ["offsets", "sync", "--group", "orders", "--dry-run", "--certificate", "s3://msk-migrate-dev-configs/ledger/mm2-dev/evidence/c.json"],
    ["validate", "--follow", "--once", "--mark=s3://msk-migrate-dev-configs/proof/mm2-dev/proof-mark.json"],
    ["cutover", "abandon-group", "--group", "g1", "--reason", "retired by the team that owned it"],
])
def test_runbook_requests_that_select_and_tune_are_admitted(words) -> None:
    assert check_request(words, PREFIXES, cli).words == tuple(words)


@pytest.mark.parametrize(("words", "field"), [
    (["lag", "--connect-url", "https://evil.example"], "--connect-url"),
    (["lag", "--connect-url=https://evil.example"], "--connect-url"),
    (["acls", "plan", "--out-dir", "/tmp/x"], "--out-dir"),
    (["connectors", "apply", "--dir", "/tmp/x"], "--from-dir"),
    (["validate", "--report-dir", "s3://elsewhere/x/"], "--validation-report"),
    (["offsets", "snapshot", "--out", "/etc/passwd"], "--out"),
    (["connectors", "apply", "--from-s3", "s3://other-bucket/connectors/"], "--from-s3"),
    (["cutover", "check", "--validation-report", "s3://msk-migrate-dev-configs/proof/other-migration/"], "--validation-report"),
    (["cutover", "check", "--validation-report", "s3://msk-migrate-dev-configs/proof/mm2-dev/../../ledger/x/"], "--validation-report"),
    (["cutover", "check", "--validation-report", "s3://msk-migrate-dev-configs/proof/mm2-dev/%2e%2e/x"], "--validation-report"),
    (["cutover", "check", "--validation-report", "/tmp/report.json"], "--validation-report"),
    (["lag", "--topic", "${env:MM2_SOURCE_SASL_PASSWORD}"], "--topic"),
    (["lag", "--topic", "a/b"], "--topic"),
    (["cutover", "abandon-group", "--group", "g", "--reason", "line\nbreak"], "--reason"),
    (["lag", "--max-age", "soon"], "--max-age"),
    (["lag", "--output", "yaml"], "--output"),
    (["lag", "--help"], "--help"),
    (["lag", "-h"], "-h"),
    (["connectors", "delete", "../x"], "NAMES"),
    (["cutover"], "cutover"),
    (["rehearse"], "command"),
])
def test_an_option_that_names_an_endpoint_file_or_foreign_location_is_refused_with_one_line(words, field) -> None:
    with pytest.raises(RequestRefused) as err:
        check_request(words, PREFIXES, cli)
    assert err.value.field == field, str(err.value)
    assert "\n" not in str(err.value).replace("line\nbreak", "") and "(fix: " in str(err.value)


def test_without_the_stacks_prefixes_only_s3_locations_pass_and_the_task_checks_them() -> None:
    check_request(["cutover", "check", "--validation-report", "s3://anything/x/"], None, cli)
    with pytest.raises(RequestRefused, match="local path"):
        check_request(["cutover", "check", "--validation-report", "reports/x/"], None, cli)


def _runbook_lines() -> list[str]:
    """Every ``msk-migrate … --in-vpc`` command line of the runbooks (continuations joined)."""
    from msk_migrate.paths import REPO_ROOT

    found: list[str] = []
    for path in sorted((REPO_ROOT / "docs").rglob("*.md")):
        text = path.read_text().replace("\\\n", " ")
        found += [ln.strip() for ln in text.splitlines() if ln.strip().startswith("msk-migrate ") and "--in-vpc" in ln]
    return found


def test_every_in_vpc_command_the_docs_show_passes_the_operator_grammar() -> None:
    import shlex

    from msk_migrate.aws import operator_task
    from msk_migrate.config.environment import load_environment
    from msk_migrate.paths import REPO_ROOT

    cfg = load_environment(REPO_ROOT / "infra" / "environments" / "dev.yaml")
    lines = _runbook_lines()
    assert len(lines) >= 10, lines
    for line in lines:
        line = (line.split("#", 1)[0].replace("$ENV", "dev").replace("<config-bucket>", cfg.config_bucket_name)
                .replace("<migration>", cfg.migration.name).replace("$(date -u +%Y%m%dT%H%M%SZ)", "20261127T170000Z"))
        words = ["c1" if w.startswith("$") else w.replace("<run>", "run-1") for w in shlex.split(line)[1:]]
        req = operator_task.split_argv(words)
        if req.argv[0] == "preflight":  # its own --in-vpc: the same refusals, checked by preflight itself
            assert not {"--config", "--target-bootstrap", "--connect-url", "--local"} & set(req.argv), line
            continue
        operator_task.prepare(req, lambda w, p: check_request(w, p, cli))  # raises the one-line refusal naming the option
