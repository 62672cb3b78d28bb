"""The CLI's commands as the tests walk them: every leaf of the click tree, by its path of words."""

from __future__ import annotations

from collections.abc import Iterator

import click


def leaves(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """(path of words, command) of every command below ``group`` that is not a group, in name order."""
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from leaves(cmd, (*path, name))
        else:
            yield (*path, name), cmd


def named_leaves(group: click.Group) -> Iterator[tuple[str, click.Command]]:
    """:func:`leaves` with each path joined by spaces (``offsets sync``)."""
    for path, cmd in leaves(group):
        yield " ".join(path), cmd
