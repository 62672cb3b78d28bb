"""``cleanup``: what MM2 and Connect leave on the target after cutover, listed; deleted only with --yes.

Never deleted: replicated topics and the applications' consumer groups (with MM2's translated offsets).
The Connect worker's own topics and group are listed only with ``--include-worker-topics`` (delete them
after the Connect service is gone: a running worker dies without them). ``--yes`` needs the worker
(``--connect-url``/``--local``) and is refused while any connector of the migration, forward or reverse,
still exists there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec
from ..connect_api.rest import ConnectClient
from ..errors import UsageError
from ..kafka import names
from ..outcome import Outcome, View, col
from .cleanup_role import cleanup_role_arn, deleting_session
from .heartbeats import heartbeat_sources
from .session import MigrationSession


@dataclass
class Leftover:
    kind: str  # topic | group
    name: str
    why: str

    def to_dict(self) -> dict:
        return asdict(self)


def migration_connectors(migration: MigrationSpec) -> list[str]:
    """Every connector name of the migration: forward (source, checkpoint, heartbeat) and reverse."""
    from ..connectors.render import reverse_spec

    reverse = reverse_spec(migration, []).connector_names()
    return [*migration.connector_names().values(), reverse["source"], reverse["checkpoint"]]


def require_no_connectors(client: ConnectClient, migration: MigrationSpec) -> None:
    """Refuse (exit 2, nothing deleted) while any connector of the migration, forward or reverse, exists."""
    live = set(client.connectors())
    mine = [n for n in migration_connectors(migration) if n in live]
    if mine:
        raise UsageError("cleanup", f"connector {', '.join(mine)} still exists on {client.url}",
                         f"delete the migration's connectors first (msk-migrate connectors delete {' '.join(mine)} ...)")


def shared_topics(client: ConnectClient | None, migration: MigrationSpec) -> dict[str, str]:
    """MM2 topics that another migration's live connectors on the worker also use (``heartbeats``, or the
    same aliases): topic -> the connector that uses it. Never deleted while it is there."""
    if client is None:
        return {}
    mine = set(migration_connectors(migration))
    out: dict[str, str] = {}
    for name in client.connectors():
        if name in mine:
            continue
        cfg = client.config(name) or {}
        if not str(cfg.get("connector.class", "")).startswith(names.MIRROR_PACKAGE):
            continue
        src, tgt = cfg.get("source.cluster.alias"), cfg.get("target.cluster.alias")
        if src and tgt:
            for t in names.flow_internal_topics(src, tgt, names.connector_namespace(cfg)):
                out.setdefault(t, name)
    return out


def leftovers(s: MigrationSession, include_worker: bool, shared: dict[str, str] | None = None) -> list[Leftover]:
    """What the migration left on the target. A topic another live migration uses too (``shared``) is
    listed as ``kept``, never deleted."""
    target, migration, worker, source_alias, target_alias = s.target, s.migration, s.worker, s.source_alias, s.target_alias
    topics = set(target.topics(refresh=True))
    shared = shared or {}
    internal = [t for t in names.flow_internal_topics(source_alias, target_alias, migration.internal_namespace) if t in topics]
    # One `heartbeats` topic per target for every flow into it: another migration (its own worker, which this
    # session cannot see) may still be writing there; its records' keys say so.
    hb = names.HEARTBEATS_TOPIC in internal and names.HEARTBEATS_TOPIC not in shared
    others = sorted(heartbeat_sources(target) - {source_alias}) if hb else []
    kept = {t: f"shared: connector {c} of another migration uses it" for t, c in shared.items()}
    if others:
        kept[names.HEARTBEATS_TOPIC] = f"shared: the flow(s) from {', '.join(others)} of another migration write heartbeats there"
    out = [Leftover("kept", t, kept[t]) if t in kept else Leftover("topic", t, "MM2 bookkeeping of the forward flow")
           for t in internal]
    groups = set(target.groups())
    for c in migration_connectors(migration):
        g = f"{names.CONNECT_CONSUMER_GROUP_PREFIX}{c}"
        if g in groups:
            out.append(Leftover("group", g, f"consumer group of connector {c}"))
    if include_worker:
        for t in (worker.config_storage_topic, worker.offset_storage_topic, worker.status_storage_topic):
            if t in topics:
                out.append(Leftover("topic", t, "Connect worker topic"))
        if worker.group_id in groups:
            out.append(Leftover("group", worker.group_id, "Connect worker group"))
    return out


def delete(target: AdminSession, items: list[Leftover]) -> None:
    target.delete_groups([i.name for i in items if i.kind == "group"])
    target.delete_topics([i.name for i in items if i.kind == "topic"])


def require_worker_to_delete(yes: bool, connect_url: str | None) -> None:
    """``--yes`` without a worker is refused before any connection: deleting is safe only once the worker
    shows none of the migration's connectors exists."""
    if yes and not connect_url:
        raise UsageError("--connect-url", "cleanup --yes deletes only after the worker shows none of the "
                         "migration's connectors (forward or reverse) exists, and no worker was given",
                         "pass --connect-url https://HOST:8083 (or --local); without --yes cleanup only lists")


def cleanup(s: MigrationSession, include_worker: bool, yes: bool) -> Outcome:
    """``msk-migrate cleanup``: the leftovers listed (exit 0), deleted with ``yes``. With a worker, refused
    (exit 2, nothing deleted) while any of the migration's connectors exists there."""
    if yes:
        cleanup_role_arn()  # a malformed role is refused before anything is listed or deleted
    if s.client is not None:
        require_no_connectors(s.client, s.migration)
    elif yes:
        s.connect()  # --yes never deletes unseen (open the session with the worker)
    items = leftovers(s, include_worker, shared_topics(s.client, s.migration))
    notes = []
    if yes:
        deleter = deleting_session(s)
        delete(deleter, items)
        if deleter is not s.target:
            notes.append(f"deleted as the cleanup role {cleanup_role_arn()} (assumed for this deletion only)")
    n = sum(i.kind != "kept" for i in items)
    return Outcome("cleanup", "deleted" if yes else "listed", 0, list(items), s.talked_to(),
                   extra={"deleted": yes, "items": [i.to_dict() for i in items]},
                   views=[View(f"left on the target {s.target.bootstrap}", [col("kind", "kind"), col("name", "name"), col("why", "why")])],
                   notes=[f"deleted {n} item(s)" if yes else f"{n} item(s); nothing deleted (pass --yes to delete)", *notes])
