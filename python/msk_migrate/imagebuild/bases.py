"""The base images of each Dockerfile, read from the Dockerfile itself (the one place they are pinned).

Every base is a global ``ARG <NAME>_IMAGE=<name>:<tag>@sha256:<digest>`` used by a ``FROM ${<NAME>_IMAGE}``:
the default is the public, digest-pinned reference a normal build pulls. A digest can only be resolved
by an image that has exactly that manifest, so a machine that cannot pull (tests, ``make images``)
overrides the ARG with the same ``<name>:<tag>`` minus the digest and builds with pulls disabled
against a local image tagged with that name (a stand-in, :mod:`.standins`). See docs/images.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_ARG = re.compile(r"^ARG\s+([A-Z][A-Z0-9_]*_IMAGE)=(\S+)\s*$")
_REF = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._/-]*):(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})(?:@(?P<digest>sha256:[0-9a-f]{64}))?$")


@dataclass(frozen=True)
class Base:
    arg: str  #: the Dockerfile ARG naming it, e.g. JRE_IMAGE
    name: str  #: repository as written, e.g. eclipse-temurin or prom/prometheus
    tag: str
    digest: str | None  #: sha256:… when pinned by digest

    @property
    def pinned(self) -> str:
        """The reference a normal build pulls (the ARG's default)."""
        return f"{self.name}:{self.tag}" + (f"@{self.digest}" if self.digest else "")

    @property
    def by_tag(self) -> str:
        """The reference without its digest: what a local (stand-in) image is tagged and resolved as."""
        return f"{self.name}:{self.tag}"

    @property
    def qualified(self) -> str:
        """``by_tag`` as Docker resolves a short name: docker.io[/library]/name:tag."""
        first = self.name.split("/", 1)[0]
        if "/" in self.name and ("." in first or ":" in first or first == "localhost"):
            return self.by_tag
        return f"docker.io/{self.name if '/' in self.name else 'library/' + self.name}:{self.tag}"


def read_bases(dockerfile: Path) -> list[Base]:
    """The ``*_IMAGE`` ARGs of a Dockerfile that a ``FROM`` uses, in file order."""
    text = dockerfile.read_text()
    out: list[Base] = []
    for line in text.splitlines():
        m = _ARG.match(line.strip())
        if not m:
            continue
        arg, ref = m.groups()
        if not re.search(rf"^FROM\s+(--platform=\S+\s+)?\$\{{{arg}\}}(\s|$)", text, re.M):
            continue
        r = _REF.match(ref)
        if not r:
            raise ValueError(f"{dockerfile}: ARG {arg}={ref} is not name:tag[@sha256:digest]")
        out.append(Base(arg, r["name"], r["tag"], r["digest"]))
    return out
