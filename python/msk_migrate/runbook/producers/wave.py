"""One wave as the producer operations act on it (:class:`Wave`): its name, its topics on the source, and the
words every outcome, evidence file and hint uses for it.

A wave of ``None`` is the whole migration (a flow without ``migration.waves``, or ``--wave`` not given): its
label is ``migration`` in evidence names and outcome titles, and its resume hint names no ``--wave``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wave:
    """A wave's name (None: the whole migration) and its topics on the source, as selected when the command
    started (the flow's selection and ``migration.waves``, matched against the source's topics)."""

    name: str | None
    topics: tuple[str, ...]

    @classmethod
    def of(cls, name: str | None, topics: list[str] | tuple[str, ...]) -> Wave:
        return cls(name, tuple(topics))

    @property
    def label(self) -> str:
        """The wave in evidence names and titles: its name, or ``migration``."""
        return self.name or "migration"

    @property
    def resume(self) -> str:
        """The command that resumes the wave's producer move after a stop."""
        return "msk-migrate cutover run" + (f" --wave {self.name}" if self.name else "") + " (same flow options)"

    @property
    def option(self) -> str:
        """``--wave NAME`` as a command line repeats it (empty for the whole migration)."""
        return f" --wave {self.name}" if self.name else ""
