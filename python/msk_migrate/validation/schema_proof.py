"""Proof per record: every schema id the compared records carry resolves to the identical schema on the
source's and the target's registry.

MirrorMaker 2 copies a record's bytes, schema id included; a consumer on the target decodes them with
whatever the **target** registry holds under that id. Equal bytes on both clusters are therefore not
enough: this module resolves each id seen in the window (:mod:`.schema_ids`) on both registries over
the Confluent API (``GET /schemas/ids/{id}``, the common ground of Confluent SR, Karapace, Apicurio's
``/apis/ccompat/v7`` and Redpanda), follows its references (``GET /subjects/{s}/versions/{v}``) on both,
and compares them (:mod:`.schema_compare`). Each registry answer is fetched once per run (a cache per
registry).

An id is ``identical``, ``differing``, ``missing_on_target``, ``missing_on_source`` or
``missing_on_both``. Per topic a :class:`SchemaRow`:

* ``match``: every id resolved identically (in a topic that is not schema'd, ids neither registry knows
  are taken for raw bytes starting with a zero byte and counted as ``unresolved_as_raw``);
* ``mismatch``: an id differs or is missing on a side (missing on both counts too in a schema'd topic:
  the registries given are not the ones its records were written with); the run's verdict is a mismatch;
* ``not-checked``: the topic is schema'd but no registries were given — a non-match verdict
  (``schemas-not-checked``, exit 1) unless the run opted out (``ignore_schemas``: ``skipped``);
* ``not-schemad``: no value in the wire format (or only raw-looking ones and no registries): bytes only.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnreachableError
from .schema_compare import Reference, ResolvedSchema, differences
from .schema_ids import IdTally, TopicIds

IDENTICAL = "identical"
DIFFERING = "differing"
MISSING_ON_TARGET = "missing_on_target"
MISSING_ON_SOURCE = "missing_on_source"
MISSING_ON_BOTH = "missing_on_both"

#: Row statuses; only "mismatch" and "not-checked" fail a run.
ROW_OK = {"match", "not-schemad", "skipped"}
#: Ids listed one by one in a row (counts are always complete).
LISTED_IDS = 200
#: References are followed this deep (a reference cycle is refused by registries; this bounds a bad one).
MAX_REFERENCE_DEPTH = 16
TIMEOUT_SECONDS = 10.0


class RegistryClient:
    """Read-only Confluent-API client of one registry, with a per-run cache. ``side``: source | target;
    ``url``: the Confluent API's base (Apicurio: ``…/apis/ccompat/v7``). 404 = not found; anything else
    that is not an answer raises :class:`UnreachableError` naming the side and the URL."""

    def __init__(self, side: str, url: str, timeout: float = TIMEOUT_SECONDS):
        self.side, self.url, self.timeout = side, url.rstrip("/"), timeout
        self._cache: dict[str, dict[str, Any] | None] = {}
        self.requests = 0
        self._headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
        # basic auth from the same variables as `msk-migrate schemas` (never from the URL, never logged)
        user = os.environ.get(f"MSK_MIGRATE_{side.upper()}_REGISTRY_USER")
        password = os.environ.get(f"MSK_MIGRATE_{side.upper()}_REGISTRY_PASSWORD")
        if user and password is not None:
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            self._headers["Authorization"] = f"Basic {token}"
        # TLS (a private CA, mutual TLS) from the same variables as `msk-migrate schemas`
        from ..schemas.tls import env_tls

        self._ssl = env_tls(side).ssl_context() if url.startswith("https:") else None

    def _get(self, path: str) -> dict[str, Any] | None:
        if path in self._cache:
            return self._cache[path]
        req = urllib.request.Request(self.url + path, headers=self._headers)
        self.requests += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                body: dict[str, Any] | None = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise UnreachableError(f"{self.side} schema registry {self.url}: credentials refused (HTTP {exc.code}); set "
                                       f"MSK_MIGRATE_{self.side.upper()}_REGISTRY_USER and _PASSWORD") from None
            if exc.code != 404:
                raise UnreachableError(f"{self.side} schema registry {self.url}: GET {path} answered HTTP {exc.code} "
                                       f"{_error_message(exc)}") from None
            body = None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise UnreachableError(f"{self.side} schema registry {self.url}: {reason} (check schema_registry.{self.side})") from None
        self._cache[path] = body
        return body

    def schema(self, schema_id: int) -> ResolvedSchema | None:
        """The schema registered under ``schema_id``; None when the registry does not know it."""
        body = self._get(f"/schemas/ids/{schema_id}")
        return None if body is None else ResolvedSchema.of(body)

    def version(self, subject: str, version: int) -> ResolvedSchema | None:
        body = self._get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{version}")
        return None if body is None else ResolvedSchema.of(body)


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read()).get("message", ""))[:200]
    except Exception:
        return ""


@dataclass
class IdProof:
    """One id, resolved on both registries."""

    schema_id: int
    status: str
    schema_type: str | None = None
    differences: list[str] = field(default_factory=list)

    def to_dict(self, tally: TopicIds) -> dict[str, Any]:
        return {"id": self.schema_id, "status": self.status, "schema_type": self.schema_type,
                "records": {"source": tally.source.ids.get(self.schema_id, 0),
                            "target": tally.target.ids.get(self.schema_id, 0)},
                "differences": self.differences}


class Prover:
    """Resolves ids on a pair of registries, each answer once per run."""

    def __init__(self, source: RegistryClient, target: RegistryClient):
        self.source, self.target = source, target
        self._proofs: dict[int, IdProof] = {}

    def prove(self, schema_id: int) -> IdProof:
        if schema_id not in self._proofs:
            self._proofs[schema_id] = self._prove(schema_id)
        return self._proofs[schema_id]

    def _prove(self, schema_id: int) -> IdProof:
        s, t = self.source.schema(schema_id), self.target.schema(schema_id)
        if s is None or t is None:
            status = MISSING_ON_BOTH if s is None and t is None else (MISSING_ON_TARGET if t is None else MISSING_ON_SOURCE)
            why = {MISSING_ON_BOTH: "neither registry knows this id",
                   MISSING_ON_TARGET: "the target registry does not know this id",
                   MISSING_ON_SOURCE: "the source registry does not know this id"}[status]
            if schema_id == 0:
                why += " (no registry assigns id 0: values in Apicurio's 8-byte id format?)"
            known = s or t
            return IdProof(schema_id, status, known.schema_type if known is not None else None, [why])
        diffs = differences(s, t) or self._references(s.references, 0, set())
        return IdProof(schema_id, DIFFERING if diffs else IDENTICAL, s.schema_type, diffs)

    def _references(self, refs: tuple[Reference, ...], depth: int, seen: set[tuple[str, int]]) -> list[str]:
        """What differs in the schemas the references point at (same subject and version on both sides)."""
        out: list[str] = []
        for name, subject, version in refs:
            if (subject, version) in seen or depth >= MAX_REFERENCE_DEPTH:
                continue
            seen.add((subject, version))
            s, t = self.source.version(subject, version), self.target.version(subject, version)
            where = f"reference {name} (subject {subject} version {version})"
            if s is None or t is None:
                side = "either registry" if s is None and t is None else ("the target" if t is None else "the source")
                out.append(f"{where} is missing on {side}")
                continue
            diffs = differences(s, t)
            out += [f"{where}: {d}" for d in diffs]
            if not diffs:
                out += self._references(s.references, depth + 1, seen)
        return out


@dataclass
class SchemaRow:
    """The schema row of one topic (see the module's docstring for the statuses)."""

    status: str
    schemad: bool
    tally: TopicIds
    proofs: list[IdProof] = field(default_factory=list)
    reason: str | None = None

    def _ids(self, *statuses: str) -> list[int]:
        return [p.schema_id for p in self.proofs if p.status in statuses]

    @property
    def failing(self) -> list[IdProof]:
        """The ids that make the row a mismatch."""
        bad = {DIFFERING, MISSING_ON_TARGET, MISSING_ON_SOURCE} | ({MISSING_ON_BOTH} if self.schemad else set())
        return [p for p in self.proofs if p.status in bad]

    def problems(self) -> list[str]:
        """One sentence per failing id (the first few), or why the schemas were not checked."""
        if self.status == "not-checked":
            return [self.reason or "schemas not checked"]
        out = [f"schema id {p.schema_id} {p.status.replace('_', ' ')}: {'; '.join(p.differences)}" for p in self.failing[:5]]
        if len(self.failing) > 5:
            out.append(f"... and {len(self.failing) - 5} more schema id(s) that do not resolve identically")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "schemad": self.schemad,
            "reason": self.reason,
            "ids_seen": len(self.tally.ids),
            "resolved_identical": len(self._ids(IDENTICAL)),
            "differing": self._ids(DIFFERING),
            "missing_on_target": self._ids(MISSING_ON_TARGET),
            "missing_on_source": self._ids(MISSING_ON_SOURCE),
            "missing_on_both": self._ids(MISSING_ON_BOTH),
            "unresolved_as_raw": 0 if self.schemad else len(self._ids(MISSING_ON_BOTH)),
            "source": self.tally.source.to_dict(),
            "target": self.tally.target.to_dict(),
            "ids": [p.to_dict(self.tally) for p in self.proofs[:LISTED_IDS]],
            "ids_listed": min(len(self.proofs), LISTED_IDS),
        }


def schema_row(tally: TopicIds | None, prove: Callable[[int], IdProof] | None, ignore: bool) -> SchemaRow:
    """The row of one topic from its tally. ``prove``: an id's proof (:meth:`Prover.prove`), None when no
    registries were given; ``ignore``: the run opted out of the schema check (a schema'd topic is then
    ``skipped``, not ``not-checked``)."""
    tally = tally or TopicIds(IdTally(), IdTally())
    schemad = tally.schemad
    if not tally.ids:
        return SchemaRow("not-schemad", False, tally)
    if prove is None:
        if not schemad:
            return SchemaRow("not-schemad", False, tally,
                             reason="fewer than half of the values start with the wire format's magic byte: bytes only")
        if ignore:
            return SchemaRow("skipped", True, tally, reason="schema check skipped (--ignore-schemas)")
        n = tally.source.wire_format or tally.target.wire_format
        return SchemaRow("not-checked", True, tally, reason=(
            f"schemas not checked: {n:,} record(s) carry {len(tally.ids)} schema id(s) but no schema registries "
            "were given (set schema_registry: {source: URL, target: URL}, or opt out with --ignore-schemas)"))
    row = SchemaRow("match", schemad, tally, [prove(i) for i in tally.ids])
    if row.failing:
        row.status = "mismatch"
    elif not schemad and not row._ids(IDENTICAL, DIFFERING):
        row.status = "not-schemad"
        row.reason = "values starting with a zero byte carry ids neither registry knows: taken for raw bytes"
    return row


def schema_rows(tallies: dict[str, TopicIds], topics: list[str], registries: dict[str, str] | None,
                ignore: bool) -> dict[str, SchemaRow]:
    """A row per topic. ``registries``: Confluent-API base URLs per side (source, target), or None."""
    prover = None
    if registries and not ignore:
        prover = Prover(RegistryClient("source", registries["source"]), RegistryClient("target", registries["target"]))
    return {t: schema_row(tallies.get(t), prover.prove if prover else None, ignore) for t in topics}
