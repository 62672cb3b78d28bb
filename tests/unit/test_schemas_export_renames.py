"""The pure parts of issue 45, parts 4-5: an Apicurio export read as the Confluent API would answer, the
version numbers an Apicurio target cannot keep, and the subjects a topic rename moves."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.schemas.apicurio_import import build_archive
from msk_migrate.schemas.client import RegistryClient
from msk_migrate.schemas.export import parse_export
from msk_migrate.schemas.model import Inventory, Reference, SchemaVersion
from msk_migrate.schemas.planner import plan_copy
from msk_migrate.schemas.renames import rename, subject_map
from msk_migrate.schemas.writers import ApicurioImport, ConfluentImportMode

A = '{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}'


def v(subject: str, version: int, schema_id: int, text: str = A, refs: tuple[Reference, ...] = (), deleted: bool = False) -> SchemaVersion:
    return SchemaVersion(subject, version, schema_id, "AVRO", text, refs, deleted)


def test_an_export_reads_back_ids_skipped_versions_soft_deletes_references_and_latest() -> None:
    """The archive format is Apicurio's export format: what we import is what an export of it says."""
    ref = Reference("A", "a-value", 1)
    versions = [v("a-value", 1, 1), v("a-value", 3, 3, '"string"'), v("a-value", 4, 8, '"int"', deleted=True),
                v("b-value", 1, 5, '{"type":"record","name":"B","fields":[{"name":"a","type":"A"}]}', (ref,))]
    exp = parse_export("http://r", build_archive(versions, 1, 0))
    assert [(x.subject, x.version, x.id, x.deleted, x.references) for x in exp.inventory.versions] == [
        (x.subject, x.version, x.id, x.deleted, x.references) for x in versions]
    assert [x.identity() for x in exp.inventory.versions] == [x.identity() for x in versions]
    assert exp.latest == {"a-value": 3, "b-value": 1}  # version 4 is soft-deleted
    assert exp.contents[5]["references"] == [ref.to_api()] and set(exp.contents) == {1, 3, 5, 8}


def test_an_export_numbers_versions_by_their_order_as_the_confluent_api_does() -> None:
    """Apicurio's Confluent API answers a version's versionOrder: a version named "7" with order 6 is version 6."""
    buf = io.BytesIO()
    base = "groups/default/artifacts/d-value/"
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("content/h-16.Content.json", json.dumps({"contentId": 16, "serializedReferences": None}))
        zf.writestr("content/h-16.Content.data", '"string"')
        zf.writestr(base + "MetaData.Artifact.json", json.dumps({"artifactType": "AVRO"}))
        zf.writestr(base + "versions/7.ArtifactVersion.json", json.dumps(
            {"artifactId": "d-value", "version": "7", "versionOrder": 6, "state": "ENABLED", "contentId": 16}))
        zf.writestr(base + "branches/latest.Branch.json", json.dumps({"versions": ["7"]}))
        zf.writestr(base + "rules/COMPATIBILITY.ArtifactRule.json", json.dumps({"configuration": "FULL"}))
        zf.writestr("groups/other/artifacts/x/MetaData.Artifact.json", json.dumps({"artifactType": "AVRO"}))
    exp = parse_export("http://r", buf.getvalue())
    assert [x.key for x in exp.inventory.versions] == [("d-value", 6)] and exp.latest == {"d-value": 6}
    assert exp.inventory.subject_compatibility == {"d-value": "FULL"}


def test_apicurio_keeps_skipped_numbers_of_a_new_subject_and_refuses_them_when_appending() -> None:
    writer = ApicurioImport(RegistryClient("target", "http://t", "--target-registry"), "3.3.3")
    new = [v("s-value", 1, 1), v("s-value", 3, 3)]
    assert writer.unkeepable(new, {}) == []  # the archive sets the numbers
    appended = [v("s-value", 2, 2), v("s-value", 3, 4)]
    assert writer.unkeepable(appended, {"s-value": [1]}) == []
    refused = writer.unkeepable([v("s-value", 3, 3)], {"s-value": [1]})
    assert [(x.key, "would number it 2" in why) for x, why in refused] == [(("s-value", 3), True)]
    assert ConfluentImportMode(RegistryClient("target", "http://t", "--target-registry")).unkeepable([v("s-value", 3, 3)], {"s-value": [1]}) == []


def test_a_rename_moves_key_and_value_subjects_and_the_references_to_them() -> None:
    subjects = subject_map({"orders": "shop.orders"})
    assert subjects == {"orders-key": "shop.orders-key", "orders-value": "shop.orders-value"}
    assert subject_map({"orders": "shop.orders"}, rollback=True)["shop.orders-value"] == "orders-value"
    ref = Reference("A", "orders-value", 1)
    inv = Inventory("s", [v("orders-value", 1, 1), v("orders-valueX", 1, 2), v("other-value", 1, 3, refs=(ref,))],
                    subject_compatibility={"orders-value": "FULL"})
    out = rename(inv, subjects)
    assert [(x.subject, x.id, x.origin_subject) for x in out.versions] == [
        ("shop.orders-value", 1, "orders-value"), ("orders-valueX", 2, None), ("other-value", 3, None)]
    assert out.versions[2].references == (Reference("A", "shop.orders-value", 1),)
    assert out.subject_compatibility == {"shop.orders-value": "FULL"}
    plan = plan_copy(out, Inventory("t", [v("shop.orders-value", 1, 1)]), {1: {"schema": A}, 2: None, 3: None})
    assert [x.key for x in plan.present] == [("shop.orders-value", 1)] and plan.to_copy[0].to_dict().get("origin_subject") is None


def test_two_subjects_landing_on_one_destination_subject_are_bad_input() -> None:
    inv = Inventory("s", [v("orders-value", 1, 1), v("shop.orders-value", 1, 2)])
    with pytest.raises(UsageError, match=r"migration\.topic_renames"):
        rename(inv, subject_map({"orders": "shop.orders"}))
