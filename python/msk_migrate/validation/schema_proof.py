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
* ``not-schemad``: no key or value in the wire format (or only raw-looking ones and no registries): bytes only.

Keys and values are read apart (:class:`.schema_ids.PartIds`): an id is proven once whichever part carries it,
and each schema'd part's **subject name strategy** is told from the subjects that hold its ids
(``GET /schemas/ids/{id}/versions`` on the source registry; :mod:`.subject_strategy`). A part whose strategy
cannot be told is a named problem of the row (status ``mismatch``), never a pass; so is a subject the source
holds an id under that the target does not hold it under.

A schema'd part whose ids all read as 0 carries **Apicurio's 8-byte global ids** (:mod:`.schema_ids`): they are
refused by name, not resolved (the Confluent API this module speaks has no global ids): the row is
``not-checked`` with the line :func:`wide_ids_refusal` (the run's verdict ``schemas-not-checked``, exit 1) unless
another id of the topic fails (``mismatch``).

In a part that is not schema'd an id neither registry knows is taken for raw bytes; in the **keys** that holds
too while none of the part's ids resolves on either registry (big-endian long keys start with zero bytes).

**Protobuf**: for an id that resolves to a PROTOBUF schema, each record's message-index array (tallied with the id:
:attr:`.schema_ids.IdTally.prefixes`) must name a message of that schema as the target registry holds it
(:func:`msk_migrate.schemas.protobuf.message_at`), and the indexes must be the same on both sides (the same set of
arrays, and the same records per array when the id's records are as many): records without a readable array,
an array naming no message, or an array only one side carries are named problems of the row (``mismatch``).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnreachableError
from ..schemas.protobuf import indexes_of_prefix, message_at, show
from .schema_compare import Reference, ResolvedSchema, differences
from .schema_ids import NO_PREFIX, NOT_READ, PARTS, IdTally, TopicIds
from .subject_strategy import IdSubjects, PartStrategy, classify, record_name

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
        self._cache: dict[str, Any] = {}
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

    def _get(self, path: str) -> Any:
        if path in self._cache:
            return self._cache[path]
        req = urllib.request.Request(self.url + path, headers=self._headers)
        self.requests += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                body: Any = json.loads(resp.read())
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

    def subjects(self, schema_id: int) -> tuple[str, ...] | None:
        """The subjects holding ``schema_id`` (``GET /schemas/ids/{id}/versions``), soft-deleted ones included (records
        written before a subject was deleted still carry its ids); None when the id is unknown."""
        body = self._get(f"/schemas/ids/{schema_id}/versions?deleted=true")
        if body is None:
            return None
        return tuple(sorted({str(v["subject"]) for v in body if isinstance(v, dict) and "subject" in v}))

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
    #: The canonical text the target registry holds (Protobuf ids only: their message indexes are read against it).
    text: str | None = field(default=None, compare=False, repr=False)

    def to_dict(self, tally: TopicIds, indexes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        by_part = {p: tally.part(p).records(self.schema_id) for p in tally.parts_of(self.schema_id)}
        out = {"id": self.schema_id, "status": self.status, "schema_type": self.schema_type,
               "records": {side: sum(r[side] for r in by_part.values()) for side in ("source", "target")},
               "differences": self.differences, "parts": list(by_part), "records_by_part": by_part}
        if indexes is not None:
            out["message_indexes"] = indexes
        return out


def message_indexes(proof: IdProof, tally: TopicIds, topic: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The message-index arrays the records of a Protobuf id carry (per part: indexes, the message named, records
    per side) and the problems: records without a readable array, arrays naming no message of the schema, arrays
    not alike on both sides. Parts whose prefixes were not tallied are left out."""
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    i = proof.schema_id
    for part in PARTS:
        side_tallies = {"source": tally.part(part).source, "target": tally.part(part).target}
        if not any(i in t.ids for t in side_tallies.values()) or not any(i in t.prefixes for t in side_tallies.values()):
            continue
        where = f"topic {topic}: {part} schema id {i} (PROTOBUF)"
        per: dict[bytes, dict[str, int]] = {}
        for side, t in side_tallies.items():
            for prefix, records in t.prefixes.get(i, {}).items():
                per.setdefault(prefix, {"source": 0, "target": 0})[side] += records
        for prefix, n in sorted(per.items()):
            if prefix == NO_PREFIX:
                rows.append({"part": part, "indexes": None, "message": None, **n})
                problems.append(f"{where}: {n['source'] + n['target']} record(s) carry no readable message-index array after the "
                                f"id (source {n['source']}, target {n['target']}): a Protobuf deserializer cannot read them")
                continue
            if prefix == NOT_READ:
                rows.append({"part": part, "indexes": "not read", "message": None, **n})
                problems.append(f"{where}: the message indexes of {n['source'] + n['target']} record(s) were not read (too many "
                                "distinct prefixes in one read): not proven")
                continue
            idx = indexes_of_prefix(prefix)
            name = message_at(proof.text or "", idx)
            rows.append({"part": part, "indexes": list(idx), "message": name, **n})
            if name is None:
                problems.append(f"{where}: message index {show(idx)} names no message of the schema the target registry holds "
                                f"({n['source']} record(s) on the source, {n['target']} on the target)")
        totals = {side: t.ids.get(i, 0) for side, t in side_tallies.items()}
        for prefix, n in sorted(per.items()):
            if prefix in (NO_PREFIX, NOT_READ):
                continue
            if (n["source"] == 0) != (n["target"] == 0) or (totals["source"] == totals["target"] and n["source"] != n["target"]):
                problems.append(f"{where}: message index {show(indexes_of_prefix(prefix))} is carried by {n['source']} record(s) on "
                                f"the source and {n['target']} on the target: the records' message indexes differ")
    return rows, problems


class Prover:
    """Resolves ids on a pair of registries, each answer once per run."""

    def __init__(self, source: RegistryClient, target: RegistryClient):
        self.source, self.target = source, target
        self._proofs: dict[int, IdProof] = {}

    def strategy(self, topic: str, part: str, ids: list[int]) -> PartStrategy:
        """The subject name strategy of ``topic``'s ``part`` from the subjects holding ``ids`` on the source (on
        the target for an id the source does not know), and that the target holds each id under those subjects."""
        held: dict[int, IdSubjects] = {}
        for i in ids:
            known = self.source.schema(i) or self.target.schema(i)
            subjects = self.source.subjects(i) if self.source.schema(i) else self.target.subjects(i)
            if known is not None and subjects is not None:
                held[i] = IdSubjects(subjects, record_name(known.schema_type, known.text))
        found = classify(topic, part, held)
        if found.strategy is None:
            return found
        for i in sorted(held):
            used = [s for s in held[i].subjects if s in found.subjects]
            on_target = self.target.subjects(i) or ()
            lost = [s for s in used if s not in on_target]
            if lost and self.target.schema(i) is not None:
                return PartStrategy(found.strategy, found.subjects, (
                    f"topic {topic}: {part} schema id {i} is under subject {lost[0]} on the source but not on the target "
                    f"(the target holds it under {', '.join(on_target) or 'no subject'}): run `msk-migrate schemas copy "
                    "--to target`"))
        return found

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
        return IdProof(schema_id, DIFFERING if diffs else IDENTICAL, s.schema_type, diffs,
                       t.text if t.schema_type == "PROTOBUF" else None)

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
    #: The subject name strategy of each part whose ids were resolved (:mod:`.subject_strategy`).
    strategies: dict[str, PartStrategy] = field(default_factory=dict)
    #: Per Protobuf id, its records' message-index arrays (:func:`message_indexes`), and the problems they make.
    indexes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    index_problems: list[str] = field(default_factory=list)

    def _ids(self, *statuses: str) -> list[int]:
        return [p.schema_id for p in self.proofs if p.status in statuses]

    def _held_against(self) -> set[int]:
        """The ids whose being missing on both registries fails the row: those of a schema'd part, except in
        keys none of whose ids resolves anywhere (raw keys that start with zero bytes, e.g. big-endian longs)."""
        out: set[int] = set()
        resolved = {p.schema_id for p in self.proofs if p.status != MISSING_ON_BOTH}
        for name in PARTS:
            part = self.tally.part(name)
            if part.schemad and (name == "value" or resolved & set(part.ids)):
                out |= set(part.ids)
        return out

    @property
    def failing(self) -> list[IdProof]:
        """The ids that make the row a mismatch."""
        held = self._held_against()
        return [p for p in self.proofs if p.status in (DIFFERING, MISSING_ON_TARGET, MISSING_ON_SOURCE)
                or (p.status == MISSING_ON_BOTH and p.schema_id in held)]

    @property
    def strategy_problems(self) -> list[str]:
        return [s.problem for s in self.strategies.values() if s.problem]

    def problems(self) -> list[str]:
        """One sentence per failing id (the first few) and per part whose subject strategy cannot be told, or
        why the schemas were not checked."""
        if self.status == "not-checked":
            return [self.reason or "schemas not checked"]
        out = [f"schema id {p.schema_id} {p.status.replace('_', ' ')}: {'; '.join(p.differences)}" for p in self.failing[:5]]
        if len(self.failing) > 5:
            out.append(f"... and {len(self.failing) - 5} more schema id(s) that do not resolve identically")
        more = len(self.index_problems) - 5
        return out + self.strategy_problems + self.index_problems[:5] + (
            [f"... and {more} more message-index problem(s)"] if more > 0 else [])

    def _part(self, name: str) -> dict[str, Any]:
        part = self.tally.part(name)
        found = self.strategies.get(name)
        return {"schemad": part.schemad, "ids_seen": len(part.ids), "source": part.source.to_dict(),
                "target": part.target.to_dict(), **(found or PartStrategy(None)).to_dict()}

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
            "unresolved_as_raw": len(set(self._ids(MISSING_ON_BOTH)) - self._held_against()),
            "source": self.tally.source.to_dict(),
            "target": self.tally.target.to_dict(),
            "ids": [p.to_dict(self.tally, self.indexes.get(p.schema_id)) for p in self.proofs[:LISTED_IDS]],
            "ids_listed": min(len(self.proofs), LISTED_IDS),
            "parts": {p: self._part(p) for p in PARTS},
        }


def wide_ids_refusal(topic: str, parts: list[str]) -> str:
    """The line naming a topic whose ``parts`` carry Apicurio's 8-byte global ids, with the fix."""
    what = " and ".join(f"{p}s" for p in parts)
    return (f"topic {topic}: {what} carry Apicurio 8-byte global ids (magic byte, then an 8-byte id), which are not "
            "resolved: have the producers' Apicurio serdes write the Confluent format (a 4-byte id handler, e.g. "
            "apicurio.registry.as-confluent=true), or opt out with --ignore-schemas (the bytes are still compared)")


def schema_row(tally: TopicIds | None, prove: Callable[[int], IdProof] | None, ignore: bool,
               strategy: Callable[[str, list[int]], PartStrategy] | None = None, topic: str = "") -> SchemaRow:
    """The row of one topic from its tally. ``prove``: an id's proof (:meth:`Prover.prove`), None when no
    registries were given; ``ignore``: the run opted out of the schema check (a schema'd topic is then
    ``skipped``, not ``not-checked``); ``strategy``: a part's subject name strategy from its ids (part, ids;
    :meth:`Prover.strategy` for the topic), asked for each schema'd part with an id a registry knows (a part that
    is not schema'd is raw bytes whose first bytes may read as any id); ``topic`` names it in a refusal."""
    tally = tally or TopicIds(IdTally(), IdTally())
    schemad = tally.schemad
    if not tally.ids:
        return SchemaRow("not-schemad", False, tally)
    if prove is None:
        if not schemad:
            return SchemaRow("not-schemad", False, tally,
                             reason="fewer than half of the keys and of the values start with the wire format's magic "
                                    "byte: bytes only")
        if ignore:
            return SchemaRow("skipped", True, tally, reason="schema check skipped (--ignore-schemas)")
        n = tally.source.wire_format or tally.target.wire_format
        n_keys = tally.key.source.wire_format or tally.key.target.wire_format
        carry = f"{n:,} value(s)" + (f" and {n_keys:,} key(s)" if n_keys else "") if n else f"{n_keys:,} key(s)"
        return SchemaRow("not-checked", True, tally, reason=(
            f"schemas not checked: {carry} carry {len(tally.ids)} schema id(s) but no schema registries "
            "were given (set schema_registry: {source: URL, target: URL}, or opt out with --ignore-schemas)"))
    wide = [p for p in PARTS if tally.part(p).apicurio_global_ids]
    narrow = {i for p in PARTS if p not in wide for i in tally.part(p).ids}
    row = SchemaRow("match", schemad, tally, [prove(i) for i in tally.ids if i in narrow])
    known = {p.schema_id for p in row.proofs if p.status != MISSING_ON_BOTH}
    if strategy is not None:
        for name in PARTS:
            ids = [i for i in tally.part(name).ids if i in known]
            if ids and tally.part(name).schemad and name not in wide:
                row.strategies[name] = strategy(name, ids)
    for proof in row.proofs:
        if proof.schema_type == "PROTOBUF" and proof.text is not None:
            found, problems = message_indexes(proof, tally, topic)
            if found:
                row.indexes[proof.schema_id] = found
            row.index_problems += problems
    if row.failing or row.strategy_problems or row.index_problems:
        row.status = "mismatch"
    elif wide:
        row.status = "not-checked"
        row.reason = wide_ids_refusal(topic, wide)
    elif not schemad and not row._ids(IDENTICAL, DIFFERING):
        row.status = "not-schemad"
        row.reason = "values starting with a zero byte carry ids neither registry knows: taken for raw bytes"
    return row


def schema_rows(tallies: dict[str, TopicIds], topics: list[str], registries: dict[str, str] | None,
                ignore: bool) -> dict[str, SchemaRow]:
    """A row per topic. ``registries``: Confluent-API base URLs per side (source, target), or None."""
    if not registries or ignore:
        return {t: schema_row(tallies.get(t), None, ignore) for t in topics}
    prover = Prover(RegistryClient("source", registries["source"]), RegistryClient("target", registries["target"]))
    return {t: schema_row(tallies.get(t), prover.prove, ignore, functools.partial(prover.strategy, t), t) for t in topics}
