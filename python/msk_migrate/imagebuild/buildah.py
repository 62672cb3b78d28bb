"""The buildah CLI: daemonless builds (``--isolation chroot``, ``vfs`` storage, as root) and pushes.

Storage never goes to the system's /var/lib/containers: every command gets ``--root``/``--runroot``
under ``<local dir>/images/`` (git-ignored), and a registries.conf of its own that resolves short
names (``maven:3.9.11-…``) to docker.io, as Docker does. ``RUN --mount=type=cache`` directories live
under ``<local dir>/images/tmp`` (buildah puts them in ``$TMPDIR``), so warm builds reuse Maven's
repository. Commands are argv lists starting with ``buildah`` (what the dry run prints); :func:`run`
in :mod:`.docker` swaps in the resolved executable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .images import PLATFORM

INSTALL_HINT = "run `make setup` (scripts/setup-images.sh installs buildah), or `apt-get install buildah`"

REGISTRIES_CONF = """\
# Written by msk_migrate.imagebuild.buildah: short names resolve like Docker's (docker.io, library/).
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
"""


def find_buildah() -> str:
    path = shutil.which("buildah")
    if not path:
        raise UsageError("--builder buildah", "buildah is not installed (not found on PATH)", INSTALL_HINT)
    return path


@dataclass(frozen=True)
class Store:
    """Where buildah keeps images, layers and cache mounts for this project."""

    home: Path  # <local dir>/images

    @property
    def root(self) -> Path:
        return self.home / "storage"

    @property
    def runroot(self) -> Path:
        return self.home / "run"

    @property
    def tmp(self) -> Path:
        return self.home / "tmp"

    @property
    def auth_file(self) -> Path:
        """Registry credentials of `buildah login` (never the user's own auth.json); removed after a run."""
        return self.runroot / "auth.json"

    @property
    def registries_conf(self) -> Path:
        return self.home / "registries.conf"

    def global_args(self) -> list[str]:
        return ["--root", str(self.root), "--runroot", str(self.runroot), "--storage-driver", "vfs"]

    def argv(self, *args: str) -> list[str]:
        return ["buildah", *self.global_args(), *args]

    def env(self) -> dict[str, str]:
        """The environment every buildah (and skopeo) call runs with."""
        for d in (self.root, self.runroot, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        if not self.registries_conf.exists() or self.registries_conf.read_text() != REGISTRIES_CONF:
            self.registries_conf.write_text(REGISTRIES_CONF)
        if not self.auth_file.exists():
            self.forget_logins()
        return {
            **os.environ,
            "BUILDAH_ISOLATION": "chroot",
            "CONTAINERS_REGISTRIES_CONF": str(self.registries_conf),
            "TMPDIR": str(self.tmp),
            "REGISTRY_AUTH_FILE": str(self.auth_file),
        }

    def forget_logins(self) -> None:
        """An empty auth file (buildah refuses a REGISTRY_AUTH_FILE that does not exist)."""
        fd = os.open(self.auth_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write('{"auths": {}}\n')

    def quick(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        exe = shutil.which("buildah") or "buildah"
        try:
            return subprocess.run([exe, *self.global_args(), *args], capture_output=True, text=True, timeout=timeout, env=self.env())
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, 124, "", f"`buildah {' '.join(args)}` timed out")
        except OSError as exc:
            return subprocess.CompletedProcess(args, 126, "", str(exc))

    def has_image(self, ref: str) -> bool:
        return self.quick("inspect", "--type", "image", "--format", "{{.FromImageID}}", ref).returncode == 0

    def inspect(self, ref: str) -> dict:
        proc = self.quick("inspect", "--type", "image", ref)
        if proc.returncode != 0:
            raise UsageError(ref, f"not in buildah's storage ({_first_line(proc)})")
        return json.loads(proc.stdout)


def _first_line(proc: subprocess.CompletedProcess[str]) -> str:
    text = (proc.stderr or proc.stdout or "").strip()
    return text.splitlines()[0] if text else f"exit code {proc.returncode}"


def preflight(store: Store) -> str:
    """buildah runs and can use the project's storage. Returns its version line."""
    find_buildah()
    version = store.quick("--version")
    if version.returncode != 0:
        raise UsageError("--builder buildah", f"buildah does not run ({_first_line(version)})", INSTALL_HINT)
    info = store.quick("info")
    if info.returncode != 0:
        raise UsageError(
            "--builder buildah",
            f"buildah cannot use its storage {store.root} ({_first_line(info)})",
            "run as root (vfs storage, chroot isolation), or remove a stale .local/images/run",
        )
    return version.stdout.strip()


PREFLIGHT_DESCRIPTION = [["buildah", "--version"], ["buildah", "info"]]


def bud_command(
    store: Store,
    *,
    dockerfile: str,
    tags: list[str],
    build_args: dict[str, str],
    labels: dict[str, str],
    iidfile: Path,
    pull_never: bool,
    layers: bool = False,
) -> list[str]:
    """``buildah bud`` for one image (Docker format, amd64, chroot isolation).

    No ``--layers``: with the vfs driver every committed layer is a full copy of the root filesystem,
    so committing each instruction (what ``--layers`` does) costs far more than it saves (measured:
    more than 15 GB written for the kafka-connect image). The expensive part, Maven's downloads, is
    cached by the Dockerfile's ``RUN --mount=type=cache`` instead. ``layers=True`` turns it back on."""
    argv = store.argv("bud", "--platform", PLATFORM, "--isolation", "chroot", *(["--layers"] if layers else []),
                      "--format", "docker", "--file", dockerfile, "--iidfile", str(iidfile))
    # never: the bases must already be in local storage (checked before the build: one clear line).
    argv.append("--pull=never" if pull_never else "--pull=missing")
    for tag in tags:
        argv += ["--tag", tag]
    for key, value in build_args.items():
        argv += ["--build-arg", f"{key}={value}"]
    for key, value in labels.items():
        argv += ["--label", f"{key}={value}"]
    argv.append(".")
    return argv


def push_command(store: Store, ref: str, *, digestfile: Path, cert_dir: Path | None) -> list[str]:
    """``buildah push`` of a local tag to the same reference in its registry (Docker v2 schema 2)."""
    argv = store.argv("push", "--format", "v2s2", "--digestfile", str(digestfile))
    if cert_dir is not None:
        argv += ["--cert-dir", str(cert_dir)]
    argv += [ref, f"docker://{ref}"]
    return argv


def login_command(store: Store, registry: str, *, cert_dir: Path | None) -> list[str]:
    argv = store.argv("login", "--username", "AWS", "--password-stdin")
    if cert_dir is not None:
        argv += ["--cert-dir", str(cert_dir)]
    argv.append(registry)
    return argv
