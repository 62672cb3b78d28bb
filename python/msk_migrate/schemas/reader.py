"""Read a registry's inventory through the Confluent API: every subject (soft-deleted ones too, where the API
lists them with ``?deleted=true``), every version with its id, type, text and references, and compatibility
and mode, global and per subject. Subjects are read in parallel (a registry of 1,000 subjects is thousands
of requests)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from ..errors import UsageError
from ..outcome import quiet
from .client import NotFound, RegistryClient
from .model import Inventory, Reference, SchemaVersion

#: Requests in flight per registry: enough to hide latency, few enough for a small registry.
PARALLEL = 8


def subject_path(subject: str) -> str:
    return "/subjects/" + quote(subject, safe="")


def list_subjects(client: RegistryClient) -> list[str]:
    """Every subject, soft-deleted ones included where the registry supports ``?deleted=true``."""
    try:
        subjects = client.get("/subjects", params={"deleted": "true"})
    except NotFound:
        subjects = None
    if not isinstance(subjects, list):
        raise UsageError(client.option, f"{client.url} did not answer /subjects with a list (is it a schema registry's Confluent API?)",
                         "give the Confluent-compatible API URL (Apicurio: .../apis/ccompat/v7)")
    return sorted(str(s) for s in subjects)


def select(subjects: Iterable[str], patterns: tuple[str, ...]) -> list[str]:
    """The subjects matching any of ``patterns`` (shell globs); all of them when there is no pattern."""
    return [s for s in subjects if not patterns or any(fnmatch.fnmatchcase(s, p) for p in patterns)]


def parse_version(subject: str, raw: dict[str, Any], deleted: bool) -> SchemaVersion:
    return SchemaVersion(subject=subject, version=int(raw["version"]), id=int(raw["id"]),
                         schema_type=str(raw.get("schemaType") or "AVRO"), schema=str(raw["schema"]),
                         references=tuple(Reference.from_api(r) for r in raw.get("references") or ()), deleted=deleted)


def read_subject(client: RegistryClient, subject: str) -> tuple[list[SchemaVersion], str | None, str | None]:
    """The versions of ``subject`` (soft-deleted flagged), its own compatibility and mode (None: not set)."""
    path = subject_path(subject)
    try:
        every = [int(v) for v in client.get(path + "/versions", params={"deleted": "true"})]
    except NotFound:
        return [], None, None
    try:
        live = {int(v) for v in client.get(path + "/versions")}
    except NotFound:  # every version of the subject is soft-deleted
        live = set()
    versions = []
    for v in every:
        try:
            raw = client.get(f"{path}/versions/{v}", params={"deleted": "true"})
        except NotFound:
            continue  # hard-deleted between the two calls
        versions.append(parse_version(subject, raw, deleted=v not in live))
    compat = client.get_or_none(f"/config/{quote(subject, safe='')}", params={"defaultToGlobal": "false"})
    mode = client.get_or_none(f"/mode/{quote(subject, safe='')}", params={"defaultToGlobal": "false"})
    level = (compat or {}).get("compatibilityLevel") or (compat or {}).get("compatibility")
    return versions, level, (mode or {}).get("mode")


def read_inventory(client: RegistryClient, subjects: list[str], progress: Callable[[str], None] = quiet) -> Inventory:
    """The inventory of ``subjects`` on ``client``'s registry (a subject that is not there contributes nothing)."""
    inv = Inventory(url=client.url)
    glob = client.get_or_none("/config") or {}
    inv.compatibility = glob.get("compatibilityLevel") or glob.get("compatibility")
    inv.mode = (client.get_or_none("/mode") or {}).get("mode")
    done = 0
    with ThreadPoolExecutor(PARALLEL) as pool:
        for subject, (versions, compat, mode) in zip(subjects, pool.map(lambda s: read_subject(client, s), subjects), strict=True):
            inv.versions.extend(versions)
            if compat:
                inv.subject_compatibility[subject] = compat
            if mode:
                inv.subject_mode[subject] = mode
            done += 1
            if done % 50 == 0:
                progress(f"read {done}/{len(subjects)} subjects of the {client.role} registry")
    return inv


def schema_by_id(client: RegistryClient, schema_id: int) -> dict[str, Any] | None:
    """What the registry holds under ``schema_id`` (schema, schemaType, references), or None when the id is free."""
    return client.get_or_none(f"/schemas/ids/{schema_id}")


def read_ids(client: RegistryClient, ids: list[int]) -> dict[int, dict[str, Any] | None]:
    with ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(ids, pool.map(lambda i: schema_by_id(client, i), ids), strict=True))
