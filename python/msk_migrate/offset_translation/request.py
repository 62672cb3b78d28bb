"""What one ``offsets sync`` asks (:class:`SyncRequest`) of which clusters (:class:`Clusters`): the types the
one-origin translation (:mod:`.sync`) and the two-origin one (:mod:`.two_origin_sync`) share, apart from both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec
from ..errors import UsageError


class Clusters(Protocol):
    """What :func:`sync_group` needs of a migration session: ``runbook.session.MigrationSession`` has it
    (that class sits above this floor, so it is named here by shape, not imported)."""

    @property
    def migration(self) -> MigrationSpec: ...
    @property
    def source(self) -> AdminSession: ...
    @property
    def target(self) -> AdminSession: ...
    @property
    def source_alias(self) -> str: ...
    @property
    def target_alias(self) -> str: ...


class NotReplicatedYet(UsageError):
    """Replication has not reached a commit point of the group (exit 2, nothing written): wait and re-run."""


Side = Literal["target", "source"]


@dataclass(frozen=True)
class SyncRequest:
    """One ``offsets sync``: the group, the cluster it moves to, and the options; checked when built."""

    group: str
    to: Side = "target"
    exact_only: bool = False
    dry_run: bool = False
    force: bool = False
    certificate: str | None = None  #: a .json path, a directory or s3://bucket/prefix

    def __post_init__(self) -> None:
        if not self.group.strip():
            raise UsageError("--group", "empty group name", "name the stopped consumer group to move")
        if self.to not in ("target", "source"):
            raise UsageError("--to", f"{self.to!r} is not a cluster of the flow", "use --to target or --to source")

    @property
    def direction(self) -> str:
        return "source->target" if self.to == "target" else "target->source"
