"""What a diff of one partition found: counts per category and samples. Plain data, shared by the diff
(:mod:`.diff`), its explanation (:mod:`.explain`) and the verdicts (:mod:`.verdicts`) without importing Spark."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The kinds of difference, in the order the report lists them.
CATEGORIES = ("missing", "unexpected", "duplicates", "changed", "reordered")


@dataclass
class DiffResult:
    missing: int = 0
    unexpected: int = 0
    duplicates: int = 0
    changed: int = 0
    reordered: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {c: [] for c in CATEGORIES})
