"""The docker CLI: preflight checks, the buildx and login command lines, and a streaming runner.

Commands are built as argv lists that start with ``docker`` (what the dry run prints); :func:`run`
swaps in the resolved executable.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import deque
from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from .images import PLATFORM

INSTALL_HINT = "install Docker Desktop, or Docker Engine with the buildx plugin (docker-buildx-plugin)"


class BuildError(Exception):
    """A docker command failed after the preflight checks passed (exit code 1)."""

    exit_code = 1


def find_docker() -> str:
    path = shutil.which("docker")
    if not path:
        raise UsageError("docker", "not found on PATH", INSTALL_HINT)
    return path


def _quick(docker: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([docker, *args], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([docker, *args], 124, "", f"`docker {' '.join(args)}` timed out")
    except OSError as exc:
        return subprocess.CompletedProcess([docker, *args], 126, "", str(exc))


def _first_line(proc: subprocess.CompletedProcess[str]) -> str:
    text = (proc.stderr or proc.stdout or "").strip()
    return text.splitlines()[0] if text else f"exit code {proc.returncode}"


PREFLIGHT: list[list[str]] = [
    ["docker", "buildx", "version"],
    ["docker", "info", "--format", "{{.ServerVersion}}"],
    ["docker", "buildx", "inspect", "--bootstrap"],
]


def preflight(docker: str) -> str:
    """Checks buildx, the engine and amd64 support before anything touches AWS. Returns buildx's version."""
    buildx = _quick(docker, "buildx", "version")
    if buildx.returncode != 0:
        raise UsageError("docker buildx", f"not available ({_first_line(buildx)})", INSTALL_HINT)
    info = _quick(docker, "info", "--format", "{{.ServerVersion}}")
    if info.returncode != 0:
        raise UsageError("docker", f"the Docker engine is not reachable ({_first_line(info)})", "start Docker Desktop or the docker service")
    inspect = _quick(docker, "buildx", "inspect", "--bootstrap")
    if inspect.returncode != 0:
        raise UsageError("docker buildx", f"the current builder does not start ({_first_line(inspect)})", "run `docker buildx use default` or create a builder")
    platforms = builder_platforms(inspect.stdout)
    if platforms and not any(p == PLATFORM or p.startswith(PLATFORM + "/") for p in platforms):
        raise UsageError(
            "docker buildx",
            f"the current builder cannot build {PLATFORM} (it offers {', '.join(platforms)})",
            "install amd64 emulation: docker run --privileged --rm tonistiigi/binfmt --install amd64",
        )
    return buildx.stdout.strip()


def builder_platforms(inspect_output: str) -> list[str]:
    """Platforms listed by ``docker buildx inspect`` (``Platforms: linux/arm64, linux/amd64*, ...``)."""
    out: list[str] = []
    for line in inspect_output.splitlines():
        m = re.match(r"^\s*Platforms:\s*(.*)$", line)
        if m:
            out += [p.strip().rstrip("*") for p in m.group(1).split(",") if p.strip()]
    return out


def buildx_command(
    *,
    dockerfile: str,
    tags: list[str],
    build_args: dict[str, str],
    labels: dict[str, str],
    metadata_file: Path,
    push: bool,
) -> list[str]:
    """``docker buildx build`` for one image; the context is the repository root (the cwd)."""
    argv = ["docker", "buildx", "build", "--platform", PLATFORM, "--file", dockerfile]
    for tag in tags:
        argv += ["--tag", tag]
    for key, value in build_args.items():
        argv += ["--build-arg", f"{key}={value}"]
    for key, value in labels.items():
        argv += ["--label", f"{key}={value}"]
    # A plain image manifest (no provenance attestation index): one digest that ECS, ECR scanning and
    # the manifest all agree on.
    argv += ["--provenance=false", "--progress=plain", "--metadata-file", str(metadata_file)]
    argv.append("--push" if push else "--load")
    argv.append(".")
    return argv


def login_command(registry: str) -> list[str]:
    return ["docker", "login", "--username", "AWS", "--password-stdin", registry]


def run(
    docker: str,
    argv: list[str],
    *,
    cwd: Path,
    log_file: Path | None = None,
    stdin_text: str | None = None,
    on_line: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    append: bool = False,
) -> tuple[int, list[str]]:
    """Runs ``argv`` (argv[0] is the tool's name: docker or buildah) streaming its merged output line by line.

    Returns the exit code and the last 30 lines. ``stdin_text`` (the ECR password) is written to the
    process's stdin and never logged.
    """
    tail: deque[str] = deque(maxlen=30)
    log = None
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log = log_file.open("a" if append else "w", encoding="utf-8")
    try:
        proc = subprocess.Popen(
            [docker, *argv[1:]],
            cwd=str(cwd),
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        if log:
            log.close()
        return 126, [str(exc)]
    try:
        if stdin_text is not None:
            assert proc.stdin is not None
            try:
                proc.stdin.write(stdin_text)
            finally:
                proc.stdin.close()
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            if log:
                log.write(raw)
                log.flush()  # `tail -f` the log while a long build runs
            if on_line and line.strip():
                on_line(line)
        code = proc.wait()
    finally:
        if log:
            log.close()
    return code, list(tail)
