"""Which image each ECS task runs: pinned by digest from the build manifest, else the configured tag.

``./build_images.py ACCOUNT REGION`` writes ``build/manifest-<account>-<region>.json``::

    {"account": "...", "region": "...",
     "images": {"kafka-connect": {"uri": "ACCOUNT.dkr.ecr.REGION.amazonaws.com/<repo>:<tag>",
                                  "digest": "sha256:...", "tag": "..."},
                "prometheus": {...}, "grafana": {...}}}

The manifest is read defensively: unknown keys are ignored; a component missing from it (or without a
digest) falls back to its manifest tag or the environment's ``image_tag`` with a warning; a manifest
that contradicts the environment (other account/region, another repository) or is not JSON is a
UsageError, because deploying an image nobody meant to deploy is worse than stopping.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from msk_migrate.config.environment import ECR_COMPONENTS, EnvironmentConfig
from msk_migrate.config.identifiers import IMAGE_DIGEST as _DIGEST
from msk_migrate.config.identifiers import IMAGE_TAG as _TAG
from msk_migrate.errors import UsageError


@dataclass(frozen=True)
class ImageChoice:
    component: str
    digest: str | None  #: sha256:... when pinned
    tag: str  #: the tag (manifest's, else image_tag)
    source: str  #: "manifest" or "config"

    def reference(self, repository_url: str) -> str:
        """``<repo url>@<digest>`` when pinned, else ``<repo url>:<tag>``."""
        return f"{repository_url}@{self.digest}" if self.digest else f"{repository_url}:{self.tag}"


def manifest_path(build_dir: Path, cfg: EnvironmentConfig) -> Path:
    return Path(build_dir) / f"manifest-{cfg.account_id}-{cfg.region}.json"


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def choose_images(cfg: EnvironmentConfig, build_dir: Path) -> dict[str, ImageChoice]:
    """``{component: ImageChoice}`` for the three images of ``cfg``."""
    path = manifest_path(build_dir, cfg)
    fallback = {c: ImageChoice(c, None, cfg.image_tag, "config") for c in ECR_COMPONENTS}
    if not path.is_file():
        return fallback
    where = str(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(where, f"not a readable JSON manifest ({exc})", "rerun ./build_images.py or delete the file") from None
    if not isinstance(data, dict):
        raise UsageError(where, "manifest is not a JSON object", "rerun ./build_images.py or delete the file")
    for key, expected in (("account", cfg.account_id), ("region", cfg.region)):
        if key in data and str(data[key]) != expected:
            raise UsageError(f"{where}: {key}", f"{data[key]!r} differs from {cfg.name}'s {expected!r}", "use the manifest of this account and region")
    images = data.get("images")
    if not isinstance(images, dict):
        _warn(f"{where} has no 'images' object; using image_tag {cfg.image_tag!r}")
        return fallback
    repos = cfg.ecr_repository_names()
    out: dict[str, ImageChoice] = {}
    for component in ECR_COMPONENTS:
        entry = images.get(component)
        if not isinstance(entry, dict):
            _warn(f"{where} lists no {component} image; using image_tag {cfg.image_tag!r}")
            out[component] = fallback[component]
            continue
        field = f"{where}: images.{component}"
        uri = entry.get("uri")
        if uri is not None:
            repo = str(uri).split("/", 1)[-1].split("@", 1)[0].rsplit(":", 1)[0] if "/" in str(uri) else None
            if repo != repos[component]:
                raise UsageError(f"{field}.uri", f"{uri!r} is not in repository {repos[component]!r}", "rebuild for this environment's prefix")
        digest = entry.get("digest")
        tag = entry.get("tag")
        if tag is not None and not (isinstance(tag, str) and _TAG.match(tag)):
            raise UsageError(f"{field}.tag", f"{tag!r} is not a Docker tag", "rerun ./build_images.py")
        if digest is not None:
            if not (isinstance(digest, str) and _DIGEST.match(digest)):
                raise UsageError(f"{field}.digest", f"{digest!r} is not sha256:<64 hex>", "rerun ./build_images.py")
            out[component] = ImageChoice(component, digest, tag or cfg.image_tag, "manifest")
        elif tag:
            _warn(f"{field} has no digest; using its tag {tag!r} (not pinned)")
            out[component] = ImageChoice(component, None, tag, "manifest")
        else:
            _warn(f"{field} has neither digest nor tag; using image_tag {cfg.image_tag!r}")
            out[component] = fallback[component]
    return out
