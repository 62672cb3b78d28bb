"""Errors that the CLI turns into one line on stderr and exit code 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input: names the field and the fix. Exit code 2, nothing applied."""

    exit_code = 2

    def __init__(self, field: str, message: str, fix: str | None = None):
        self.field = field
        self.message = message
        self.fix = fix
        text = f"{field}: {message}" if field else message
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class UnreachableError(Exception):
    """A cluster, Connect worker or AWS endpoint could not be reached; carries the server's message. Exit 2."""

    exit_code = 2
