#!/usr/bin/env python3
"""Write the sha256 of every file PyPI serves for each pin of ``requirements.lock`` beside the pin.

``pip install --require-hashes`` then refuses any file whose bytes differ from the ones published when the pin
was made (a re-uploaded or substituted artefact, a compromised mirror). The versions are not touched: the lock
stays the one source of truth for them; this only adds what proves the files. Hashes come from PyPI's simple
index (PEP 691 JSON), every file of the pinned release (sdist and all wheels), so the lock works on any platform
the release supports (the laptop, CI and the operator image alike).

Usage: ``scripts/lock_hashes.py [requirements.lock]`` — run after changing a pin (pins stay ``name==version``)."""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

INDEX = "https://pypi.org/simple/{name}/"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+)")


def release_hashes(name: str, version: str) -> list[str]:
    """Sorted sha256 of the files of ``name==version`` on PyPI; an empty release is an error (a pin to nothing)."""
    req = urllib.request.Request(INDEX.format(name=canonicalize_name(name)), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    want = Version(version)
    out = set()
    for f in files:
        fn = f["filename"]
        try:
            got = parse_wheel_filename(fn)[1] if fn.endswith(".whl") else parse_sdist_filename(fn)[1]
        except ValueError:
            continue  # eggs, exe installers and other formats pip does not install
        if got == want and "sha256" in f.get("hashes", {}):
            out.add(f["hashes"]["sha256"])
    if not out:
        raise SystemExit(f"lock_hashes: {name}=={version}: PyPI serves no file of that release: fix the pin")
    return sorted(out)


def main(path: Path) -> None:
    pins = []
    for line in path.read_text().splitlines():
        m = PIN.match(line.strip())
        if m:
            pins.append((m["name"], m["version"]))
    header = [ln for ln in path.read_text().splitlines() if ln.startswith("#")]
    with ThreadPoolExecutor(8) as pool:
        hashes = list(pool.map(lambda p: release_hashes(*p), pins))
    lines = list(header)
    for (name, version), digests in zip(pins, hashes, strict=True):
        lines.append(f"{name}=={version} \\")
        lines += [f"    --hash=sha256:{d}" + (" \\" if i < len(digests) - 1 else "") for i, d in enumerate(digests)]
    path.write_text("\n".join(lines) + "\n")
    print(f"lock_hashes: {len(pins)} pins, {sum(map(len, hashes))} file hashes -> {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "requirements.lock"))
