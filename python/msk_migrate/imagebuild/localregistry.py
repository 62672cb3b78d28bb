"""A local stand-in for ECR's registry: Debian's docker-registry (the CNCF distribution registry) on
127.0.0.1, over TLS (a throw-away self-signed certificate for 127.0.0.1) with htpasswd basic auth that
accepts exactly the credentials ECR's GetAuthorizationToken issues (moto's server, in tests and
``make images``). Nothing listens unauthenticated, nothing binds beyond 127.0.0.1.

The registry's host (``127.0.0.1:<port>``) is not an ECR host: ``./build_images.py --registry`` pushes
there under the ECR repository names and writes its manifest under ``.local/images/`` with URIs of
that host (docs/images.md, "Building and running the images on this machine").
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError


@dataclass
class LocalRegistry:
    host: str  #: 127.0.0.1:<port>
    ca_file: Path
    proc: subprocess.Popen
    log_file: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise UsageError(name, "is not installed", "run `make setup` (scripts/setup-images.sh installs it)")
    return path


def start(home: Path, username: str, password: str, timeout: float = 60.0) -> LocalRegistry:
    """Starts a registry whose only account is ``username``/``password``; storage under ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    certs = home / "certs"
    certs.mkdir(exist_ok=True)
    key, crt = certs / "registry.key", certs / "registry.crt"
    if not crt.exists():
        subprocess.run(
            [_tool("openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-days", "30", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", str(key), "-out", str(crt)],
            check=True, capture_output=True,
        )
        key.chmod(0o600)
    htpasswd = home / "htpasswd"
    # bcrypt only (the registry refuses other hashes); the password goes through stdin, never argv.
    subprocess.run([_tool("htpasswd"), "-B", "-i", "-c", str(htpasswd), username], input=password, text=True,
                   check=True, capture_output=True)
    htpasswd.chmod(0o600)
    port = _free_port()
    config = home / "config.yml"
    config.write_text(json.dumps({  # YAML is a superset of JSON
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(home / "data")}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}", "tls": {"certificate": str(crt), "key": str(key)},
                 "headers": {"X-Content-Type-Options": ["nosniff"]}},
        "auth": {"htpasswd": {"realm": "msk-migrate-local", "path": str(htpasswd)}},
    }, indent=2))
    log_file = home / "registry.log"
    proc = subprocess.Popen([_tool("docker-registry"), "serve", str(config)], stdout=log_file.open("w"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    reg = LocalRegistry(f"127.0.0.1:{port}", crt, proc, log_file)
    import requests

    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"docker-registry exited with {proc.returncode} (log: {log_file})")
        try:
            if requests.get(f"https://{reg.host}/v2/", verify=str(crt), timeout=5).status_code == 401:
                return reg  # up, and refusing anonymous requests
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            reg.stop()
            raise TimeoutError(f"docker-registry on {reg.host} not ready after {timeout:.0f}s (log: {log_file})")
        time.sleep(0.3)


def write_auth_file(path: Path, host: str, username: str, password: str) -> Path:
    """A containers auth.json (skopeo --authfile) so the password never appears on a command line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"auths": {host: {"auth": token}}}, fh)
    return path
