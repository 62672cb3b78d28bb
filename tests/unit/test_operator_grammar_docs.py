"""docs/operator-task.md's grammar table is the grammar: one row per runbook command, the caller's options in the
command's order with their kinds, read off the command line itself, so the page cannot fall behind a new option."""

from __future__ import annotations

from pathlib import Path

import click

from msk_migrate.aws.operator_entry import RUNBOOK_COMMANDS
from msk_migrate.commands.operator_grammar import CALLER_OPTIONS, Kind
from msk_migrate.commands.root import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "operator-task.md"


def _rows(cmd: click.Command, path: list[str]) -> list[str]:
    if isinstance(cmd, click.Group):
        return [row for name in sorted(cmd.commands) for row in _rows(cmd.commands[name], [*path, name])]
    opts, args = [], []
    for p in cmd.params:
        if isinstance(p, click.Argument):
            args.append(f"{p.human_readable_name.upper()} (names)")
            continue
        name = next((o for o in p.opts if o.startswith("--")), None)
        if getattr(p, "hidden", False) or name not in CALLER_OPTIONS:
            continue
        kind = CALLER_OPTIONS[name]
        opts.append(f"`{name}`" + ("" if kind is Kind.FLAG else f" ({kind.value})"))
    return [f"| `{' '.join(path)}` | {', '.join(opts)} | {', '.join(args)} |"]


def test_the_documented_grammar_table_is_the_grammar_of_every_runbook_command() -> None:
    expected = [row for c in RUNBOOK_COMMANDS for row in _rows(cli.commands[c], [c])]
    text = DOC.read_text()
    head = "| command | the caller's options (kind) | arguments |\n|---|---|---|\n"
    assert head in text
    documented = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()
    missing = [r for r in expected if r not in documented]
    stale = [r for r in documented if r not in expected]
    assert not missing and not stale, (f"docs/operator-task.md's table differs from the command line: add {missing[:3]}, "
                                       f"drop {stale[:3]}")
