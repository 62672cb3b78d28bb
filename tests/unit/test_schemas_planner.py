"""The schema copy's pure parts: the plan from two inventories, references-first order, canonical text, the
Apicurio import archive, registry URL checks and the schema_registry section."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.schemas.apicurio_import import build_archive
from msk_migrate.schemas.canonical import canonical_text
from msk_migrate.schemas.client import check_registry_url
from msk_migrate.schemas.model import Inventory, Reference, SchemaVersion
from msk_migrate.schemas.planner import plan_copy, references_first


def v(subject: str, version: int, schema_id: int, text: str = '{"type":"string"}', refs: tuple[Reference, ...] = (),
      deleted: bool = False, schema_type: str = "AVRO") -> SchemaVersion:
    return SchemaVersion(subject, version, schema_id, schema_type, text, refs, deleted)


def inv(*versions: SchemaVersion, **compat: str) -> Inventory:
    return Inventory(url="http://r", versions=list(versions), subject_compatibility=dict(compat))


def test_versions_the_target_lacks_are_to_copy_and_identical_ones_are_present() -> None:
    a1, a2 = v("a", 1, 1), v("a", 2, 5, '{"type":"int"}')
    plan = plan_copy(inv(a1, a2), inv(a1), {1: {"schema": '"string"'}, 5: None})
    assert plan.to_copy == [a2] and plan.present == [a1] and not plan.conflicts and not plan.in_sync


def test_an_id_taken_on_the_target_by_another_schema_is_a_conflict_not_a_copy() -> None:
    plan = plan_copy(inv(v("a", 1, 7)), inv(), {7: {"schema": '{"type":"long"}'}})
    assert not plan.to_copy and [c.id for c in plan.conflicts] == [7] and "taken" in plan.conflicts[0].reason


def test_an_id_holding_the_same_schema_on_the_target_is_no_conflict() -> None:
    """The same schema under the same id in another subject: the copy adds the subject, the id is shared."""
    plan = plan_copy(inv(v("b", 1, 7)), inv(), {7: {"schema": '"string"'}})
    assert [x.key for x in plan.to_copy] == [("b", 1)] and not plan.conflicts


def test_a_subject_version_held_under_another_id_or_schema_on_the_target_is_a_conflict() -> None:
    plan = plan_copy(inv(v("a", 1, 3), v("b", 1, 4)), inv(v("a", 1, 9), v("b", 1, 4, '{"type":"int"}')), {3: None, 4: None})
    reasons = {c.subject: c.reason for c in plan.conflicts}
    assert "under id 9" in reasons["a"] and "different schema" in reasons["b"] and not plan.to_copy


def test_references_come_before_the_schemas_that_use_them_whatever_their_ids() -> None:
    base = v("base", 1, 20)
    user = v("user", 1, 3, refs=(Reference("Base", "base", 1),))
    other = v("other", 1, 1)
    assert [x.subject for x in references_first([user, other, base])] == ["other", "base", "user"]


def test_compatibility_set_on_a_source_subject_is_copied_when_the_target_differs() -> None:
    plan = plan_copy(inv(v("a", 1, 1), a="FULL"), inv(v("a", 1, 1), a="BACKWARD"), {1: {"schema": '"string"'}})
    assert plan.compatibility == {"a": "FULL"} and not plan.to_copy


def test_an_in_sync_plan_has_nothing_to_do() -> None:
    a = v("a", 1, 1)
    assert plan_copy(inv(a), inv(a), {1: {"schema": '"string"'}}).in_sync


@pytest.mark.parametrize(("kind", "a", "b", "same"), [
    ("AVRO", '{"type":"string"}', '"string"', True),
    ("AVRO", '{"type": "record", "name": "R", "fields": []}', '{"fields":[],"name":"R","type":"record"}', True),
    ("AVRO", '{"type":"int"}', '{"type":"long"}', False),
    ("PROTOBUF", 'syntax = "proto3";\n\nmessage P { int32 x = 1; } // c\n', 'syntax = "proto3";\nmessage P { int32 x = 1; }', True),
    ("PROTOBUF", "message P { int32 x = 1; }", "message P { int64 x = 1; }", False),
])
def test_canonical_text_ignores_formatting_but_not_meaning(kind: str, a: str, b: str, same: bool) -> None:
    assert (canonical_text(kind, a) == canonical_text(kind, b)) is same


def test_the_import_archive_keeps_ids_as_content_ids_and_marks_soft_deleted_versions_disabled() -> None:
    ref = Reference("A", "a", 1)
    versions = [v("a", 1, 11, '{"type":"int"}'), v("b", 1, 40, '{"type":"record","name":"B","fields":[]}', (ref,), deleted=True)]
    appended = [v("c", 3, 57, '{"type":"long"}')]
    archive = zipfile.ZipFile(io.BytesIO(build_archive(versions, 100, 0, appended)))
    names = archive.namelist()
    contents = {json.loads(archive.read(n))["contentId"]: json.loads(archive.read(n)) for n in names if n.endswith(".Content.json")}
    assert set(contents) == {11, 40, 57}
    refs = contents[40]["serializedReferences"]
    data = versions[1].schema.encode()
    assert contents[40]["contentHash"] == hashlib.sha256(data + refs.encode()).hexdigest()
    assert json.loads(refs) == [{"groupId": None, "artifactId": "a", "version": "1", "name": "A"}]
    b1 = json.loads(archive.read("groups/default/artifacts/b/versions/1.ArtifactVersion.json"))
    assert (b1["contentId"], b1["state"], b1["globalId"]) == (40, "DISABLED", 101)
    # a subject the target has gets its content only: no artifact, version or branch entry
    assert not [n for n in names if "/artifacts/c/" in n]


@pytest.mark.parametrize("url", ["registry.example:8081", "ftp://r.example", "http://", "https://u:p@r.example"])
def test_a_registry_url_without_scheme_host_or_with_credentials_is_refused(url: str) -> None:
    with pytest.raises(UsageError) as err:
        check_registry_url(url, "--target-registry")
    assert err.value.field == "--target-registry"


def test_the_schema_registry_section_is_read_from_a_flow_file(tmp_path: Path) -> None:
    from msk_migrate.config.schema_registry import registry_section

    f = tmp_path / "flow.yaml"
    f.write_text("schema_registry:\n  source: http://s:8081\n  target: https://t/apis/ccompat/v7\n")
    assert registry_section(None, f).target == "https://t/apis/ccompat/v7"
    f.write_text("source: {}\n")
    with pytest.raises(UsageError, match="no schema_registry section"):
        registry_section(None, f)
