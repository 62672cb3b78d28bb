"""Image builds with buildah (chroot isolation, vfs storage) against the stand-in bases: cold and warm
build time per image, and image sizes. Writes the 'Images (buildah)' section of docs/PERFORMANCE.md.

cold = an empty ``RUN --mount=type=cache`` directory (Maven downloads every artefact through this
network's TLS-intercepting proxy); warm = the same build again with that cache filled. There is no
layer cache either way: with the vfs driver every committed layer is a full rootfs copy, so the
builds run without ``--layers`` (docs/images.md). The stand-in bases are made first when missing
(their one-off cost is reported separately); they are not part of an image build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

from msk_migrate.imagebuild import standins  # noqa: E402
from msk_migrate.imagebuild.bases import read_bases  # noqa: E402
from msk_migrate.imagebuild.buildah import Store, bud_command  # noqa: E402
from msk_migrate.imagebuild.images import IMAGES  # noqa: E402
from msk_migrate.paths import LOCAL_DIR  # noqa: E402
from msk_migrate.versions import checkout_kafka_version  # noqa: E402
from perfdoc import write_section  # noqa: E402


def build(store: Store, name: str, cold: bool, tmpdir: Path) -> float:
    spec = IMAGES[name]
    args = {b.arg: b.by_tag for b in read_bases(ROOT / spec.dockerfile)}
    if spec.kafka_version_arg:
        args["KAFKA_VERSION"] = checkout_kafka_version(ROOT)
    iid = store.home / f"bench-{name}.iid"
    argv = bud_command(store, dockerfile=spec.dockerfile, tags=[f"localhost/msk-migrate-bench/{name}:latest"], build_args=args,
                       labels={}, iidfile=iid, pull_never=True)
    argv[0] = shutil.which("buildah") or "buildah"
    env = {**store.env(), "TMPDIR": str(tmpdir)}
    log = store.home / f"bench-{name}.log"
    t0 = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    if code != 0:
        raise SystemExit(f"{name}: build failed (log: {log})")
    return time.monotonic() - t0


def size_mb(store: Store, name: str) -> float:
    out = subprocess.run(["buildah", *store.global_args(), "images", "--json", f"localhost/msk-migrate-bench/{name}:latest"],
                         capture_output=True, text=True, env=store.env(), check=True).stdout
    value, unit = json.loads(out)[0]["size"].split()  # e.g. "687 MB" (buildah reports decimal units)
    return float(value) * {"kB": 1e-3, "MB": 1.0, "GB": 1e3}[unit]


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", default=",".join(IMAGES), help="comma-separated subset (default: all)")
    names = [n for n in parser.parse_args().images.split(",") if n]
    store = Store(LOCAL_DIR / "images")
    t0 = time.monotonic()
    standins.ensure(ROOT, store, say=lambda m: print(f"[standins] {m}", flush=True))
    standin_s = time.monotonic() - t0
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory(dir=store.home, prefix="bench-cache-") as cold_cache:
            cold = build(store, name, cold=True, tmpdir=Path(cold_cache))
            warm = build(store, name, cold=False, tmpdir=Path(cold_cache))
        rows.append((name, cold, warm, size_mb(store, name)))
        print(f"{name}: cold {cold:.1f} s, warm {warm:.1f} s, {rows[-1][3]:.0f} MB", flush=True)
        subprocess.run(["buildah", *store.global_args(), "rmi", f"localhost/msk-migrate-bench/{name}:latest"],
                       capture_output=True, env=store.env())
    load = os.getloadavg()[0]
    table = "\n".join(f"| {n} | {c:.1f} s | {w:.1f} s | {s:,.0f} MB |" for n, c, w, s in rows)
    body = f"""buildah {subprocess.run(['buildah', '--version'], capture_output=True, text=True).stdout.split()[2]}, `--isolation chroot`,
`vfs` storage, linux/amd64, against the stand-in bases (Debian bookworm packages; docs/images.md).
cold = an empty Maven cache mount (every artefact downloaded); warm = the same build again with that
cache filled. No layer cache either way (vfs: every committed layer is a full rootfs copy, so builds
run without `--layers`).

| image | cold build | warm build | image size (uncompressed) |
| --- | ---: | ---: | ---: |
{table}

Stand-in bases present or made first: {standin_s:.1f} s (a fresh machine adds debootstrap, about 1-5 min,
and the four stand-ins). vfs copies every base rootfs in full, so builds here are slower than
with overlayfs or Docker; the kafka-connect cold build is dominated by the Maven stage (policy JAR with its
tests + the Connect classpath). Sizes are of the stand-in-based images (Debian's JRE and Prometheus
2.42 instead of Temurin's and 2.55): the real images differ. 1-minute load average at the end: {load:.1f}
(other work shares the 2 cores)."""
    write_section("Images (buildah)", body)
    print(body)


if __name__ == "__main__":
    main()
