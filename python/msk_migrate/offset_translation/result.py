"""What one ``offsets sync`` did (:class:`SyncResult`), whichever translation placed the group.

One result type for both translations: the one-origin one (:mod:`.sync`, a :class:`~.planner.PartitionPlan` per
partition) and the two-origin one (:mod:`.two_origin_sync`, a :class:`~.two_origin_sync.TwoOriginPlacement` per
partition). Both say what was done to a partition's commit in one vocabulary, :class:`~.planner.Action`.

Invariants:

- ``exact`` holds only when there is at least one partition and every one is placed exactly: a group with
  nothing to place is never an exact move.
- ``exit_code`` is 0 exactly when ``exact``; 1 otherwise (2, bad input, is raised before a result exists).
- ``verdict`` is the certificate's (``exact | partial | not-proven``): the result and its proof never disagree.

The command builds its console and JSON outcome from this value (``msk_migrate.commands.sync_outcome``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from .planner import Action
from .request import SyncRequest

Translation = Literal["one-origin", "two-origin"]

#: What exit 1 means, per translation (the JSON document's ``exit``).
EXIT_MEANING: dict[Translation, str] = {
    "one-origin": "0 every partition exact; 1 some on MM2's checkpoint or left as they were",
    "two-origin": "0 every partition exact; 1 some re-deliver (declared) or were left as they were",
}


class PlacedPartition(Protocol):
    """One partition of a sync, as either translation reports it."""

    @property
    def exact(self) -> bool: ...
    @property
    def action(self) -> Action: ...
    def row(self) -> dict[str, Any]: ...


P = TypeVar("P", bound=PlacedPartition)


@dataclass(frozen=True)
class SyncResult(Generic[P]):
    """One group's move: the partitions as placed, how many commits were written, the certificate and where it went."""

    request: SyncRequest
    translation: Translation
    partitions: tuple[P, ...]
    written: int
    certificate: dict[str, Any] = field(default_factory=dict)
    locations: tuple[str, ...] = ()

    @property
    def direction(self) -> str:
        """source->target | target->source."""
        return self.request.direction

    @property
    def exact(self) -> bool:
        return bool(self.partitions) and all(p.exact for p in self.partitions)

    @property
    def verdict(self) -> str:
        """exact | partial | not-proven (the certificate's verdict)."""
        return str(self.certificate["verdict"])

    @property
    def exit_code(self) -> int:
        return 0 if self.exact else 1

    @property
    def to_write(self) -> int:
        """Partitions whose commit the move writes (or, in a dry run, would write)."""
        return sum(p.action.writes for p in self.partitions)

    def rows(self) -> list[dict[str, Any]]:
        return [p.row() for p in self.partitions]
