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
# Minimal stand-ins for files other engineers own, used only when the real ones are not there yet.
_STANDINS = {
    "prometheus/prometheus.yml": "global: {scrape_interval: 15s}\n",
    "prometheus/rules/mm2.yml": "groups: []\n",
    "prometheus/jmx-exporter/kafka-connect-mm2.yaml": "rules: []\n",
    "grafana/provisioning/datasources/prometheus.yaml": "apiVersion: 1\n",
    "grafana/dashboards/mm2.json": "{}\n",
}


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
    for rel in ("images", "jvm/pom.xml", "prometheus", "grafana", ".dockerignore"):
        src = REPO / rel
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=shutil.ignore_patterns("target", "__pycache__"))
        elif src.exists():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for rel, text in _STANDINS.items():
        path = dest / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")
