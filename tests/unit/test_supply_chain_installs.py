"""Every install the project runs is checked against recorded hashes (issue 42, "Supply chain, the rest"):

- pip and the build backend (requirements-build.lock, the versions pyproject.toml's [build-system] names) are
  installed first, hash-checked, into every venv the project makes and into the operator image; every later
  ``pip install`` builds with ``--no-build-isolation`` (no setuptools/wheel downloaded unchecked into an
  isolated build environment) and, unless it installs the project's own source, with ``--require-hashes``;
- checkov's and the AWS CLI's own locks carry the sha256 of every file;
- the cdktf CLI comes from package-lock.json (sha512 integrity for every package) through ``npm ci``;
- Terraform's provider lock file is committed and nothing runs ``terraform init -upgrade``.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+) \\$")
HASH = re.compile(r"^    --hash=sha256:[0-9a-f]{64}( \\)?$")
#: The files that run pip: setup scripts, Dockerfiles, the Makefile.
INSTALLERS = sorted([*ROOT.glob("scripts/*.sh"), *ROOT.glob("scripts/lib/*.sh"), *ROOT.glob("images/*/Dockerfile"), ROOT / "Makefile"])
#: A ``pip install`` of the project's own source tree: no single file to hash, built by the hashed backend.
OWN_SOURCE = re.compile(r"(^|\s)(-e\s+'?\.(\[[a-z,]+\])?'?|/src)(\s|$)")

pytestmark = pytest.mark.unit


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def hashed_pins(path: Path) -> dict[str, tuple[str, list[str]]]:
    """canonical name -> (version, hash lines); any other non-comment line fails the test."""
    out: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        if m:
            current = canonical(m["name"])
            assert current not in out, f"{path.name}: {current} pinned twice"
            out[current] = (m["version"], [])
            continue
        assert current and HASH.match(line), f"{path.name}: not a pin or a hash line: {line!r}"
        out[current][1].append(line)
    for name, (_, hashes) in out.items():
        assert hashes, f"{path.name}: {name} has no --hash"
        assert not hashes[-1].endswith("\\"), f"{path.name}: {name}'s last hash continues into the next pin"
    return out


def pip_installs(path: Path) -> list[str]:
    """Every ``pip install`` command of a shell script or Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    commands = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for part in re.split(r"&&|\|\||;", line):
            if re.search(r"\bpip3?\"?\s+install\b", part):
                commands.append(" ".join(part.split()))
    return commands


def test_the_build_lock_pins_pip_and_exactly_the_build_backend_pyproject_names_with_hashes() -> None:
    pins = hashed_pins(ROOT / "requirements-build.lock")
    assert set(pins) == {"pip", "setuptools", "wheel"}
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    declared = {canonical(r.split("==")[0]): r.split("==")[1] for r in requires}
    assert all("==" in r for r in requires), requires
    assert declared == {n: v for n, (v, _) in pins.items() if n in declared} and set(declared) == {"setuptools", "wheel"}


@pytest.mark.parametrize("lock", ["scripts/checkov.lock", "scripts/awscli.lock"])
def test_the_tool_locks_carry_the_sha256_of_every_pin(lock: str) -> None:
    pins = hashed_pins(ROOT / lock)
    tool = "checkov" if "checkov" in lock else "awscli"
    assert tool in pins and len(pins) > 5


def test_every_pip_install_is_hash_checked_and_builds_with_the_hashed_backend() -> None:
    seen = 0
    for path in INSTALLERS:
        for cmd in pip_installs(path):
            seen += 1
            where = f"{path.relative_to(ROOT)}: {cmd}"
            assert "--no-build-isolation" in cmd, f"builds in an isolated env with an unchecked backend: {where}"
            if OWN_SOURCE.search(cmd):
                assert "--no-deps" in cmd, f"the project's own install must take nothing from the index: {where}"
            else:
                assert "--require-hashes" in cmd, f"installs without hashes: {where}"
                assert re.search(r"(^|\s)-r\s+\S+", cmd), f"installs something other than a lock: {where}"
                assert not re.search(r"\s[A-Za-z0-9_.-]+==", cmd), f"a pin on the command line, outside a lock: {where}"
    assert seen >= 9, "the installers were not found"


@pytest.mark.parametrize("path", ["scripts/setup.sh", "scripts/setup-checkov.sh", "scripts/setup-deploy-tools.sh",
                                  "images/operator/Dockerfile"])
def test_every_venv_gets_the_hashed_installer_and_backend_before_anything_else(path: str) -> None:
    cmds = pip_installs(ROOT / path)
    assert cmds and "-r requirements-build.lock" in cmds[0], cmds
    assert "--only-binary :all:" in cmds[0], "the backend itself must not need a backend to install"


def test_the_images_metadata_pass_builds_with_the_hashed_backend_too() -> None:
    """lock_subset.py asks pip what the operator CLI needs (``--dry-run``): that builds the project's metadata."""
    text = (ROOT / "images" / "operator" / "lock_subset.py").read_text()
    assert '"--dry-run"' in text and '"--no-build-isolation"' in text
    dockerfile = (ROOT / "images" / "operator" / "Dockerfile").read_text()
    assert "requirements-build.lock" in dockerfile.split("COPY python/")[0], "the build lock is in the build stage"


def test_the_build_lock_enters_the_image_build_context() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert "!requirements-build.lock" in lines


def test_setup_reinstalls_when_a_lock_changes() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert re.search(r"PY_HASH=.*requirements-build\.lock.*requirements\.lock", setup)
    for script, lock in (("setup-checkov.sh", "scripts/checkov.lock"), ("setup-deploy-tools.sh", "scripts/awscli.lock")):
        text = (ROOT / "scripts" / script).read_text()
        assert re.search(rf"HASH=.*requirements-build\.lock {re.escape(lock)}", text), script


def test_the_cdktf_cli_installs_from_the_lockfile_with_an_integrity_hash_for_every_package() -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["lockfileVersion"] >= 2
    packages = {k: v for k, v in lock["packages"].items() if k}
    # A package bundled inside another's tarball (inBundle) is covered by that tarball's integrity.
    unchecked = [k for k, v in packages.items() if not v.get("inBundle") and not v.get("link")
                 and not str(v.get("integrity", "")).startswith("sha512-")]
    assert not unchecked and len(packages) > 100, unchecked[:5]
    setup = (ROOT / "scripts" / "setup-cdktf.sh").read_text()
    assert re.search(r"^npm ci\b", setup, re.M)
    assert not re.search(r"\bnpm (install|i|update)\b", setup)


def test_the_provider_lock_file_is_committed_and_pins_the_provider_the_stacks_require() -> None:
    lock = ROOT / "infra" / ".terraform.lock.hcl"
    text = lock.read_text()
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", "infra/.terraform.lock.hcl"],
                             capture_output=True, text=True)
    assert tracked.returncode == 0, "infra/.terraform.lock.hcl is not committed"
    blocks = re.findall(r'^provider "([^"]+)" \{(.*?)^\}', text, re.M | re.S)
    assert [name for name, _ in blocks] == ["registry.terraform.io/hashicorp/aws"]
    body = blocks[0][1]
    assert re.search(r'^\s+version\s+= "5\.100\.0"$', body, re.M)
    assert re.search(r'^\s+constraints\s+= "5\.100\.0"$', body, re.M)
    assert re.findall(r'"h1:[A-Za-z0-9+/]{43}="', body), "no h1: checksum"
    # The version the stacks declare (infra_helpers.AWS_PROVIDER_VERSION, the provider bindings' own pin).
    helpers = (ROOT / "tests" / "infra" / "infra_helpers.py").read_text()
    assert 'AWS_PROVIDER_VERSION = "5.100.0"' in helpers


def test_nothing_runs_terraform_init_with_upgrade() -> None:
    """With the lock file, ``init`` keeps the locked version and checks its checksum; ``-upgrade`` would let it
    pick another version and rewrite the lock."""
    found = []
    for sub in ("scripts", "infra", "python", "tests", "docs", "Makefile", "README.md", "cdktf.json", "build_images.py"):
        base = ROOT / sub
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file() and p.suffix in (".py", ".sh", ".md", ".json", "")]
        for f in files:
            if f.resolve() == Path(__file__).resolve() or "__pycache__" in f.parts:
                continue
            text = f.read_text(errors="replace")
            if f.suffix == ".md":  # what a reader would run: the fenced code blocks, not the prose about them
                text = "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S))
            if re.search(r"""init\b[^\n]{0,80}-upgrade|["']-upgrade["']""", text):
                found.append(str(f.relative_to(ROOT)))
    assert not found, found
