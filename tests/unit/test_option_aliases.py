"""One spelling per concept (docs/design.md, "Vocabulary"): every old spelling kept as a hidden alias is accepted,
gives the same value as the canonical spelling, stays out of ``--help``, and beside the canonical spelling is
refused: one line naming both, exit 2, before anything is read or reached.

The aliases are found by walking the click tree, so a new one cannot escape: give it a sample value below.
"""

from __future__ import annotations

import re

import click
import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.clivalues import Aliased
from msk_migrate.commands.options import in_seconds
from msk_migrate.commands.root import cli
from msk_migrate.errors import UsageError
from tests.cli_tree import named_leaves


def _samples(tmp: str) -> dict[str, str]:
    """A valid value for each canonical spelling that has hidden aliases."""
    return {"--from-dir": tmp, "--out-dir": f"{tmp}/out", "--validation-report": f"{tmp}/report",
            "--topic": "orders,payments", "--local-dir": f"{tmp}/env", "--copy-marks": "src,tgt", "--task-container": "ops", "--aws-region": "eu-west-1",
            "--task-timeout": "120",
            "--source-bootstrap": "src:9092", "--target-bootstrap": "b-1.msk:9098"}




ALIASED = [(path, cmd, param) for path, cmd in named_leaves(cli) for param in cmd.params
           if isinstance(param, Aliased) and param.hidden_aliases]
CASES = [pytest.param(path, cmd, param, alias, id=f"{path} {alias}")
         for path, cmd, param in ALIASED for alias in param.hidden_aliases]


def _canonical(param: click.Option) -> str:
    return next(o for o in param.opts if o not in param.hidden_aliases)


def test_the_tree_has_the_vocabulary_aliases() -> None:
    spelled = {(path, alias) for path, _, param in ALIASED for alias in param.hidden_aliases}
    assert {("validate", "--topics"), ("validate", "--source-bootstrap-servers"),
            ("validate", "--target-bootstrap-servers"), ("validate", "--report-dir"), ("validate", "--marks"),
            ("preflight", "--region"), ("preflight", "--timeout"), ("preflight", "--container"),
            ("connectors render", "--dir"), ("connectors render", "--out"),
            ("local up", "--dir"), ("local status", "--dir"), ("local down", "--dir")} <= spelled


@pytest.mark.parametrize(("path", "cmd", "param", "alias"), CASES)
def test_hidden_alias_gives_the_canonical_value_and_stays_out_of_help(path, cmd, param, alias, tmp_path) -> None:
    canonical = _canonical(param)
    value = _samples(str(tmp_path)).get(canonical)
    assert value is not None, f"give {canonical} a sample value in _samples"
    parsed = [cmd.make_context(path, [spelling, value], resilient_parsing=True).params[param.name]
              for spelling in (canonical, alias)]
    assert parsed[0] == parsed[1] and parsed[0] not in (None, ())
    help_text = cmd.get_help(click.Context(cmd, info_name=path))
    assert canonical in help_text and not re.search(rf"{re.escape(alias)}(?![\w-])", help_text)


@pytest.mark.parametrize(("path", "cmd", "param", "alias"), CASES)
def test_old_and_new_spelling_together_are_refused_in_one_line_naming_both(path, cmd, param, alias, tmp_path, capfd) -> None:
    canonical = _canonical(param)
    value = _samples(str(tmp_path))[canonical]
    code = run_cli(cli, [*path.split(), canonical, value, alias, value], "msk-migrate")
    err = capfd.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert canonical in err and alias in err and "two spellings" in err


def test_a_refused_value_is_named_by_the_spelling_typed(capfd) -> None:
    for spelling in ("--topic", "--topics"):
        assert run_cli(cli, ["validate", spelling, "bad topic name"], "msk-migrate") == 2
        err = capfd.readouterr().err
        assert err.startswith(f"error: {spelling}:"), err


def test_max_report_age_is_seconds_and_its_old_spelling_minutes() -> None:
    new, old = "--max-report-age-seconds", "--max-report-age"
    assert in_seconds((new, None), (old, None, 60), default=3600.0) == 3600.0
    assert in_seconds((new, 90.0), (old, None, 60), default=3600.0) == 90.0
    assert in_seconds((new, None), (old, 2.0, 60), default=3600.0) == 120.0
    with pytest.raises(UsageError) as exc:
        in_seconds((new, 90.0), (old, 2.0, 60), default=3600.0)
    assert exc.value.field == f"{new} and {old}"


def test_max_report_age_both_spellings_refused_and_old_one_hidden(capfd) -> None:
    code = run_cli(cli, ["cutover", "check", "--max-report-age", "1", "--max-report-age-seconds", "60"], "msk-migrate")
    err = capfd.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--max-report-age-seconds and --max-report-age" in err
    cmd = cli.commands["cutover"].commands["check"]  # type: ignore[attr-defined]
    help_text = cmd.get_help(click.Context(cmd, info_name="check"))
    assert "--max-report-age-seconds" in help_text and not re.search(r"--max-report-age(?![\w-])", help_text)
