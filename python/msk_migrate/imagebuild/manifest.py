"""The build manifest: what was pushed, per image, for the infra stacks to pin by digest.

``build/manifest-<account>-<region>.json``::

    {"account": "...", "region": "...", "git_commit": "<sha of this build>",
     "images": {"kafka-connect": {"repository": "...", "uri": "<registry>/<repo>:<tag>",
                                  "tag": "...", "digest": "sha256:..."},
                "prometheus": {...}, "grafana": {...}}}

A partial build (``--images grafana``) keeps the other images' entries when they name the same
repositories. The manifest being replaced is kept as ``manifest-<account>-<region>.previous.json``
(the rollback target).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .images import IMAGE_NAMES

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def manifest_path(root: Path, account: str, region: str) -> Path:
    return root / "build" / f"manifest-{account}-{region}.json"


def previous_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".json") + ".previous.json")


def read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def merge(previous: dict[str, Any] | None, account: str, region: str, git_commit: str,
          built: dict[str, dict[str, str]], repositories: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The new manifest: ``built`` plus the previous entries of images not rebuilt, kept only when
    they point at the repository this build would use. Returns the manifest and the kept image names."""
    images: dict[str, dict[str, str]] = {}
    kept: list[str] = []
    old = (previous or {}).get("images") or {}
    same_place = previous is not None and previous.get("account") == account and previous.get("region") == region
    for name in IMAGE_NAMES:
        if name in built:
            images[name] = built[name]
        elif same_place and isinstance(old.get(name), dict) and old[name].get("repository") == repositories.get(name):
            images[name] = old[name]
            kept.append(name)
    return {"account": account, "region": region, "git_commit": git_commit, "images": images}, kept


def write(path: Path, manifest: dict[str, Any]) -> Path | None:
    """Writes atomically; keeps the replaced manifest as ``*.previous.json`` (returned) when it differed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, indent=2) + "\n"
    kept_previous = None
    if path.exists():
        old = path.read_text()
        if old != text:
            previous_path(path).write_text(old)
            kept_previous = previous_path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return kept_previous
