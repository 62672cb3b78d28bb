"""A whole Apicurio Registry's inventory in one request: ``GET /apis/registry/v3/admin/export`` (the archive
its import reads, :mod:`.apicurio_import`), instead of about six Confluent-API calls per subject and one per id.

What the archive says, as the Confluent API would say it (checked against Apicurio 3.3.3 here):
- a subject is an artifact of the default group (``groups/default/artifacts/<subject>/``; the Confluent
  API sees no other group); a subject version is an artifact version, its id the version's ``contentId`` and
  its number the version's ``versionOrder`` (what the Confluent API answers: a version *named* "7" with
  order 6 is version 6 there);
- ``state`` DISABLED is soft-deleted; the schema's type is the artifact's ``artifactType``;
- the text is ``content/<hash>.Content.data`` and the references the content's ``serializedReferences``;
- a subject's compatibility is its ``COMPATIBILITY`` artifact rule (none: not set; Apicurio's Confluent API
  answers NONE for such a subject, which a copy would then write as a setting of its own);
- ``latest`` is the last live version of the artifact's ``latest`` branch.

Every content of the registry is in the archive, so it also answers "what does the registry hold under id N"
for every id at once (:attr:`Export.contents`; an id not there is free).

Invariant: a registry that is not Apicurio, or refuses the export (credentials that may read but not
administer), is read through the Confluent API (:mod:`.reader`): the export is a shortcut, never a requirement.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from .client import NotFound, RegistryClient
from .model import Inventory, Reference, SchemaVersion

#: An export of a large registry is one response: allow it the time an import gets.
EXPORT_TIMEOUT_S = 300.0
PREFIX = "groups/default/artifacts/"


@dataclass
class Export:
    """One Apicurio Registry's content: every subject version, every id's schema, and each subject's latest."""

    inventory: Inventory
    contents: dict[int, dict[str, Any]] = field(default_factory=dict)  #: id -> Confluent-API answer of /schemas/ids/{id}
    latest: dict[str, int] = field(default_factory=dict)  #: subject -> version ``/versions/latest`` answers


def apicurio_version(client: RegistryClient) -> str | None:
    """The Apicurio version of ``client``'s registry (its v3 ``system/info``), None when it is not Apicurio."""
    from ..errors import UsageError

    try:
        info = client.get(client.root + "/apis/registry/v3/system/info", absolute=True)
    except (NotFound, RuntimeError, UsageError):
        return None
    if isinstance(info, dict) and "apicurio" in str(info.get("name", "")).lower():
        return str(info.get("version") or "3")
    return None


class ExportRefused(Exception):
    """The registry would not export (e.g. the credentials may read schemas but not administer): read it through
    the Confluent API instead."""


def fetch_export(client: RegistryClient) -> bytes:
    resp = client.session.get(client.root + "/apis/registry/v3/admin/export", timeout=EXPORT_TIMEOUT_S,
                              headers={"Accept": "application/zip"}, verify=client.verify, cert=client.cert)
    if resp.status_code in (401, 403, 404, 405):
        raise ExportRefused(f"HTTP {resp.status_code}")
    if resp.status_code >= 400:
        raise RuntimeError(f"{client.role} registry: GET /apis/registry/v3/admin/export answered HTTP {resp.status_code}: {resp.text[:300]}")
    return resp.content


#: An artifact's file in the archive: the subject is everything before its known tail (a subject may hold "/":
#: confluent-kafka's Protobuf serializer names a referenced file's subject by its path, e.g. ``demo/common.proto``).
_ENTRY = re.compile(r"^(?P<subject>.+)/(?P<rest>MetaData\.Artifact\.json|versions/[^/]+\.ArtifactVersion\.json"
                    r"|branches/[^/]+\.Branch\.json|rules/[^/]+\.ArtifactRule\.json)$", re.DOTALL)


def _refs(serialized: str | None) -> tuple[Reference, ...]:
    return tuple(Reference(str(r["name"]), str(r["artifactId"]), int(r["version"])) for r in json.loads(serialized or "null") or ())


def parse_export(url: str, archive: bytes) -> Export:
    """The :class:`Export` of an archive of Apicurio's export format 3.0 (read from registry ``url``)."""
    out = Export(Inventory(url=url))
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        names = zf.namelist()
        texts: dict[int, str] = {}
        refs: dict[int, tuple[Reference, ...]] = {}
        for name in names:
            if name.startswith("content/") and name.endswith(".Content.json"):
                meta = json.loads(zf.read(name))
                cid = int(meta["contentId"])
                texts[cid] = zf.read(name[: -len(".json")] + ".data").decode()
                refs[cid] = _refs(meta.get("serializedReferences"))
        types: dict[str, str] = {}
        branches: dict[str, list[str]] = {}
        raw_versions: list[dict[str, Any]] = []
        for name in names:
            if not name.startswith(PREFIX):
                continue
            entry = _ENTRY.match(name[len(PREFIX):])
            if entry is None:
                continue
            subject, rest = entry.group("subject"), entry.group("rest")
            if rest == "MetaData.Artifact.json":
                types[subject] = str(json.loads(zf.read(name)).get("artifactType") or "AVRO")
            elif rest.startswith("versions/") and rest.endswith(".ArtifactVersion.json"):
                raw_versions.append(json.loads(zf.read(name)))
            elif rest == "branches/latest.Branch.json":
                branches[subject] = [str(v) for v in json.loads(zf.read(name)).get("versions") or ()]
            elif rest == "rules/COMPATIBILITY.ArtifactRule.json":
                out.inventory.subject_compatibility[subject] = str(json.loads(zf.read(name))["configuration"])
    for cid, text in texts.items():
        body: dict[str, Any] = {"schema": text}
        if refs[cid]:
            body["references"] = [r.to_api() for r in refs[cid]]
        out.contents[cid] = body
    live: dict[str, dict[str, int]] = {}  # subject -> version name -> number, live versions only
    for raw in raw_versions:
        subject, cid = str(raw["artifactId"]), int(raw["contentId"])
        kind = types.get(subject, "AVRO")
        deleted = str(raw.get("state")) == "DISABLED"
        number = int(raw["versionOrder"])
        out.inventory.versions.append(SchemaVersion(subject, number, cid, kind, texts[cid], refs[cid], deleted))
        if kind != "AVRO":
            out.contents[cid]["schemaType"] = kind
        if not deleted:
            live.setdefault(subject, {})[str(raw["version"])] = number
    for subject, order in branches.items():
        alive = [live[subject][v] for v in order if v in live.get(subject, {})]
        if alive:
            out.latest[subject] = alive[-1]
    out.inventory.versions.sort(key=lambda v: v.key)
    return out


def read_export(client: RegistryClient) -> Export | None:
    """``client``'s whole registry with its global settings when it is Apicurio and exports to these credentials
    (:func:`apicurio_version`), else None: the caller reads it through the Confluent API."""
    if apicurio_version(client) is None:
        return None
    try:
        exp = parse_export(client.url, fetch_export(client))
    except ExportRefused:
        return None
    glob = client.get_or_none("/config") or {}
    exp.inventory.compatibility = glob.get("compatibilityLevel") or glob.get("compatibility")
    exp.inventory.mode = (client.get_or_none("/mode") or {}).get("mode")
    return exp
