"""Helpers shared by the image tests (constants, the throw-away checkout, the recording docker run)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ACCOUNT = "123456789012"  # moto's default account: its ECR answers for this registry id
REGION = "us-east-1"
REGISTRY = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com"
IMAGES = ("kafka-connect", "prometheus", "grafana")


def dead_endpoint() -> str:
    """A local URL nobody listens on: any AWS call made against it fails loudly."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def copy_image_inputs(dest: Path) -> None:
    """Copies what the images are built from (and the pinned versions) into ``dest``."""
    for rel in ("images", "jvm/pom.xml", "prometheus", "grafana", ".dockerignore"):
        src = REPO / rel
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=shutil.ignore_patterns("target", "__pycache__"))
        elif src.exists():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")
