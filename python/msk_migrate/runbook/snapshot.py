"""``offsets snapshot``: the source's last stable offsets of the migrated topics, written as
``{topic: {partition: end offset}}`` (the input of ``validate --offsets-snapshot``). Taken after the
producers stopped, it fixes where validation's window ends."""

from __future__ import annotations

import json
from pathlib import Path

from ..access.offsets import last_stable_offsets, partitions
from ..errors import UsageError
from ..kafka.selection import topic_selection
from ..outcome import Outcome, View
from .session import MigrationSession


def snapshot(s: MigrationSession, out: Path, topics: list[str] | None = None) -> Outcome:
    """Write the snapshot of ``topics`` (default: every migrated topic of the source) to ``out``; exit 0
    with one row per partition, 1 when there was no partition to snapshot (a snapshot of nothing)."""
    chosen = topic_selection(s.migration).select(s.source.topics())
    if topics:
        unknown = [t for t in topics if t not in chosen]
        if unknown:
            raise UsageError("--topic", f"{unknown[0]} is not a migrated topic of the source", "name a topic the flow replicates")
        chosen = list(topics)
    ends = last_stable_offsets(s.source, partitions(s.source, chosen))
    snap: dict[str, dict[str, int]] = {}
    for (t, p), o in sorted(ends.items()):
        snap.setdefault(t, {})[str(p)] = o
    try:
        out.write_text(json.dumps(snap, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise UsageError("--out", f"cannot write {out}: {exc.strerror}", "give a writable path") from None
    rows = [{"topic": t, "partition": p, "end_offset": o} for (t, p), o in sorted(ends.items())]
    return Outcome("offsets snapshot", "written" if rows else "nothing-to-snapshot", 0 if rows else 1, rows,
                   {**s.talked_to(), "file": str(out)}, extra={"out": str(out)},
                   views=[View("", [])], notes=[f"{len(ends)} partition(s) of {len(snap)} topic(s) written to {out}"])
