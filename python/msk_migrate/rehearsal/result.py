"""What a rehearsal returns: one row per step, and what the steps measured on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Step:
    name: str
    ok: bool
    seconds: float
    result: str

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.name, "ok": self.ok, "seconds": self.seconds, "result": self.result}


class StepFailed(Exception):
    """A step's outcome was not the one the runbook promises; the message is the step's result row."""


@dataclass
class RehearsalResult:
    status: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    topics: list[dict[str, Any]] = field(default_factory=list)
    connectors: list[dict[str, Any]] = field(default_factory=list)
    offsets: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)
    reverse_validation: dict[str, Any] = field(default_factory=dict)
    #: the waves: the forgotten producer's records, and `status` at the end (every topic and group of the ledger)
    waves: dict[str, Any] = field(default_factory=dict)
    #: the schema steps: copy and verify outcomes, the report's schema rows, what the consumers decoded
    schemas: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "status": self.status, "steps": [s.to_dict() for s in self.steps], "topics": self.topics,
                "connectors": self.connectors, "offsets": self.offsets, "validation": self.validation,
                "reverse_validation": self.reverse_validation, "waves": self.waves, "schemas": self.schemas, "seconds": self.seconds}
