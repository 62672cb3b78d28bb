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
IMAGES = ("kafka-connect", "prometheus", "grafana", "operator")


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
    for rel in ("images", "jvm/pom.xml", "prometheus", "grafana", ".dockerignore", "python", "pyproject.toml", "requirements.lock"):
        src = REPO / rel
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=shutil.ignore_patterns("target", "__pycache__"))
        elif src.exists():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


class TinyDns:
    """A UDP DNS server on 127.0.0.<n>:53 answering A queries for one name with 127.0.0.1 (and NXDOMAIN
    otherwise): what Cloud Map is to the Prometheus image's dns_sd_configs, for a test on one machine."""

    def __init__(self, name: str):
        import random
        import threading

        self.name = name.rstrip(".").lower()
        self.sock = None
        for _ in range(20):
            self.ip = f"127.0.{random.randint(1, 250)}.{random.randint(2, 250)}"
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.bind((self.ip, 53))
            except OSError:
                s.close()
                continue
            self.sock = s
            break
        if self.sock is None:
            raise RuntimeError("no free 127.0.x.y:53 for the test DNS server")
        self.sock.settimeout(0.5)
        self.queries = 0
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        import struct

        while not self._stop:
            try:
                data, addr = self.sock.recvfrom(512)
            except (TimeoutError, OSError):
                continue
            if len(data) < 12:
                continue
            qid, _flags, _qd = struct.unpack(">HHH", data[:6])
            i, labels = 12, []
            while i < len(data) and data[i] != 0:
                labels.append(data[i + 1:i + 1 + data[i]].decode(errors="replace"))
                i += 1 + data[i]
            question = data[12:i + 5]
            qtype = struct.unpack(">H", data[i + 1:i + 3])[0] if i + 3 <= len(data) else 0
            match = ".".join(labels).lower() == self.name
            self.queries += 1
            answers = b""
            if match and qtype == 1:
                answers = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton("127.0.0.1")
            rcode = 0 if match else 3
            header = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, 1 if answers else 0, 0, 0)
            self.sock.sendto(header + question + answers, addr)

    def close(self) -> None:
        self._stop = True
        self.thread.join(timeout=2)
        self.sock.close()
