"""Topic identity in the runbook: refuse a recreated source topic before trusting MM2's position, record
identities when replication starts, and reset a recreated topic's source offsets (the fix).

API:

- :func:`refuse_recreated` ``(s, topics, positions=None, ends=None)``: ``lag`` and every gate call it with the
  source connector's positions and the source's end offsets; exit 2 naming the topic and the fix
  (:func:`msk_migrate.ledger.identity.refuse_changed` over the flow's ledger).
- :func:`guard_apply` ``(flow, client) -> record``: ``connectors apply`` calls it before applying (refuses a
  recreated topic, nothing applied) and calls ``record()`` after: every selected topic the ledger does not hold
  yet becomes ``replicating`` with its identity.
- :func:`reset_topics` ``(s, topics)``: ``connectors reset-topic``: stop the source connector, delete those
  topics' partitions from its offsets (Connect's offsets API, Kafka >= 3.6 workers: ``PATCH
  /connectors/<name>/offsets`` with null offsets; MM2's consumer then starts at the earliest offset), resume
  it, and record the topics' new identities in the ledger.

The ledger is the flow's (:func:`msk_migrate.ledger.ledger_for`); a session without a flow (the rehearsal,
tests) uses ``MSK_MIGRATE_LEDGER`` when set, and otherwise only the position check applies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..access.admin import AdminSession
from ..access.offsets import end_offsets, partitions
from ..config.waves import assign_waves
from ..connect_api.rest import ConnectClient, ConnectRestError
from ..errors import UsageError
from ..kafka.selection import topic_selection
from ..ledger import LEDGER_ENV, Change, Ledger, ledger_for, open_ledger
from ..ledger.identity import read_identities, refuse_changed, replicating_changes
from ..outcome import quiet
from .session import MigrationSession

TP = tuple[str, int]


def ledger_of(owner: Any) -> Ledger | None:
    """The ledger of a flow, or of a session's flow; ``MSK_MIGRATE_LEDGER`` without one; else None."""
    flow = owner if hasattr(owner, "origin") else getattr(owner, "flow", None)
    if flow is not None:
        return ledger_for(flow)
    where = os.environ.get(LEDGER_ENV)
    return open_ledger(where, owner.migration.name) if where else None


def source_positions(client: ConnectClient, connector: str, source_alias: str) -> dict[TP, int]:
    """(topic, partition) -> the next source offset MM2 copies (empty when the connector does not exist yet)."""
    try:
        entries = client.offsets(connector)
    except ConnectRestError as exc:
        if exc.status == 404:
            return {}
        raise
    out = {}
    for entry in entries:
        part, off = entry.get("partition", {}), entry.get("offset") or {}
        if part.get("cluster") == source_alias and "offset" in off:
            out[(part["topic"], int(part["partition"]))] = int(off["offset"]) + 1
    return out


def refuse_recreated(s: MigrationSession, topics: Iterable[str], positions: Mapping[TP, int] | None = None,
                     ends: Mapping[TP, int] | None = None) -> None:
    """Exit 2 when a topic of ``topics`` is not the one whose replication started (ledger identity, or MM2's
    position past the source's end)."""
    ledger = ledger_of(s)
    view = ledger.read() if ledger is not None else None
    refuse_changed(s.source, list(topics), view, positions, ends, s.migration.connector_names()["source"])


def guard_apply(flow: Any, client: ConnectClient) -> Callable[[], str | None]:
    """Before ``connectors apply``: refuse recreated topics (nothing applied). Returns what records the
    selected topics as ``replicating`` after the apply (returns where it recorded, or None when nothing was new)."""
    migration = flow.migration
    if migration is None:  # configs applied without a flow: no selection to guard, nothing to record
        return lambda: None
    source = AdminSession.for_endpoint("source", flow.source)
    topics = topic_selection(migration).select(source.topics(refresh=True))
    connector = migration.connector_names()["source"]
    ledger = ledger_for(flow)
    view = ledger.read()
    positions = source_positions(client, connector, flow.source.alias)
    ends = end_offsets(source, partitions(source, [t for t in topics if any(tp[0] == t for tp in positions)]))
    refuse_changed(source, topics, view, positions, ends, connector)

    def record() -> str | None:
        fresh = [t for t in topics if (rec := view.get("topic", t)) is None or not rec.identity]
        if not fresh:
            return None
        changes = replicating_changes(view, read_identities(source, fresh), assign_waves(migration, source.topics()))
        ledger.append(view, changes, "connectors apply")
        return ledger.location

    return record


def reset_topics(s: MigrationSession, topics: list[str], timeout: float = 180.0,
                 say: Callable[[str], None] = quiet, ledger: Ledger | None = None) -> list[dict[str, Any]]:
    """Reset ``topics``' source offsets in the forward source connector and record their identities now in
    ``ledger`` (default: :func:`ledger_of` the session). Refuses (exit 2, nothing changed) a topic that is not
    a selected topic on the source."""
    client, migration = s.connect(), s.migration
    present = topic_selection(migration).select(s.source.topics(refresh=True))
    unknown = [t for t in topics if t not in present]
    if unknown:
        raise UsageError("--topic", f"{unknown[0]} is not a migrated topic on the source", "name a topic the flow replicates")
    ledger = ledger or ledger_of(s)
    view = ledger.read() if ledger is not None else None
    if ledger is not None and view is not None:
        ledger.ensure_latest(view)
    name = migration.connector_names()["source"]
    positions = source_positions(client, name, s.source_alias)
    wanted = set(topics)
    stored = [(t, p) for (t, p) in sorted(positions) if t in wanted]
    reset: list[dict[str, Any]] = [{"partition": {"cluster": s.source_alias, "topic": t, "partition": p}, "offset": None}
                                   for t, p in stored]
    say(f"stopping {name}")
    client.stop(name)
    client.wait_state(name, "STOPPED", timeout)
    if reset:
        say(f"deleting {len(reset)} partition offset(s) of {', '.join(topics)} from {name}")
        client.alter_offsets(name, reset)
    say(f"resuming {name}")
    client.resume(name)
    client.wait_state(name, "RUNNING", timeout)
    rows = [{"topic": t, "partitions_reset": sum(1 for tp in stored if tp[0] == t), "connector": name}
            for t in sorted(wanted)]
    if ledger is not None and view is not None:
        identities = read_identities(s.source, sorted(wanted))
        waves = assign_waves(migration, s.source.topics())
        changes = [Change("topic", t, (rec.state if (rec := view.get("topic", t)) else "replicating"),
                          wave=(rec.wave if rec else None) or waves.get(t), identity=ident,
                          detail="source offsets reset after the topic was recreated")
                   for t, ident in sorted(identities.items())]
        ledger.append(view, changes, "connectors reset-topic")
    return rows
