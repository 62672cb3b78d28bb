"""Every command the docs tell a user to type exists: `msk-migrate ...` and `./build_images.py ...` are
parsed against the real click commands (subcommands and options), `make X` against the Makefile."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from msk_migrate.commands.root import cli

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
PROGRAMS = ("msk-migrate", "./build_images.py", "make")


def _logical_lines(text: str) -> list[str]:
    """Lines of fenced code blocks (backslash continuations joined) and `inline code` spans."""
    out: list[str] = []
    in_block, pending = False, ""
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_block, pending = not in_block, ""
            continue
        if in_block:
            stripped = line.strip()
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            out.append(pending + stripped)
            pending = ""
        else:
            out.extend(re.findall(r"`([^`]+)`", line))
    return out


def doc_commands() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for line in _logical_lines(doc.read_text()):
            line = re.sub(r"^\$\s+", "", line.strip()).replace("\\|", "|")
            for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
                words = part.split()
                while words and (re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]) or words[0] in (".venv/bin/msk-migrate",)):
                    words = words[1:] if words[0] != ".venv/bin/msk-migrate" else ["msk-migrate", *words[1:]]
                if words and words[0] in PROGRAMS:
                    found.append((f"{doc.relative_to(REPO)}", " ".join(words)))
    return found


def _make_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z0-9_.-]+):", (REPO / "Makefile").read_text(), re.M))


def _check_click(command: click.Command, args: list[str], where: str) -> None:
    """Walk subcommands, then check every --option against the command reached."""
    path = []
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        sub = command.commands.get(args[0])
        if sub is None:
            if re.fullmatch(r"[A-Z<\[{].*|\.\.\.|…", args[0]):
                return
            raise AssertionError(f"{where}: `{' '.join([*path, args[0]])}` is not a subcommand "
                                 f"(known: {', '.join(sorted(command.commands))})")
        path.append(args[0])
        command, args = sub, args[1:]
    if isinstance(command, click.Group) and not args:
        return
    from msk_migrate.aws.operator_task import IN_VPC_OPTIONS

    # --in-vpc and its options are taken off every operator command's line before click parses it.
    known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"} | set(IN_VPC_OPTIONS)
    for a in args:
        if a.startswith("--") or re.fullmatch(r"-[a-zA-Z]", a):
            name = a.split("=", 1)[0]
            assert name in known, f"{where}: `{name}` is not an option of `{' '.join(path) or command.name}`"


@pytest.mark.parametrize("where,command", doc_commands(), ids=lambda v: v if isinstance(v, str) else None)
def test_documented_command_exists_in_the_real_cli(where: str, command: str) -> None:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    words = [w.strip("[]") for w in words if w not in ("\\", "|")]
    words = [w for w in words if w]
    program, args = words[0], words[1:]
    if program == "make":
        targets = [a for a in args if not a.startswith("-") and "=" not in a]
        for t in targets:
            assert t in _make_targets(), f"{where}: `make {t}` is not a Makefile target"
        return
    if program == "./build_images.py":
        from msk_migrate.commands.build_images import build_images_cmd

        _check_click(build_images_cmd, args, where)
        if args and not args[0].startswith("-") and "--help" not in args:
            # the default environment is dev: a documented push must say which environment it is for
            assert any(a.split("=")[0] in ("--env", "--env-file", "--no-push") for a in args), (
                f"{where}: `{command}` pushes to the dev repositories whatever the environment; add --env ENV")
        return
    _check_click(cli, args, where)
    if args[:1] == ["build-images"]:
        test_documented_command_exists_in_the_real_cli(where, " ".join(["./build_images.py", *args[1:]]))


def test_the_docs_name_commands_at_all() -> None:
    programs = {c.split()[0] for _, c in doc_commands()}
    assert programs == set(PROGRAMS), programs
    assert len(doc_commands()) > 30


def test_the_docs_run_cdktf_through_npx() -> None:
    """No `cdktf` binary is installed globally: the docs say `npx cdktf ...` (setup pins cdktf-cli)."""
    bare = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if re.search(r"(?<!npx )(?<![\w/-])cdktf (deploy|destroy|synth|diff)\b", line):
                bare.append(f"{doc.relative_to(REPO)}:{n}")
    assert not bare, f"bare `cdktf` commands: {bare}"


def test_continued_shell_lines_in_the_docs_end_with_a_backslash() -> None:
    """An indented `--option` line in a code block continues the command above it: that line needs `\\`."""
    broken = []
    for doc in DOCS:
        previous, in_block = "", False
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if line.strip().startswith("```"):
                in_block, previous = not in_block, ""
                continue
            if in_block and re.match(r"\s+--\w", line) and previous.strip() and not previous.rstrip().endswith("\\"):
                broken.append(f"{doc.relative_to(REPO)}:{n}")
            previous = line if in_block else ""
    assert not broken, f"continuation lines whose previous line lacks a trailing backslash: {broken}"


def test_stack_outputs_the_docs_and_cli_name_exist() -> None:
    """`output -raw NAME` and "stack output NAME" in the docs and the CLI help are real stack outputs."""
    infra = "\n".join(p.read_text() for p in (REPO / "infra").rglob("*.py"))
    texts = [d.read_text() for d in DOCS] + [p.read_text() for p in (REPO / "python" / "msk_migrate").rglob("*.py")]
    named = set()
    for text in texts:
        named |= set(re.findall(r"output -raw ([a-z_]+)", text))
        named |= set(re.findall(r"stack output `?([a-z][a-z0-9_]+)", text))
    assert named, "no stack output is named anywhere"
    missing = sorted(n for n in named if f'"{n}"' not in infra)
    assert not missing, f"not outputs of the stacks: {missing}"
