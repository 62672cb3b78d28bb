"""The two builders behind one plan: ``docker buildx`` (an engine) and ``buildah`` (daemonless).

``--builder auto`` picks docker when a Docker daemon answers (``docker info``), else buildah. Both
build the same Dockerfiles with the same tags, build args and labels for linux/amd64, log in with
the ECR token from boto3 (password on stdin), push, and report the registry digest the manifest pins:
buildx from its metadata file (``containerimage.digest``), buildah from ``buildah push --digestfile``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import UsageError
from . import buildah as buildahcli
from . import docker as dockercli
from . import manifest

BUILDERS = ("auto", "docker", "buildah")


class Step(Protocol):
    """What a builder needs to know about one image."""

    dockerfile: str
    build_args: dict[str, str]
    labels: dict[str, str]
    metadata_file: Path
    repository_uri: str

    @property
    def tags(self) -> list[str]: ...


def _docker_daemon_answers() -> bool:
    docker = shutil.which("docker")
    if not docker:
        return False
    try:
        return subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def resolve(name: str) -> str:
    """``--builder`` -> docker or buildah (one-line UsageError for anything else)."""
    value = (name or "").strip().lower()
    if value not in BUILDERS:
        raise UsageError("--builder", f"unknown builder {name!r}", f"choose one of {', '.join(BUILDERS)}")
    if value != "auto":
        return value
    if _docker_daemon_answers():
        return "docker"
    if shutil.which("buildah"):
        return "buildah"
    raise UsageError(
        "--builder auto",
        "no Docker daemon answers and buildah is not installed",
        "start Docker (with buildx), or install buildah (`make setup` runs scripts/setup-images.sh)",
    )


@dataclass
class Docker:
    name = "docker"

    def preflight_commands(self) -> list[list[str]]:
        return dockercli.PREFLIGHT

    def preflight(self) -> None:
        dockercli.preflight(dockercli.find_docker())

    def executable(self) -> str:
        return dockercli.find_docker()

    def env(self) -> dict[str, str] | None:
        return None

    def login(self, registry: str) -> list[str]:
        return dockercli.login_command(registry)

    def steps(self, img: Step, push: bool) -> list[list[str]]:
        return [
            dockercli.buildx_command(
                dockerfile=img.dockerfile,
                tags=[f"{img.repository_uri}:{t}" for t in img.tags],
                build_args=img.build_args,
                labels=img.labels,
                metadata_file=img.metadata_file,
                push=push,
            )
        ]

    def digest(self, img: Step) -> str | None:
        try:
            data = json.loads(img.metadata_file.read_text())
        except (OSError, ValueError):
            return None
        digest = data.get("containerimage.digest") if isinstance(data, dict) else None
        return digest if isinstance(digest, str) and manifest.DIGEST.match(digest) else None

    def missing_images(self, refs: list[str]) -> list[str]:
        docker = dockercli.find_docker()
        return [ref for ref in refs if subprocess.run([docker, "image", "inspect", ref], capture_output=True).returncode != 0]

    def cleanup(self) -> None:
        pass


@dataclass
class Buildah:
    store: buildahcli.Store
    cert_dir: Path | None = None
    pull_never: bool = False
    name = "buildah"
    _digestfiles: dict[str, Path] = field(default_factory=dict)

    def preflight_commands(self) -> list[list[str]]:
        return [self.store.argv(*c[1:]) for c in buildahcli.PREFLIGHT_DESCRIPTION]

    def preflight(self) -> None:
        buildahcli.preflight(self.store)

    def executable(self) -> str:
        return buildahcli.find_buildah()

    def env(self) -> dict[str, str] | None:
        return self.store.env()

    def login(self, registry: str) -> list[str]:
        return buildahcli.login_command(self.store, registry, cert_dir=self.cert_dir)

    def _digestfile(self, img: Step) -> Path:
        return img.metadata_file.with_name(img.metadata_file.name.replace(".metadata.json", ".digest"))

    def steps(self, img: Step, push: bool) -> list[list[str]]:
        refs = [f"{img.repository_uri}:{t}" for t in img.tags]
        out = [
            buildahcli.bud_command(
                self.store,
                dockerfile=img.dockerfile,
                tags=refs,
                build_args=img.build_args,
                labels=img.labels,
                iidfile=img.metadata_file.with_name(img.metadata_file.name.replace(".metadata.json", ".iid")),
                pull_never=self.pull_never,
            )
        ]
        if push:
            # The first push's digest file is the registry's manifest digest; later tags name the same manifest.
            for i, ref in enumerate(refs):
                digestfile = self._digestfile(img) if i == 0 else self._digestfile(img).with_suffix(f".digest{i}")
                out.append(buildahcli.push_command(self.store, ref, digestfile=digestfile, cert_dir=self.cert_dir))
        return out

    def digest(self, img: Step) -> str | None:
        try:
            digest = self._digestfile(img).read_text().strip()
        except OSError:
            return None
        return digest if manifest.DIGEST.match(digest) else None

    def missing_images(self, refs: list[str]) -> list[str]:
        return [ref for ref in refs if not self.store.has_image(ref)]

    def cleanup(self) -> None:
        """The registry login lives only for the run (a token in a file is still a secret)."""
        if self.store.auth_file.exists():
            self.store.forget_logins()


def describe(argv: list[str]) -> str:
    return shlex.join(argv)


Builder = Docker | Buildah
Runner = Callable[..., tuple[int, list[str]]]
