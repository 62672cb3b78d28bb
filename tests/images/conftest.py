"""Fixtures for the image tests: moto's ECR server, a throw-away git checkout of the image inputs, and
a RECORDING docker on PATH standing in for the engine (nothing is really built or pushed)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
import requests

from tests.images.support import IMAGES, REGION, REPO, _git, copy_image_inputs
@pytest.fixture(scope="session")
def moto_url():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server._server.server_address  # port 0 -> the OS picked a free one
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def ecr(moto_url, monkeypatch):
    """A fresh moto ECR with the three repositories `cdktf deploy` would create for env dev."""
    requests.post(f"{moto_url}/moto-api/reset", timeout=10)
    client = boto3.client("ecr", region_name=REGION, endpoint_url=moto_url,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    for image in IMAGES:
        client.create_repository(repositoryName=f"msk-migrate-dev-{image}")
    return client


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A clean git checkout holding the image inputs (the real tree is shared and always dirty)."""
    root = tmp_path / "checkout"
    root.mkdir()
    copy_image_inputs(root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "images")
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
        return [c["argv"] for c in self.calls if c["argv"][: len(prefix)] == list(prefix)]


@pytest.fixture
def build(tmp_path, checkout, fake_docker_bin, moto_url):
    """Runs ./build_images.py as a user would, against moto ECR and the recording docker."""
    log = tmp_path / "docker-calls.jsonl"

    def run(*args: str, root: Path | None = None, path: str | None = None, env: dict[str, str] | None = None) -> Run:
        full_env = {
            "PATH": path if path is not None else f"{fake_docker_bin}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "MSK_MIGRATE_ROOT": str(root or checkout),
            "MSK_MIGRATE_LOCAL_DIR": str((root or checkout) / ".local"),
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
            "AWS_ENDPOINT_URL_ECR": moto_url,
            "FAKE_DOCKER_LOG": str(log),
            "COLUMNS": "200",
            "MSK_MIGRATE_NO_REEXEC": "1",
        }
        full_env.update(env or {})
        full_env = {k: v for k, v in full_env.items() if v is not None}
        proc = subprocess.run([sys.executable, str(REPO / "build_images.py"), *args],
                              capture_output=True, text=True, env=full_env, timeout=120)
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        log.unlink(missing_ok=True)
        return Run(proc.returncode, proc.stdout, proc.stderr, calls)

    return run
