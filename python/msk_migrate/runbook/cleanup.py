"""``cleanup``: what MM2 and Connect leave on the target after cutover, listed; deleted only with --yes.

Never deleted: replicated topics and the applications' consumer groups (with MM2's translated offsets).
The Connect worker's own topics and group are listed only with ``--include-worker-topics`` (delete them
after the Connect service is gone: a running worker dies without them). ``--yes`` needs the worker
(``--connect-url``/``--local``) and is refused while any connector of the migration, forward or reverse,
still exists there. Once deleted, the ledger records the migration's moved topics and groups ``cleaned-up``.

``--wave W`` (:class:`WaveProgress`): the wave is cleaned up only once the ledger shows it moved (every topic's
producers, every group that moves with it); the flow's bookkeeping is every wave's, so while another wave has
not moved it is listed as kept and ``--yes`` is refused; what is recorded ``cleaned-up`` is the wave's own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec
from ..connect_api.rest import ConnectClient
from ..errors import UsageError
from ..kafka import names
from ..ledger import Change, Ledger
from ..ledger.records import GROUP_MOVED, TOPIC_MOVED, LedgerView
from ..outcome import Outcome, View, col
from .cleanup_role import cleanup_role_arn, deleting_session
from .heartbeats import heartbeat_sources
from .session import MigrationSession
from .waves import WavePlan


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


@dataclass
class WaveProgress:
    """Where the waves stand in the ledger, for ``cleanup --wave``: the wave's topics and groups (as the source
    shows them), those of them not moved yet, and the other waves that still have something to move."""

    wave: str | None  #: None: the whole migration
    topics: list[str]
    groups: list[str]
    unmoved: list[str] = field(default_factory=list)  #: ``topic t (state)`` / ``group g (state)`` of this wave
    waiting: list[str] = field(default_factory=list)  #: other waves with something not moved

    @property
    def moved(self) -> bool:
        return not self.unmoved


def _unmoved(view: LedgerView, topics: list[str], groups: list[str]) -> list[str]:
    return ([f"topic {t} ({view.state_of('topic', t) or 'unrecorded'})" for t in topics
             if view.state_of("topic", t) not in TOPIC_MOVED]
            + [f"group {g} ({view.state_of('group', g) or 'on the source'})" for g in groups
               if view.state_of("group", g) not in GROUP_MOVED])


def wave_progress(view: LedgerView, plan: WavePlan, wave: str) -> WaveProgress:
    """Wave ``wave``'s place in the ledger (see :class:`WaveProgress`)."""
    topics, groups = plan.topics_of(wave), plan.groups_of(wave)
    waiting = [w for w in plan.order if w != wave and _unmoved(view, plan.topics_of(w), plan.groups_of(w))]
    loose = [t for t, w in plan.topic_wave.items() if w is None]
    if loose and _unmoved(view, loose, [g for g, gw in plan.groups.items() if gw.wave is None]):
        waiting.append("(topics in no wave)")
    return WaveProgress(wave, topics, groups, _unmoved(view, topics, groups), waiting)


def migration_progress(view: LedgerView) -> WaveProgress:
    """The whole migration (no ``--wave``): every topic and group the ledger holds; nothing waits for it."""
    return WaveProgress(None, [r.name for r in view.of_kind("topic")], [r.name for r in view.of_kind("group")])


def record_cleaned(ledger: Ledger, progress: WaveProgress) -> list[str]:
    """Record ``cleaned-up`` for the moved topics and groups of ``progress`` (those rolled back or never
    recorded keep their state). Returns the names recorded."""
    view = ledger.read()
    changes = [Change("topic", t, "cleaned-up", wave=progress.wave, detail="cleanup: MirrorMaker 2 no longer copies it")
               for t in progress.topics if view.state_of("topic", t) == "producers-moved"]
    changes += [Change("group", g, "cleaned-up", wave=progress.wave, detail="cleanup: its checkpoints are gone")
                for g in progress.groups if view.state_of("group", g) == "consumers-moved"]
    if changes:
        ledger.append(view, changes, "cleanup")
    return [c.name for c in changes]


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


def cleanup(s: MigrationSession, include_worker: bool, yes: bool, ledger: Ledger | None = None,
            progress: WaveProgress | None = None) -> Outcome:
    """``msk-migrate cleanup``: the leftovers listed (exit 0), deleted with ``yes``. With a worker, refused
    (exit 2, nothing deleted) while any of the migration's connectors exists there. ``progress`` (``--wave``):
    exit 1 with nothing listed while the wave has not moved; the flow's bookkeeping kept while another wave
    has not. ``ledger``: where the deletion is recorded (``cleaned-up``)."""
    wave = progress.wave if progress is not None else None
    if yes:
        cleanup_role_arn()  # a malformed role is refused before anything is listed or deleted
        if progress is not None and progress.waiting:
            raise UsageError("--yes", f"wave(s) {', '.join(progress.waiting)} of the migration have not moved (ledger "
                             f"{ledger.location if ledger else '-'}): MirrorMaker 2's bookkeeping on the target is theirs "
                             "too; nothing was deleted", "list without --yes, and delete once every wave has moved")
    if progress is not None and wave is not None and not progress.moved:
        shown = "; ".join(progress.unmoved[:10]) + (f" … {len(progress.unmoved) - 10} more" if len(progress.unmoved) > 10 else "")
        return Outcome("cleanup", "wave-not-moved", 1, [], s.talked_to(), extra={"wave": wave, "unmoved": progress.unmoved},
                       notes=[f"wave {wave} has not moved yet (ledger): {shown}; nothing listed or deleted"])
    if s.client is not None:
        require_no_connectors(s.client, s.migration)
    elif yes:
        s.connect()  # --yes never deletes unseen (open the session with the worker)
    items = leftovers(s, include_worker, shared_topics(s.client, s.migration))
    if progress is not None and progress.waiting:
        why = f"every wave's: wave(s) {', '.join(progress.waiting)} have not moved yet (ledger)"
        items = [i if i.kind == "kept" else Leftover("kept", i.name, why) for i in items]
    notes = []
    if yes:
        deleter = deleting_session(s)
        delete(deleter, items)
        if deleter is not s.target:
            notes.append(f"deleted as the cleanup role {cleanup_role_arn()} (assumed for this deletion only)")
        if ledger is not None and progress is not None:
            done = record_cleaned(ledger, progress)
            notes.append(f"recorded in the ledger {ledger.location}: {len(done)} topic(s) and group(s) cleaned up")
    n = sum(i.kind != "kept" for i in items)
    return Outcome("cleanup", "deleted" if yes else "listed", 0, list(items), s.talked_to(),
                   extra={"deleted": yes, "items": [i.to_dict() for i in items], "wave": wave},
                   views=[View(f"left on the target {s.target.bootstrap}", [col("kind", "kind"), col("name", "name"), col("why", "why")])],
                   notes=[f"deleted {n} item(s)" if yes else f"{n} item(s); nothing deleted (pass --yes to delete)", *notes])
