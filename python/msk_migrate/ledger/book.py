"""The ledger itself: read the current view, append one event, refuse a writer that read an older version.

Files (under the ledger's directory or S3 prefix):

- ``events/0000000001.json`` … one per state-changing command, never rewritten: ``{"format", "version",
  "at", "by", "started_by", "command", "migration", "changes": [{"kind", "name", "state", "evidence", "wave",
  "detail", "identity"}]}``. The sequence is the history; version N is the Nth event. ``by`` is the writer's
  identity (the AWS caller: inside the operator task, its role); ``started_by`` (only when known) the person
  who started the command there (:func:`~msk_migrate.ledger.storage.started_by`).
- ``current.json``: the records after the latest event a writer folded in (``LedgerView.to_dict``). It is a
  cache: a reader folds in any event newer than it, and a deleted ``current.json`` is rebuilt from ``events/``.
  Anyone who may append may also replace it, so it is never trusted on its own: each event carries
  ``view_digest``, the SHA-256 of the records after it (:meth:`~.records.LedgerView.records_digest`), and a
  reader compares ``current.json`` with the digest of the event of its version (append-only and locked in the
  bucket). A view that differs, or whose event carries no digest, is rebuilt from ``events/``.

Concurrency: a writer that read version N creates ``events/<N+1>`` **only if it does not exist** (S3
``If-None-Match: *``; a hard link in a directory: :mod:`.storage`). When another writer got there first the
write is refused (:class:`StaleLedger`, exit 2: re-run the command), never merged: the second writer's
command decided on a state of the migration that is no longer the state. A command calls
:meth:`Ledger.ensure_latest` before it changes anything on a cluster, so a stale ledger stops it before it
acts, and :meth:`Ledger.append` refuses again if someone wrote in between.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

from ..errors import UsageError
from .records import EVENT_FORMAT, VIEW_FORMAT, Change, LedgerView, Record
from .storage import LedgerStorage, started_by, storage_for

CURRENT = "current.json"
EVENTS = "events/"


def event_name(version: int) -> str:
    return f"{EVENTS}{version:010d}.json"


class StaleLedger(UsageError):
    """Another writer recorded a newer version after this command read the ledger (exit 2)."""


class LedgerUnreadable(UsageError):
    """A ledger file does not parse, or belongs to another migration (exit 2)."""


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Ledger:
    """One migration's ledger in one store (see the module docstring)."""

    def __init__(self, storage: LedgerStorage, migration: str | None = None):
        self.storage = storage
        self.migration = migration
        #: Read once, here: a malformed value stops the command before it reads the ledger or acts.
        self.started_by = started_by()

    @property
    def location(self) -> str:
        return self.storage.location

    @property
    def field(self) -> str:
        """What every error line starts with: the ledger and where it is."""
        return f"ledger {self.location}"

    # ---- reading -------------------------------------------------------------------------------
    def _parse(self, name: str, text: str, fmt: str) -> dict[str, Any]:
        fix = (f"restore {name} from the store's earlier versions (S3 object versions), or delete current.json: it is "
               "rebuilt from events/" if name == CURRENT else f"restore {name} from the store's earlier versions; never edit events by hand")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LedgerUnreadable(self.field, f"{name} does not parse ({exc.msg} at line {exc.lineno})", fix) from None
        if not isinstance(doc, dict) or doc.get("format") != fmt:
            got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise LedgerUnreadable(self.field, f"{name} is not a {fmt} document (format {got!r})", fix)
        if self.migration and doc.get("migration") and doc["migration"] != self.migration:
            raise LedgerUnreadable(self.field, f"records migration {doc['migration']!r}, not {self.migration!r}",
                                   "point MSK_MIGRATE_LEDGER at this migration's ledger (or give the migration its own name)")
        return doc

    def _view(self, doc: dict[str, Any]) -> LedgerView:
        try:
            records = {k: Record.from_dict(r) for k, r in (doc.get("records") or {}).items()}
            return LedgerView(self.location, int(doc["version"]), records, doc.get("updated_at"), doc.get("migration"))
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerUnreadable(self.field, f"{CURRENT} has a malformed record ({exc})",
                                   f"restore {CURRENT} from the store's earlier versions, or delete it: it is rebuilt from events/") from None

    def read(self) -> LedgerView:
        """The latest view: ``current.json`` plus every newer event, folded in order (an empty view when the
        ledger has no file yet)."""
        text = self.storage.read(CURRENT)
        view = self._view(self._parse(CURRENT, text, VIEW_FORMAT)) if text is not None else LedgerView(self.location, migration=self.migration)
        if view.version and not self._vouched(view):
            view = LedgerView(self.location, migration=self.migration)  # rebuilt from the events: they are the ledger
        for name in self.storage.names(EVENTS, event_name(view.version)):
            body = self.storage.read(name)
            if body is None:  # listed, then gone: only a hand-edited store does that
                raise LedgerUnreadable(self.field, f"{name} was listed but cannot be read",
                                       "restore it from the store's earlier versions")
            event = self._parse(name, body, EVENT_FORMAT)
            if int(event.get("version", -1)) != view.version + 1 or name != event_name(view.version + 1):
                raise LedgerUnreadable(self.field, f"{name} follows version {view.version} out of sequence",
                                       "restore the missing event from the store's earlier versions")
            try:
                view.apply(event)
            except (KeyError, TypeError, ValueError) as exc:
                raise LedgerUnreadable(self.field, f"{name} has a malformed change ({exc})",
                                       "restore it from the store's earlier versions") from None
        if view.migration is None:
            view.migration = self.migration
        return view

    def _vouched(self, view: LedgerView) -> bool:
        """True when the event of ``view``'s version records exactly ``view``'s records (its ``view_digest``)."""
        body = self.storage.read(event_name(view.version))
        if body is None:
            return False
        try:
            digest = json.loads(body).get("view_digest")
        except (json.JSONDecodeError, AttributeError):
            return False
        return isinstance(digest, str) and digest == view.records_digest()

    # ---- writing -------------------------------------------------------------------------------
    def _stale(self, view: LedgerView, name: str) -> StaleLedger:
        text = self.storage.read(name)
        who = ""
        if text:
            try:
                ev = json.loads(text)
                person = f" started by {ev['started_by']}" if ev.get("started_by") else ""
                who = f" by {ev.get('by')}{person} at {ev.get('at')} ({ev.get('command')})"
            except json.JSONDecodeError:
                pass
        return StaleLedger(self.field, f"moved on: version {view.version + 1} was written{who} after this "
                           f"command read version {view.version}; nothing was recorded",
                           "re-run the command: it reads the new version and decides again")

    def ensure_latest(self, view: LedgerView) -> None:
        """Refuse (StaleLedger) when a newer version exists than ``view``: call before changing a cluster."""
        name = event_name(view.version + 1)
        if self.storage.names(EVENTS, event_name(view.version)):
            raise self._stale(view, name)

    def append(self, view: LedgerView, changes: Iterable[Change], command: str) -> LedgerView:
        """Record ``changes`` as the event after ``view`` and return the new view. Refused (StaleLedger, nothing
        written) when another writer recorded that version first."""
        items = [c.to_dict() for c in changes]
        if not items:
            return view
        version = view.version + 1
        event = {"format": EVENT_FORMAT, "version": version, "at": _now(), "by": self.storage.identity(),
                 "command": command, "migration": self.migration, "changes": items}
        if self.started_by:
            event["started_by"] = self.started_by
        new = LedgerView(view.location, view.version, dict(view.records), view.updated_at, self.migration or view.migration)
        new.apply(event)
        event["view_digest"] = new.records_digest()  # what current.json at this version must hold (see read)
        name = event_name(version)
        if not self.storage.create(name, json.dumps(event, indent=1, sort_keys=True) + "\n"):
            raise self._stale(view, name)
        # The event is the commit; the view is a cache every reader brings up to date, so a later writer's
        # view overwritten by an earlier one's only costs the next reader one more event to fold.
        self.storage.put(CURRENT, json.dumps(new.to_dict(), indent=1, sort_keys=True) + "\n")
        return new


def open_ledger(location: str, migration: str | None = None) -> Ledger:
    """The ledger at ``location`` (a directory path or ``s3://bucket/prefix``) of migration ``migration``."""
    return Ledger(storage_for(location), migration)
