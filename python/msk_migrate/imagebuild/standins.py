"""Stand-in base images, built from Debian packages, for machines that cannot pull public images.

The public bases (maven, eclipse-temurin, prom/prometheus, grafana/grafana, python) cannot be pulled on the
development machines. The stand-ins have the same names and tags (read from the Dockerfiles'
``*_IMAGE`` ARGs, :mod:`.bases`) and the paths and tools the Dockerfiles rely on:

==========================  =======================================================================
stand-in for                 contents (Debian bookworm packages)
==========================  =======================================================================
maven:…-eclipse-temurin-17   OpenJDK 17 JDK + Maven 3.8, ``JAVA_HOME=/opt/java/openjdk``
eclipse-temurin:…-jre-jammy  OpenJDK 17 JRE, bash, coreutils, curl, hostname, wget, useradd
prom/prometheus              Debian's Prometheus 2.42: ``/bin/prometheus``, ``/bin/promtool``, user nobody
grafana/grafana              **no Grafana binary** (not installable here): user 472, upstream's paths,
                             a ``/run.sh`` that says it is a stand-in
python:…-slim-bookworm       Debian's Python 3.11 with venv and pip (the CA bundle trusts the build
                             machine's extra CAs, so pip reaches PyPI through this network)
==========================  =======================================================================

All start from one Debian rootfs (``debootstrap --variant=minbase bookworm``, cached as
``<local dir>/images/debian-bookworm-minbase.tar``) that trusts the build machine's extra CA
certificates (``/usr/local/share/ca-certificates``): this network intercepts TLS, and Maven inside the
Connect image's build stage must reach Maven Central. Each stand-in is rebuilt only when its inputs
(Containerfile, CA certificates, rootfs) change: a label records their hash.

``python -m msk_migrate.imagebuild.standins`` builds what is missing (``make images`` runs it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..outcome import quiet
from .bases import Base, read_bases
from .buildah import Store
from .images import IMAGES

HERE = Path(__file__).with_name("standins")
DEBIAN_SUITE = "bookworm"
DEBIAN_IMAGE = "localhost/msk-migrate-standin/debian:bookworm-minbase"
#: Base repository -> the Containerfile of its stand-in.
CONTAINERFILES = {
    "maven": "maven.Containerfile",
    "eclipse-temurin": "temurin-jre.Containerfile",
    "prom/prometheus": "prometheus.Containerfile",
    "grafana/grafana": "grafana.Containerfile",
    "python": "python.Containerfile",
}
INPUTS_LABEL = "io.mskmigrate.standin.inputs"
CA_DIR = Path(os.environ.get("MSK_MIGRATE_EXTRA_CA_DIR", "/usr/local/share/ca-certificates"))


class StandinError(Exception):
    """A stand-in could not be made (debootstrap or buildah failed); names the log. Exit code 2."""

    exit_code = 2


def all_bases(root: Path) -> list[Base]:
    """Every base of every image, once (by tag), in build order."""
    seen: dict[str, Base] = {}
    for spec in IMAGES.values():
        for base in read_bases(root / spec.dockerfile):
            seen.setdefault(base.by_tag, base)
    return list(seen.values())


def _extra_cas() -> list[Path]:
    return sorted(p for p in CA_DIR.rglob("*.crt") if p.is_file()) if CA_DIR.is_dir() else []


def _hash(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def _run(argv: list[str], log: Path, env: dict[str, str] | None = None, timeout: float = 1800) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        try:
            proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise StandinError(f"`{argv[0]} {argv[1] if len(argv) > 1 else ''}` timed out (log: {log})") from None
    if proc.returncode != 0:
        tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
        raise StandinError(f"`{' '.join(argv[:2])}` failed: {tail[0] if tail else proc.returncode} (log: {log})")


def debian_rootfs(store: Store, log: Path) -> Path:
    """The debootstrap minbase rootfs of bookworm as a tar (made once, then cached)."""
    tar = store.home / f"debian-{DEBIAN_SUITE}-minbase.tar"
    if tar.exists():
        return tar
    if not shutil.which("debootstrap"):
        raise StandinError("debootstrap is not installed (fix: run `make setup`; scripts/setup-images.sh installs it)")
    mirror = os.environ.get("MSK_MIGRATE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    store.home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=store.home, prefix="debootstrap-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _run(["debootstrap", "--variant=minbase", "--include=ca-certificates", DEBIAN_SUITE, str(rootfs), mirror], log)
        # No apt caches in the image; the stand-ins run `apt-get update` themselves.
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        partial = tar.with_suffix(".tar.partial")
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."], log)
        partial.replace(tar)
    return tar


def _context(store: Store, rootfs_tar: Path) -> Path:
    """The build context of the stand-ins: Containerfiles, the rootfs tar, the extra CA certificates."""
    ctx = store.home / "standin-context"
    cas = ctx / "ca-certificates"
    if ctx.exists():
        shutil.rmtree(ctx)
    cas.mkdir(parents=True)
    for cf in HERE.glob("*.Containerfile"):
        shutil.copy2(cf, ctx / cf.name)
    for i, ca in enumerate(_extra_cas()):
        shutil.copy2(ca, cas / f"{i:02d}-{ca.name}")
    os.link(rootfs_tar, ctx / "rootfs.tar")
    return ctx


def _current(store: Store, ref: str, inputs: str) -> bool:
    proc = store.quick("inspect", "--type", "image", "--format", f'{{{{index .OCIv1.Config.Labels "{INPUTS_LABEL}"}}}}', ref)
    return proc.returncode == 0 and proc.stdout.strip() == inputs


def _bud(store: Store, ctx: Path, containerfile: str, tag: str, inputs: str, log: Path, build_args: dict[str, str]) -> None:
    # No --layers: with vfs every committed layer is a full rootfs copy; the inputs label is the cache.
    argv = store.argv("bud", "--isolation", "chroot", "--pull=never", "--format", "docker",
                      "--file", str(ctx / containerfile), "--tag", tag, "--label", f"{INPUTS_LABEL}={inputs}")
    for key, value in build_args.items():
        argv += ["--build-arg", f"{key}={value}"]
    argv.append(str(ctx))
    argv[0] = shutil.which("buildah") or "buildah"
    _run(argv, log, env=store.env())


def ensure(root: Path, store: Store, say=quiet) -> dict[str, str]:
    """Builds every stand-in that is missing or stale. Returns ``{base by tag: stand-in image id}``."""
    log = store.home / "standins.log"
    ca_bytes = b"".join(p.read_bytes() for p in _extra_cas())
    bases = all_bases(root)
    unknown = [b.name for b in bases if b.name not in CONTAINERFILES]
    if unknown:
        raise StandinError(f"no stand-in for base image(s) {', '.join(unknown)} (add one to {HERE})")
    t0 = time.monotonic()
    tar = debian_rootfs(store, log)
    rootfs_id = f"{tar.stat().st_size}-{int(tar.stat().st_mtime)}".encode()
    debian_inputs = _hash((HERE / "debian.Containerfile").read_bytes(), ca_bytes, rootfs_id)
    ctx: Path | None = None
    if not _current(store, DEBIAN_IMAGE, debian_inputs):
        say(f"stand-in {DEBIAN_IMAGE}: building from {tar.name}")
        ctx = _context(store, tar)
        _bud(store, ctx, "debian.Containerfile", DEBIAN_IMAGE, debian_inputs, log, {})
    out: dict[str, str] = {}
    for base in bases:
        cf = CONTAINERFILES[base.name]
        inputs = _hash((HERE / cf).read_bytes(), debian_inputs.encode())
        if not _current(store, base.qualified, inputs):
            say(f"stand-in {base.by_tag}: building ({cf})")
            ctx = ctx or _context(store, tar)
            _bud(store, ctx, cf, base.qualified, inputs, log, {"DEBIAN_BASE": DEBIAN_IMAGE})
        out[base.by_tag] = store.inspect(base.qualified).get("FromImageID", "")
    if ctx is not None:
        shutil.rmtree(ctx, ignore_errors=True)
    say(f"stand-ins ready in {time.monotonic() - t0:.0f}s: {', '.join(out)}")
    return out


def main() -> None:
    """``python -m msk_migrate.imagebuild.standins`` behind the one error boundary (cliutil.run_guarded)."""
    from .. import paths
    from ..cliutil import run_guarded

    store = Store(paths.LOCAL_DIR / "images")
    sys.exit(run_guarded(lambda: ensure(paths.REPO_ROOT, store, say=lambda m: print(f"[standins] {m}", file=sys.stderr, flush=True))))


if __name__ == "__main__":
    main()


def seed_maven_cache(store: Store, source: Path | None = None) -> Path | None:
    """Seeds the Connect build stage's ``RUN --mount=type=cache,target=/root/.m2/repository`` (buildah
    keeps it in ``$TMPDIR/buildah-cache-<uid>/<target>``) with a copy of this machine's Maven repository,
    which `make setup` filled with the same artefacts: what BuildKit's cache mount is on a developer's
    machine. Done once, only when the cache is empty; the image's content does not depend on it."""
    source = source if source is not None else Path.home() / ".m2" / "repository"
    cache = store.tmp / f"buildah-cache-{os.getuid()}" / "root" / ".m2" / "repository"
    if cache.exists() and any(cache.iterdir()):
        return None
    if not source.is_dir():
        return None
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name("repository.partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, symlinks=True)
    if cache.exists():
        cache.rmdir()
    partial.replace(cache)
    return cache
