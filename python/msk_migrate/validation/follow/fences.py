"""Where the follower's proof of a topic ends: at the fence its producers moved behind (the ledger).

Once a wave's producers move (``cutover fence``, then the producers write on the target), the target holds
records of its own: they are the producers', not copies, and the proof of the topic is the fenced snapshot
(the producer gate validates it; its certificate is the evidence). The follower proves each partition up to
its fenced end offset and then stops following it (``cut-over``, :mod:`.mark`). The fenced end offsets are
the fence's evidence document the ledger names (``fenced_end_offsets``: ``"topic[p]" -> offset``, source
side), found on the topic's record or in its history once it moved on (producers-moved, rolled-back, ...).

:func:`fenced_ends` reads the ledger each time it is called (the follower calls it before every pass); a
flow without a ledger, or a ledger without a fence, gives ``{}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import UsageError

TP = tuple[str, int]
_KEY = re.compile(r"(?P<topic>.+)\[(?P<partition>\d+)\]")


def fenced_ends(ledger_location: str | None, migration: str) -> dict[TP, int]:
    """``(topic, partition) -> fenced end offset`` of every fenced topic of the migration's ledger."""
    if not ledger_location:
        return {}
    from ...ledger import open_ledger

    view = open_ledger(ledger_location, migration).read()
    out: dict[TP, int] = {}
    for rec in view.records.values():
        if rec.kind != "topic":
            continue
        # the latest of its fences and unfences decides: an unfenced topic (the fence taken off, its producers
        # still on the source) is followed again
        states = [*({"state": h.get("state"), "evidence": h.get("evidence")} for h in rec.history),
                  {"state": rec.state, "evidence": rec.evidence}]
        last = next((h for h in reversed(states) if h["state"] in ("fenced", "unfenced")), None)
        evidence = last["evidence"] if last and last["state"] == "fenced" else None
        if evidence:
            out.update(_ends_of(evidence, rec.name))
    return out


def _ends_of(location: str, topic: str) -> dict[TP, int]:
    from ...store import document

    place = document(location, "ledger evidence", "fence.json")
    try:
        doc: Any = json.loads(place.read_bytes(f"restore the fence's evidence {location} from the store's earlier versions"))
    except ValueError:
        raise UsageError("ledger evidence", f"{location} does not parse as the fence's evidence",
                         "restore it from the store's earlier versions") from None
    out: dict[TP, int] = {}
    for key, end in (doc.get("fenced_end_offsets") or {}).items():
        m = _KEY.fullmatch(str(key))
        if m and m["topic"] == topic and isinstance(end, int):
            out[(topic, int(m["partition"]))] = end
    return out
