"""The archive Apicurio Registry's ``POST /apis/registry/v3/admin/import`` reads (the format of its own
``/admin/export``, export version 3.0), built from Confluent-API versions so that ids are kept.

Confluent's schema id is Apicurio's ``contentId`` (its ccompat API without legacy id mode): one content
entry per id, with that contentId; one artifact per subject (group ``default``), one artifact version per
subject version with a fresh ``globalId`` (above the target's highest) and ``state`` DISABLED for a
soft-deleted version. The content hash is computed as Apicurio does (SHA-256 of the text followed by
its serialized references); the canonical hash is left null with the artifact type set, which makes the
importer compute it.

Invariant: the archive holds only what it is given; it never names a subject the target already has (an
import cannot add to that subject's ``latest`` branch: those versions go through the Confluent API after the
archive put their contents, and ids, in place).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Sequence
from typing import Any

from .model import SchemaVersion

CONTENT_TYPES = {"AVRO": "application/json", "JSON": "application/json", "PROTOBUF": "application/x-protobuf"}


def _content(v: SchemaVersion) -> tuple[dict[str, Any], bytes]:
    data = v.schema.encode()
    refs = [{"groupId": None, "artifactId": r.subject, "version": str(r.version), "name": r.name} for r in v.references]
    serialized = json.dumps(refs, separators=(",", ":")) if refs else None
    # the content hash as Apicurio computes it (text, then its serialized references): a later registration
    # of the same schema through its Confluent API finds this content and its id
    meta = {"contentId": v.id, "canonicalHash": None, "contentHash": hashlib.sha256(data + (serialized or "").encode()).hexdigest(),
            "artifactType": v.schema_type, "contentType": CONTENT_TYPES.get(v.schema_type, "application/json"),
            "serializedReferences": serialized}
    return meta, data


def build_archive(versions: list[SchemaVersion], first_global_id: int, now_ms: int, contents_only: Sequence[SchemaVersion] = (),
                  system_version: str = "3.3.3") -> bytes:
    """The import archive of ``versions`` (subjects new to the target; in the order given, references first),
    globalIds from ``first_global_id``, plus the contents alone of ``contents_only`` (versions of subjects the
    target has: the import cannot append to an existing subject's ``latest`` branch, so those are registered
    through the Confluent API afterwards, which finds the content and its id)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.Manifest.json", json.dumps({
            "systemVersion": system_version, "systemName": "msk-migrate", "systemDescription": "schemas copy",
            "exportVersion": "3.0", "exportedOn": now_ms, "exportedBy": "msk-migrate"}))
        seen_ids: set[int] = set()
        for v in [*versions, *contents_only]:
            if v.id in seen_ids:
                continue
            seen_ids.add(v.id)
            meta, data = _content(v)
            zf.writestr(f"content/{meta['contentHash']}-{v.id}.Content.json", json.dumps(meta))
            zf.writestr(f"content/{meta['contentHash']}-{v.id}.Content.data", data)
        new_subjects: dict[str, list[SchemaVersion]] = {}
        for v in versions:
            new_subjects.setdefault(v.subject, []).append(v)
        for subject, vs in new_subjects.items():
            zf.writestr(f"groups/default/artifacts/{subject}/MetaData.Artifact.json", json.dumps({
                "groupId": None, "artifactId": subject, "artifactType": vs[0].schema_type, "name": None, "description": None,
                "labels": None, "owner": "", "createdOn": now_ms, "modifiedBy": "", "modifiedOn": now_ms}))
        for i, v in enumerate(versions):
            zf.writestr(f"groups/default/artifacts/{v.subject}/versions/{v.version}.ArtifactVersion.json", json.dumps({
                "globalId": first_global_id + i, "groupId": None, "artifactId": v.subject, "version": str(v.version),
                "versionOrder": v.version, "state": "DISABLED" if v.deleted else "ENABLED", "name": None, "description": None,
                "owner": "", "labels": None, "createdOn": now_ms, "modifiedBy": "", "modifiedOn": now_ms, "contentId": v.id}))
        for subject, vs in new_subjects.items():
            zf.writestr(f"groups/default/artifacts/{subject}/branches/latest.Branch.json", json.dumps({
                "groupId": None, "artifactId": subject, "branchId": "latest", "description": None, "systemDefined": True,
                "owner": "", "createdOn": now_ms, "modifiedBy": "", "modifiedOn": now_ms,
                "versions": [str(v.version) for v in sorted(vs, key=lambda x: x.version)]}))
    return buf.getvalue()
