"""The commit an image is built from: its tag, its OCI revision label and the manifest's git_commit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import UsageError


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if not git:
        raise UsageError("git", "not found on PATH", "install git; images are tagged with the commit they are built from")
    return subprocess.run([git, "-C", str(root), *args], capture_output=True, text=True)


def head_commit(root: Path) -> str:
    """Full SHA of HEAD; a UsageError when ``root`` is not a git checkout or has no commit yet."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        raise UsageError(str(root), "not a git checkout", "run from a clone of the msk-migrate repository: images are tagged with its commit")
    head = _git(root, "rev-parse", "--verify", "HEAD^{commit}")
    if head.returncode != 0:
        raise UsageError(str(root), "the git checkout has no commit yet", "commit first: images are tagged with the commit")
    return head.stdout.strip()


def dirty_paths(root: Path, paths: list[str]) -> list[str]:
    """Uncommitted (modified, staged or untracked) files under ``paths``: they would enter the image."""
    proc = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    if proc.returncode != 0:
        return []
    return [line[3:] for line in proc.stdout.splitlines() if line.strip()]
