"""requirements.lock pins every package with the sha256 of its files, so setup and the operator image install
with ``--require-hashes`` (issue 37's supply-chain item)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+) \\$")
HASH = re.compile(r"^    --hash=sha256:[0-9a-f]{64}( \\)?$")

pytestmark = pytest.mark.unit


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        if m:
            current = canonical(m["name"])
            assert current not in out, f"{current} pinned twice"
            out[current] = []
            continue
        assert current and HASH.match(line), f"requirements.lock: not a pin or a hash line: {line!r}"
        out[current].append(line)
    return out


def test_every_pin_in_the_lock_carries_the_sha256_of_its_files() -> None:
    found = pins()
    assert len(found) > 50
    assert not [name for name, hashes in found.items() if not hashes]
    # The last hash line of a pin ends the requirement (no dangling continuation into the next pin).
    for name, hashes in found.items():
        assert not hashes[-1].endswith("\\"), name


def test_every_direct_dependency_of_the_project_is_pinned_in_the_lock() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"]) + [d for extra in project.get("optional-dependencies", {}).values() for d in extra]
    names = {canonical(re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0]) for d in declared}
    # an extra naming another of the project's own (dev -> msk-migrate[rehearsal]) is the project, not a dependency
    assert names - set(pins()) - {canonical(project["name"])} == set()
