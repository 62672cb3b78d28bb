"""How the target keeps ids, chosen by probing it, and the writing itself.

- **Apicurio** (its ``/apis/registry/v3/system/info`` names Apicurio): the import archive
  (:mod:`.apicurio_import`) posted to ``/apis/registry/v3/admin/import?requireEmptyRegistry=false``. Its
  Confluent API would ignore a requested id, so it is never used to write schemas there.
- **Confluent IMPORT mode** (Confluent Schema Registry, Karapace, Redpanda: ``GET /mode`` answers): each
  subject put in IMPORT mode, each version registered with its id and version, the subject's mode put back.
- Neither: refused before anything is written (:class:`~msk_migrate.errors.UsageError`, exit 2).

Whatever the route says, the result is read back (:func:`check_written`): Apicurio's import answers 204 even
when an entry was refused.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote

from ..errors import UsageError
from ..outcome import quiet
from .apicurio_import import build_archive
from .client import NotFound, RegistryClient
from .export import apicurio_version
from .model import SchemaVersion
from .planner import Plan
from .reader import subject_path


class Writer(Protocol):
    route: str

    def unkeepable(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> list[tuple[SchemaVersion, str]]:
        """The versions this route cannot write under their own number, each with the reason (checked before any write)."""
        ...

    def write(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> None: ...


#: Versions per import archive: an archive is imported in one transaction, and each costs a request and a
#: commit, so an estate of a few thousand versions goes in one; a larger one in batches that keep each
#: request well inside :data:`IMPORT_TIMEOUT_S` (references-first order holds across batches).
BATCH = 5000
IMPORT_TIMEOUT_S = 300.0


@dataclass
class ApicurioImport:
    client: RegistryClient
    system_version: str
    route: str = "apicurio-import"
    progress: Callable[[str], None] = field(default=quiet)

    def _next_global_id(self) -> int:
        found = self.client.get(self.client.root + "/apis/registry/v3/search/versions", absolute=True,
                                params={"limit": 1, "orderby": "globalId", "order": "desc"})
        versions = (found or {}).get("versions") or []
        return int(versions[0]["globalId"]) + 1 if versions else 1

    def unkeepable(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> list[tuple[SchemaVersion, str]]:
        """A subject new to the target takes any numbers (the archive sets them: 1, 3 stays 1, 3). Apicurio numbers
        a version added to a subject it has next after the highest it holds, so those must come in that order."""
        out = []
        after = {s: max(vs) for s, vs in existing.items() if vs}
        for v in versions:
            if v.subject in after:
                if v.version != after[v.subject] + 1:
                    out.append((v, f"Apicurio would number it {after[v.subject] + 1} (it numbers a version added to a subject "
                                   f"it holds next after the highest, {after[v.subject]})"))
                after[v.subject] = max(after[v.subject], v.version)
        return out

    def write(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> None:
        if not versions:
            return
        new = [v for v in versions if v.subject not in existing]
        appended = [v for v in versions if v.subject in existing]
        # all of a subject's versions go in one archive (its artifact and latest branch are written once),
        # subjects in the order their first version comes (references first)
        by_subject: dict[str, list[SchemaVersion]] = {}
        for v in new:
            by_subject.setdefault(v.subject, []).append(v)
        batches: list[list[SchemaVersion]] = [[]]
        for subject_versions in by_subject.values():
            if batches[-1] and len(batches[-1]) + len(subject_versions) > BATCH:
                batches.append([])
            batches[-1].extend(subject_versions)
        done = 0
        for i, batch in enumerate(batches):
            contents = appended if i == len(batches) - 1 else []
            archive = build_archive(batch, self._next_global_id(), int(time.time() * 1000), contents, self.system_version)
            self.client.request("POST", self.client.root + "/apis/registry/v3/admin/import", absolute=True, raw=archive,
                                content_type="application/zip", params={"requireEmptyRegistry": "false"},
                                timeout=IMPORT_TIMEOUT_S)
            done += len(batch)
            self.progress(f"imported {done}/{len(new)} version(s) into the {self.client.role} registry")
        for v in appended:  # the contents (with their ids) are in place: registering finds them (numbers: unkeepable)
            register_keeping_id(self.client, v)


@dataclass
class ConfluentImportMode:
    client: RegistryClient
    route: str = "confluent-import-mode"

    def unkeepable(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> list[tuple[SchemaVersion, str]]:
        """IMPORT mode registers each version under the number given: none."""
        return []

    def write(self, versions: list[SchemaVersion], existing: dict[str, list[int]]) -> None:
        by_subject: dict[str, list[SchemaVersion]] = {}
        for v in versions:
            by_subject.setdefault(v.subject, []).append(v)
        # one subject at a time in IMPORT mode, in the references-first order of the first version of each
        for subject in dict.fromkeys(v.subject for v in versions):
            mode_path = "/mode/" + quote(subject, safe="")
            self.client.request("PUT", mode_path, {"mode": "IMPORT"}, params={"force": "true"})
            try:
                for v in by_subject[subject]:
                    register_keeping_id(self.client, v, {"id": v.id, "version": v.version})
            finally:
                with contextlib.suppress(NotFound):
                    self.client.request("DELETE", mode_path)


def register_keeping_id(client: RegistryClient, v: SchemaVersion, extra: dict[str, int] | None = None) -> None:
    """Register ``v`` through the Confluent API (``extra``: the id and version of IMPORT mode) and soft-delete
    it again when it is soft-deleted on the origin. An id other than ``v.id`` stops the copy (the read-back
    names every version not kept)."""
    body = {"schema": v.schema, "schemaType": v.schema_type, "references": [r.to_api() for r in v.references], **(extra or {})}
    got = client.request("POST", subject_path(v.subject) + "/versions", body)
    if int((got or {}).get("id", -1)) != v.id:
        raise RuntimeError(f"the {client.role} registry registered {v.subject} version {v.version} under id "
                           f"{(got or {}).get('id')} instead of {v.id}")
    if v.deleted:
        client.request("DELETE", f"{subject_path(v.subject)}/versions/{v.version}")


def choose_writer(client: RegistryClient, progress: Callable[[str], None] = quiet) -> Writer:
    """The route by which ``client``'s registry keeps ids; UsageError when it offers none."""
    version = apicurio_version(client)
    if version is not None:
        return ApicurioImport(client, version, progress=progress)
    try:
        mode = client.get("/mode")
    except (NotFound, RuntimeError):
        mode = None
    if isinstance(mode, dict) and "mode" in mode:
        return ConfluentImportMode(client)
    raise UsageError(client.option, f"the {client.role} registry {client.url} offers no way to keep schema ids "
                     "(neither Confluent IMPORT mode nor Apicurio's import API)",
                     "migrate to a registry that keeps ids (Confluent Schema Registry, Karapace, Redpanda, Apicurio); "
                     "AWS Glue Schema Registry cannot keep them")


def write_settings(client: RegistryClient, plan: Plan) -> None:
    """Compatibility per subject and global, as the plan says (through the Confluent API on every route)."""
    for subject, level in sorted(plan.compatibility.items()):
        client.request("PUT", "/config/" + quote(subject, safe=""), {"compatibility": level})
    if plan.global_compatibility:
        client.request("PUT", "/config", {"compatibility": plan.global_compatibility})


def unsupported_type(client: RegistryClient, versions: list[SchemaVersion]) -> None:
    """Refuse (UsageError, before anything is written) a copy of a schema type the destination does not hold:
    ``GET /schemas/types`` lists the types a Confluent-API registry accepts (Apicurio 3.3.3 answers AVRO, JSON and
    PROTOBUF); a registry without that endpoint (Confluent Schema Registry before 5.5) holds Avro only."""
    wanted = {v.schema_type.upper() for v in versions} - {"AVRO"}
    if not wanted:
        return
    try:
        answer = client.get("/schemas/types")
    except NotFound:
        answer = ["AVRO"]
    held = {str(t).upper() for t in answer} if isinstance(answer, list) else {"AVRO"}
    missing = sorted(wanted - held)
    if missing:
        v = next(v for v in versions if v.schema_type.upper() == missing[0])
        raise UsageError(client.option, f"the {client.role} registry {client.url} cannot keep {missing[0]} schemas (its "
                         f"/schemas/types lists {', '.join(sorted(held))}): {v.subject} version {v.version} (id {v.id}) "
                         "would be lost; nothing written",
                         f"enable {missing[0]} on that registry (Confluent Schema Registry 5.5+ with its provider, Karapace, "
                         f"Apicurio), or leave {v.subject} out with --subject")
