"""Issue 45, part 5, between two real Apicurio Registries: a source version number skipped (deleted
permanently) is copied as it is, or refused by name when Apicurio cannot keep it; a topic rename of the flow
(``migration.topic_renames``) moves its TopicNameStrategy subjects to the new name with the ids kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import requests

from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (fixture)
from tests.integration.test_schemas_copy import Pair, cli, doc, get, prefix, record, register  # noqa: F401 (fixture)


def drop_for_good(reg, subject: str, version: int) -> None:
    for params in ({}, {"permanent": "true"}):
        requests.delete(f"{reg.ccompat_url}/subjects/{subject}/versions/{version}", params=params, timeout=10).raise_for_status()


def test_a_skipped_version_is_copied_with_its_number(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    subject = f"{prefix}-gap-value"
    ids = [register(source, subject, record("G", *[f"f{i}" for i in range(n)])) for n in (1, 2, 3)]
    drop_for_good(source, subject, 2)
    copied = cli(registry_pair, "copy", "--subject", f"{prefix}-*", "--output", "json")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert get(target, f"/subjects/{subject}/versions") == [1, 3]
    assert get(target, f"/subjects/{subject}/versions/3")["id"] == ids[2]
    assert cli(registry_pair, "verify", "--subject", f"{prefix}-*").returncode == 0


def test_a_skipped_number_apicurio_cannot_keep_is_refused_by_name_and_nothing_is_written(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    subject = f"{prefix}-late-value"
    register(source, subject, record("L", "a"))
    assert cli(registry_pair, "copy", "--subject", f"{prefix}-*").returncode == 0
    register(source, subject, record("L", "a", "b"))
    register(source, subject, record("L", "a", "b", "c"))
    drop_for_good(source, subject, 2)
    try:
        planned = cli(registry_pair, "plan", "--subject", f"{prefix}-*", "--output", "json")
        assert planned.returncode == 2 and doc(planned)["verdict"] == "cannot-keep-versions", planned.stdout
        copied = cli(registry_pair, "copy", "--subject", f"{prefix}-*")
        assert copied.returncode == 2, copied.stdout + copied.stderr
        line = copied.stderr.strip().splitlines()
        assert len(line) == 1 and f"{subject} version 3" in line[0] and "cannot keep its version number" in line[0], copied.stderr
        assert get(target, f"/subjects/{subject}/versions") == [1]  # nothing written
    finally:  # the registries are the session's: a copy of the whole source elsewhere would meet this refusal
        for reg in registry_pair:
            for params in ({}, {"permanent": "true"}):
                requests.delete(f"{reg.ccompat_url}/subjects/{subject}", params=params, timeout=10)


def test_a_topic_rename_moves_its_subjects_to_the_new_name_with_ids_kept(registry_pair: Pair, prefix: str, tmp_path: Path) -> None:  # noqa: F811
    source, target = registry_pair
    old, new = f"{prefix}-orders", f"{prefix}-shop.orders"
    key_id = register(source, f"{old}-key", '"string"')
    value_id = register(source, f"{old}-value", record("O", "a"))
    other_id = register(source, f"{prefix}-other-value", record("X", "a"))
    flow = tmp_path / "flow.yaml"
    flow.write_text(f"schema_registry: {{source: {source.ccompat_url}, target: {target.ccompat_url}}}\n"
                    f"migration: {{topic_renames: {{{old}: {new}}}}}\n")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", *args, "--config", str(flow),
                               "--subject", f"{prefix}-*"], capture_output=True, text=True, timeout=300)

    copied = run("copy", "--output", "json")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert doc(copied)["renamed"] == {f"{old}-key": f"{new}-key", f"{old}-value": f"{new}-value"}
    assert get(target, f"/subjects/{new}-value/versions/1")["id"] == value_id
    assert get(target, f"/subjects/{new}-key/versions/1")["id"] == key_id
    assert get(target, f"/subjects/{prefix}-other-value/versions/1")["id"] == other_id
    assert get(target, f"/subjects/{old}-value/versions") == 404  # not under the old name
    verified = run("verify", "--output", "json")
    assert verified.returncode == 0 and doc(verified)["present"] == 3, verified.stdout
    # without the rename, verify compares under the old name and finds it missing
    assert cli(registry_pair, "verify", "--subject", f"{prefix}-*").returncode == 1


def test_one_export_says_what_the_confluent_api_says_subject_by_subject(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    """The fast read (one export) and the per-subject read agree on a real Apicurio: ids, numbers (a skipped one),
    soft-deleted versions, types, references and per-subject compatibility."""
    from msk_migrate.schemas.client import RegistryClient
    from msk_migrate.schemas.export import read_export
    from msk_migrate.schemas.reader import read_inventory

    source, _ = registry_pair
    a, b = f"{prefix}-a-value", f"{prefix}-b-value"
    for n in (1, 2, 3, 4):
        register(source, a, record("A", *[f"f{i}" for i in range(n)]))
    drop_for_good(source, a, 2)
    requests.delete(f"{source.ccompat_url}/subjects/{a}/versions/4", timeout=10).raise_for_status()  # soft
    register(source, b, '{"type":"record","name":"B","fields":[{"name":"x","type":"A"}]}',
             references=[{"name": "A", "subject": a, "version": 1}])
    register(source, f"{prefix}-p-value", 'syntax = "proto3";\nmessage P { int32 x = 1; }', "PROTOBUF")
    requests.put(f"{source.ccompat_url}/config/{b}", json={"compatibility": "FULL"}, timeout=10).raise_for_status()
    client = RegistryClient("source", source.ccompat_url, "--source-registry")
    subjects = [a, b, f"{prefix}-p-value"]
    slow = read_inventory(client, subjects)
    exp = read_export(client)
    assert exp is not None
    fast = [x for x in exp.inventory.versions if x.subject in subjects]
    assert [(x.key, x.id, x.deleted) for x in fast] == [((a, 1), fast[0].id, False), ((a, 3), fast[1].id, False),
                                                      ((a, 4), fast[2].id, True), ((b, 1), fast[3].id, False),
                                                      ((f"{prefix}-p-value", 1), fast[4].id, False)]
    # the texts may differ in form (the Confluent API re-serialises, the export has them as registered): the same schema
    assert [(x.key, x.id, x.deleted, x.identity()) for x in fast] == [
        (x.key, x.id, x.deleted, x.identity()) for x in sorted(slow.versions, key=lambda x: x.key)]
    # a subject without a rule: no setting in the export; Apicurio's Confluent API answers NONE for it
    assert {s: c for s, c in exp.inventory.subject_compatibility.items() if s in subjects} == {b: "FULL"}
    assert slow.subject_compatibility == {a: "NONE", b: "FULL", f"{prefix}-p-value": "NONE"}
