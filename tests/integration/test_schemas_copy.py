"""`msk-migrate schemas plan|copy|verify` between two real Apicurio Registries: ids and versions kept,
references, per-subject compatibility, soft-deleted versions, non-contiguous ids, idempotent re-runs, a
schema registered after the copy, and the refusals (conflicting id, filter matching nothing) that write nothing.

The registries are shared by the session; each test works on subjects of its own prefix (``--subject P-*``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import pytest
import requests

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.local.schema_registry import RegistryProcess
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (fixture)

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
Pair = tuple[RegistryProcess, RegistryProcess]


def cli(pair: Pair, *args: str) -> subprocess.CompletedProcess:
    source, target = pair
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", *args,
                           "--source-registry", source.ccompat_url, "--target-registry", target.ccompat_url],
                          capture_output=True, text=True, timeout=300)


def doc(proc: subprocess.CompletedProcess) -> dict[str, Any]:
    return json.loads(proc.stdout)


def register(reg: RegistryProcess, subject: str, schema: str, schema_type: str = "AVRO", references: list | None = None) -> int:
    body: dict[str, Any] = {"schema": schema, "schemaType": schema_type}
    if references:
        body["references"] = references
    resp = requests.post(f"{reg.ccompat_url}/subjects/{subject}/versions", json=body, headers=CT, timeout=10)
    resp.raise_for_status()
    return int(resp.json()["id"])


def record(name: str, *fields: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": f, "type": "int", "default": 0} for f in fields]})


def get(reg: RegistryProcess, path: str, **params: str) -> Any:
    resp = requests.get(reg.ccompat_url + path, params=params, timeout=10)
    return resp.json() if resp.status_code == 200 else resp.status_code


@pytest.fixture()
def prefix() -> str:
    return "t" + uuid.uuid4().hex[:8]


def _populate(source: RegistryProcess, p: str) -> dict[str, Any]:
    ids: dict[str, Any] = {}
    ids["a1"] = register(source, f"{p}-a", record(f"{p}A", "x"))
    gap = register(source, f"{p}-gap", record(f"{p}Gap", "g"))  # consumed, then hard-deleted: a hole in the ids
    requests.delete(f"{source.ccompat_url}/subjects/{p}-gap", timeout=10).raise_for_status()
    requests.delete(f"{source.ccompat_url}/subjects/{p}-gap", params={"permanent": "true"}, timeout=10).raise_for_status()
    ids["gap"] = gap
    ids["a2"] = register(source, f"{p}-a", record(f"{p}A", "x", "y"))
    ids["a3"] = register(source, f"{p}-a", record(f"{p}A", "x", "y", "z"))
    ids["b1"] = register(source, f"{p}-b", json.dumps({"type": "record", "name": f"{p}B", "fields": [{"name": "a", "type": f"{p}A"}]}),
                         references=[{"name": f"{p}A", "subject": f"{p}-a", "version": 1}])
    ids["p1"] = register(source, f"{p}-p", f'syntax = "proto3";\nmessage {p}P {{ int32 x = 1; }}\n', "PROTOBUF")
    requests.put(f"{source.ccompat_url}/config/{p}-a", json={"compatibility": "FULL"}, headers=CT, timeout=10).raise_for_status()
    requests.delete(f"{source.ccompat_url}/subjects/{p}-a/versions/2", timeout=10).raise_for_status()  # soft delete
    return ids


def test_copy_keeps_ids_versions_references_compatibility_and_soft_deleted_versions(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    p = prefix
    ids = _populate(source, p)
    assert ids["a2"] > ids["gap"] > ids["a1"]  # the source's ids are not contiguous

    planned = cli(registry_pair, "plan", "--subject", f"{p}-*", "--output", "json")
    assert planned.returncode == 0, planned.stderr
    assert doc(planned)["to_copy"] == 5 and doc(planned)["route"] == "apicurio-import"
    assert get(target, f"/subjects/{p}-a/versions") == 404  # plan writes nothing

    copied = cli(registry_pair, "copy", "--subject", f"{p}-*", "--output", "json")
    assert copied.returncode == 0, copied.stderr + copied.stdout
    out = doc(copied)
    assert out["copied"] == 5 and out["verdict"] == "copied"
    assert set(out["talked_to"]) >= {"source_registry", "target_registry"}

    for subject, version, key in [("a", 1, "a1"), ("a", 3, "a3"), ("b", 1, "b1"), ("p", 1, "p1")]:
        got = get(target, f"/subjects/{p}-{subject}/versions/{version}")
        assert got["id"] == ids[key], (subject, version, got)
        assert get(target, f"/schemas/ids/{ids[key]}")["schema"] == get(source, f"/schemas/ids/{ids[key]}")["schema"]
    assert get(target, f"/subjects/{p}-b/versions/1")["references"] == [{"name": f"{p}A", "subject": f"{p}-a", "version": 1}]
    assert get(target, f"/subjects/{p}-p/versions/1").get("schemaType") == "PROTOBUF"
    # the soft-deleted version is kept, soft-deleted, under its id
    assert get(target, f"/subjects/{p}-a/versions") == [1, 3]
    assert get(target, f"/subjects/{p}-a/versions", deleted="true") == [1, 2, 3]
    assert get(target, f"/subjects/{p}-a/versions/2", deleted="true")["id"] == ids["a2"]
    assert get(target, f"/config/{p}-a")["compatibilityLevel"] == "FULL"
    assert get(target, f"/schemas/ids/{ids['gap']}") == 404  # the hole stays a hole

    verified = cli(registry_pair, "verify", "--subject", f"{p}-*", "--output", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert doc(verified)["verdict"] == "in-sync"
    # plan, copy and verify print the one document shape of every command's --output json
    assert [json_shape_problems(doc(r)) for r in (planned, copied, verified)] == [[], [], []]

    again = cli(registry_pair, "copy", "--subject", f"{p}-*", "--output", "json")
    assert again.returncode == 0, again.stderr
    assert doc(again)["copied"] == 0 and doc(again)["present"] == 5


def test_a_schema_registered_on_the_source_after_the_copy_is_not_in_sync_until_copied(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    p = prefix
    register(source, f"{p}-late", record(f"{p}L", "x"))
    assert cli(registry_pair, "copy", "--subject", f"{p}-*", "--output", "json").returncode == 0
    new_id = register(source, f"{p}-late", record(f"{p}L", "x", "y"))

    stale = cli(registry_pair, "verify", "--subject", f"{p}-*", "--output", "json")
    assert stale.returncode == 1 and doc(stale)["verdict"] == "not-in-sync"
    assert [r for r in doc(stale)["rows"] if r["action"] == "copy"] == [
        {"subject": f"{p}-late", "version": 2, "id": new_id, "schema_type": "AVRO", "references": [], "deleted": False, "action": "copy"}]

    copied = cli(registry_pair, "copy", "--subject", f"{p}-*", "--output", "json")
    assert copied.returncode == 0 and doc(copied)["copied"] == 1, copied.stdout + copied.stderr
    assert get(target, f"/subjects/{p}-late/versions/2")["id"] == new_id
    assert get(target, f"/subjects/{p}-late/versions/latest")["version"] == 2
    assert cli(registry_pair, "verify", "--subject", f"{p}-*", "--output", "json").returncode == 0


def _align_next_ids(source: RegistryProcess, target: RegistryProcess, p: str) -> None:
    """Register throwaway schemas on the registry whose id sequence is behind until both hand out the same next id."""
    s = register(source, f"{p}-pad-s", record(f"{p}S0", "a"))
    t = register(target, f"{p}-pad-t", record(f"{p}T0", "a"))
    n = 1
    while s != t:
        if s < t:
            s = register(source, f"{p}-pad-s", record(f"{p}S{n}", "a"))
        else:
            t = register(target, f"{p}-pad-t", record(f"{p}T{n}", "a"))
        n += 1


def test_an_id_taken_on_the_target_by_another_schema_is_refused_and_nothing_is_written(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    p = prefix
    _align_next_ids(source, target, p)
    clash = register(source, f"{p}-src", record(f"{p}Src", "x"))
    other = register(target, f"{p}-tgt", record(f"{p}Tgt", "q"))
    assert clash == other
    register(source, f"{p}-fine", record(f"{p}Fine", "x"))  # copyable on its own: must not be written either

    refused = cli(registry_pair, "copy", "--subject", f"{p}-src", "--subject", f"{p}-fine")
    assert refused.returncode == 2
    line = refused.stderr.strip().splitlines()
    assert len(line) == 1 and f"id {clash}" in line[0] and "nothing written" in line[0], refused.stderr
    assert get(target, f"/subjects/{p}-fine/versions") == 404 and get(target, f"/subjects/{p}-src/versions") == 404


def test_a_subject_filter_matching_nothing_is_bad_input(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    proc = cli(registry_pair, "copy", "--subject", f"{prefix}-nothing-*")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--subject" in proc.stderr, proc.stderr


def test_copy_to_source_brings_back_schemas_registered_on_the_target(registry_pair: Pair, prefix: str) -> None:  # noqa: F811
    source, target = registry_pair
    p = prefix
    register(source, f"{p}-rb", record(f"{p}R", "x"))
    assert cli(registry_pair, "copy", "--subject", f"{p}-*").returncode == 0
    new_id = register(target, f"{p}-rb", record(f"{p}R", "x", "y"))
    back = cli(registry_pair, "copy", "--to", "source", "--subject", f"{p}-*", "--output", "json")
    assert back.returncode == 0 and doc(back)["copied"] == 1, back.stdout + back.stderr
    assert doc(back)["talked_to"]["direction"] == "target -> source"
    assert get(source, f"/subjects/{p}-rb/versions/2")["id"] == new_id
