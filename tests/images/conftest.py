"""Fixtures for the image tests: moto's ECR server, a throw-away git checkout of the image inputs, and
a RECORDING docker on PATH standing in for the engine path (`--builder docker`, which needs a Docker
daemon this machine does not have). The buildah path builds and pushes for real: tests/images/test_buildah_images.py."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.images.support import IMAGES, REGION, REPO, copy_image_inputs, git


@pytest.fixture(scope="session")
def moto_url():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server._server.server_address[1]  # port 0 -> the OS picked a free one
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def ecr(moto_url):
    """A fresh moto ECR with the three repositories `cdktf deploy migration-dev` creates (immutable tags,
    as infra/mskinfra/ecr_repositories.py sets them; the recording docker enforces that on push)."""
    import boto3  # here, not at the top: the unit tests of tests/images/ never pay boto3's import
    import requests

    requests.post(f"{moto_url}/moto-api/reset", timeout=10)
    client = boto3.client("ecr", region_name=REGION, endpoint_url=moto_url,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    for image in IMAGES:
        client.create_repository(repositoryName=f"msk-migrate-dev-{image}", imageTagMutability="IMMUTABLE")
    return client


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A clean git checkout holding the image inputs (the shared working tree is always dirty)."""
    root = tmp_path / "checkout"
    root.mkdir()
    copy_image_inputs(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "images")
    return root


@pytest.fixture
def fake_docker_bin(tmp_path) -> Path:
    """A bin dir whose `docker` is the recording stand-in (tests/images/fake_docker.py)."""
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    script = bindir / "docker"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).with_name("fake_docker.py")}" "$@"\n')
    script.chmod(0o755)
    return bindir


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    calls: list[dict]

    def docker(self, *prefix: str) -> list[list[str]]:
        """argv of the recorded docker calls starting with ``prefix``."""
        return [c["argv"] for c in self.calls if c["argv"][: len(prefix)] == list(prefix)]


@pytest.fixture
def build(tmp_path, checkout, fake_docker_bin, moto_url):
    """Runs ./build_images.py (or `msk-migrate build-images`) as a user would, against moto ECR and the
    recording docker. ``env`` values of None remove a variable."""
    log = tmp_path / "docker-calls.jsonl"

    def run(*args: str, root: Path | None = None, path: str | None = None, env: dict[str, str | None] | None = None,
            via_msk_migrate: bool = False) -> Run:
        root = root or checkout
        full_env: dict[str, str | None] = {
            "PATH": path if path is not None else f"{fake_docker_bin}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "MSK_MIGRATE_ROOT": str(root),
            "MSK_MIGRATE_LOCAL_DIR": str(root / ".local"),
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
            "AWS_ENDPOINT_URL_ECR": moto_url,
            "FAKE_DOCKER_LOG": str(log),
            "MSK_MIGRATE_NO_REEXEC": "1",
            **(env or {}),
        }
        entry = [sys.executable, "-m", "msk_migrate.commands", "build-images"] if via_msk_migrate else [sys.executable, str(REPO / "build_images.py")]
        if "--builder" not in args:
            args = (*args, "--builder", "docker")  # the recording docker stands in for the engine path
        proc = subprocess.run([*entry, *args], capture_output=True, text=True,
                              env={k: v for k, v in full_env.items() if v is not None}, timeout=120)
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        log.unlink(missing_ok=True)
        return Run(proc.returncode, proc.stdout, proc.stderr, calls)

    return run
