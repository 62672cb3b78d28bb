"""The ledger's data: states, one change, one event, the records of the current view.

A **record** is one topic or one consumer group of the migration: its latest state, when and by whom it was
set, by which command, the evidence's location (an offset certificate, a producer certificate, a validation
report), its wave and, for a topic, its identity when replication started (:mod:`.identity`). Its history is
the list of its earlier states (each with when, by whom, the evidence and the ledger version).

States (:data:`TOPIC_STATES`, :data:`GROUP_STATES`) and what sets them:

============== ======= =====================================================================================
state          kind    set by / means
============== ======= =====================================================================================
replicating    topic   ``connectors apply``: the forward flow copies it (identity recorded)
consumers-moved both   group: ``offsets sync`` placed it on the target (evidence: the offset certificate);
                       topic: every group of it moved
fencing        topic   ``cutover fence``: the config fence is being put on (its previous setting recorded first)
fenced         topic   ``cutover fence``: writes to it on the source are denied
unfenced       topic   ``cutover unfence|abort``: the fence was removed
producers-moved topic  ``cutover confirm``: the producers write to the target (evidence: producer certificate)
rolled-back    both    ``rollback apply`` / a group moved back to the source
cleaned-up     both    ``cleanup``: MM2 no longer copies it, its leftovers are gone
abandoned      group   the operator declared the group will not move (recorded with who declared it)
============== ======= =====================================================================================
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Kind = Literal["topic", "group"]
KINDS: tuple[str, ...] = ("topic", "group")

TOPIC_STATES: tuple[str, ...] = ("replicating", "consumers-moved", "fencing", "fenced", "unfenced", "producers-moved", "rolled-back",
                                 "cleaned-up")
GROUP_STATES: tuple[str, ...] = ("consumers-moved", "rolled-back", "cleaned-up", "abandoned")
STATES: dict[str, tuple[str, ...]] = {"topic": TOPIC_STATES, "group": GROUP_STATES}
#: A topic in one of these states needs MirrorMaker 2 no more: its producers write to the target.
TOPIC_MOVED: tuple[str, ...] = ("producers-moved", "cleaned-up")
#: A group in one of these states is not moved to the target again and needs MirrorMaker 2's checkpoints no more.
GROUP_MOVED: tuple[str, ...] = ("consumers-moved", "abandoned", "cleaned-up")

#: Format tags written in every file, so a file of another format is refused rather than misread.
VIEW_FORMAT = "msk-migrate-ledger/1"
EVENT_FORMAT = "msk-migrate-ledger-event/1"


def record_key(kind: str, name: str) -> str:
    """The key of a record in the current view: ``topic/<name>`` or ``group/<name>``."""
    return f"{kind}/{name}"


@dataclass(frozen=True)
class Change:
    """One record's new state, as a command declares it. ``identity`` only for topics (:mod:`.identity`);
    ``detail`` a short sentence (why, or what the operator declared)."""

    kind: str
    name: str
    state: str
    evidence: str | None = None
    wave: str | None = None
    detail: str | None = None
    identity: dict[str, Any] | None = None
    #: the config fence: the topic's setting before it (``{}``: none held any more); carried to later states
    previous_config: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"ledger change kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.state not in STATES[self.kind]:
            raise ValueError(f"ledger state {self.state!r} is not a {self.kind} state ({', '.join(STATES[self.kind])})")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Record:
    """One topic's or group's place in the migration (see the module docstring)."""

    kind: str
    name: str
    state: str
    at: str  #: UTC ISO-8601 time the state was recorded
    by: str  #: the AWS identity (ARN) or OS user@host that recorded it
    command: str
    version: int  #: the ledger version that set it
    evidence: str | None = None
    wave: str | None = None
    detail: str | None = None
    identity: dict[str, Any] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  #: earlier states, oldest first
    started_by: str | None = None  #: the person who started the command, when ``by`` is not them (the operator task)
    previous_config: dict[str, Any] | None = None  #: the config fence's recorded previous setting (see :class:`Change`)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["started_by"] is None:  # the view of a ledger written without it keeps its shape
            del out["started_by"]
        if out["previous_config"] is None:
            del out["previous_config"]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        return cls(kind=str(d["kind"]), name=str(d["name"]), state=str(d["state"]), at=str(d["at"]), by=str(d["by"]),
                   command=str(d["command"]), version=int(d["version"]), evidence=d.get("evidence"), wave=d.get("wave"),
                   detail=d.get("detail"), identity=d.get("identity"), history=list(d.get("history") or []),
                   started_by=d.get("started_by"), previous_config=d.get("previous_config"))


@dataclass
class LedgerView:
    """The ledger as one command read it: its version (0 = empty) and every record by :func:`record_key`.

    A writer passes the view it read to :meth:`~msk_migrate.ledger.book.Ledger.append`; the write is refused
    when the ledger has moved past ``version`` since."""

    location: str
    version: int = 0
    records: dict[str, Record] = field(default_factory=dict)
    updated_at: str | None = None
    migration: str | None = None

    def get(self, kind: str, name: str) -> Record | None:
        return self.records.get(record_key(kind, name))

    def of_kind(self, kind: str) -> list[Record]:
        return sorted((r for r in self.records.values() if r.kind == kind), key=lambda r: r.name)

    def state_of(self, kind: str, name: str) -> str | None:
        rec = self.get(kind, name)
        return rec.state if rec else None

    def apply(self, event: dict[str, Any]) -> None:
        """Fold one event into the view (the event's version must be the next one)."""
        version = int(event["version"])
        for c in event["changes"]:
            key = record_key(c["kind"], c["name"])
            old = self.records.get(key)
            history = list(old.history) if old else []
            if old:
                history.append({"state": old.state, "at": old.at, "by": old.by, "command": old.command,
                                "evidence": old.evidence, "version": old.version,
                                **({"started_by": old.started_by} if old.started_by else {})})
            self.records[key] = Record(
                kind=c["kind"], name=c["name"], state=c["state"], at=event["at"], by=event["by"], command=event["command"],
                version=version, evidence=c.get("evidence"), wave=c.get("wave", old.wave if old else None),
                detail=c.get("detail"), identity=c.get("identity", old.identity if old else None), history=history,
                started_by=event.get("started_by"),
                previous_config=c.get("previous_config", old.previous_config if old else None))
        self.version, self.updated_at = version, event["at"]

    def to_dict(self) -> dict[str, Any]:
        return {"format": VIEW_FORMAT, "migration": self.migration, "version": self.version, "updated_at": self.updated_at,
                "records": {k: r.to_dict() for k, r in sorted(self.records.items())}}

    def records_digest(self) -> str:
        """SHA-256 of the records (canonical JSON): what the event of this version says its view must be."""
        import hashlib
        import json

        body = json.dumps({k: r.to_dict() for k, r in sorted(self.records.items())}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()
