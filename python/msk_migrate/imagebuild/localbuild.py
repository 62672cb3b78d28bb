"""``make images``: build the three images with buildah against the stand-in bases, push them to a
local registry that only accepts ECR's credentials, and check with skopeo what was pushed.

1. stand-in bases (:mod:`.standins`; debootstrap once, cached under ``.local/images/``);
2. moto's ECR server with the repositories ``cdktf deploy migration-dev`` creates (immutable tags);
3. a TLS docker-registry on 127.0.0.1 whose htpasswd holds the credentials moto's
   ``GetAuthorizationToken`` issues (:mod:`.localregistry`);
4. ``./build_images.py 123456789012 us-east-1 --builder buildah --local-bases --registry <host>`` (the
   real script: ECR names the repositories and issues the token; buildah logs in with it and pushes);
5. skopeo, per image: architecture amd64, the manifest's digest = the registry's digest, the OCI labels,
   a non-root user and the entrypoint the Dockerfile declares.

``python -m msk_migrate.imagebuild.localbuild [--images a,b] [--keep-registry] [--output json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import localregistry, standins
from .buildah import Store
from .docker import BuildError
from .images import IMAGE_NAMES, IMAGES

ACCOUNT = "123456789012"  # moto's default account: its ECR answers for this registry id
REGION = "us-east-1"
ENV = "dev"


@dataclass
class Expected:
    user: str
    entrypoint: list[str]


def expected_config(dockerfile: Path) -> Expected:
    """The USER and ENTRYPOINT a Dockerfile's last stage declares (what skopeo must find)."""
    text = dockerfile.read_text()
    last_stage = text[text.rfind("\nFROM "):]
    user = re.findall(r"^USER\s+(\S+)\s*$", last_stage, re.M)
    entry = re.findall(r"^ENTRYPOINT\s+(\[.*\])\s*$", last_stage, re.M)
    return Expected(user[-1] if user else "", json.loads(entry[-1]) if entry else [])


def _non_root(user: str) -> bool:
    name = user.split(":", 1)[0]
    return name not in ("", "0", "root")


def skopeo_check(host: str, ca_file: Path, auth_file: Path, entry: dict[str, Any], name: str, root: Path,
                 git_commit: str) -> dict[str, Any]:
    """What the registry holds for one manifest entry; raises AssertionError naming any mismatch."""
    cert_dir = auth_file.parent / "skopeo-certs"
    cert_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ca_file, cert_dir / "ca.crt")
    ref = f"docker://{entry['uri']}"
    base = ["skopeo", "inspect", "--authfile", str(auth_file), "--cert-dir", str(cert_dir)]
    raw = json.loads(subprocess.run([*base, "--raw", ref], check=True, capture_output=True, text=True).stdout)
    info = json.loads(subprocess.run([*base, ref], check=True, capture_output=True, text=True).stdout)
    config = json.loads(subprocess.run([*base, "--config", ref], check=True, capture_output=True, text=True).stdout)
    expected = expected_config(root / IMAGES[name].dockerfile)
    cfg = config.get("config") or {}
    problems = []
    if info.get("Architecture") != "amd64" or info.get("Os") != "linux":
        problems.append(f"platform {info.get('Os')}/{info.get('Architecture')} is not linux/amd64")
    if info.get("Digest") != entry["digest"]:
        problems.append(f"registry digest {info.get('Digest')} != manifest digest {entry['digest']}")
    labels = info.get("Labels") or {}
    if labels.get("org.opencontainers.image.revision") != git_commit:
        problems.append(f"label org.opencontainers.image.revision={labels.get('org.opencontainers.image.revision')!r} is not {git_commit}")
    if labels.get("org.opencontainers.image.version") != entry["tag"]:
        problems.append(f"label org.opencontainers.image.version={labels.get('org.opencontainers.image.version')!r} is not {entry['tag']}")
    if not labels.get("org.opencontainers.image.title", "").startswith("msk-migrate"):
        problems.append(f"label org.opencontainers.image.title={labels.get('org.opencontainers.image.title')!r}")
    if not _non_root(cfg.get("User", "")) or cfg.get("User", "") != expected.user:
        problems.append(f"user {cfg.get('User')!r} (Dockerfile: {expected.user!r}, must not be root)")
    if (cfg.get("Entrypoint") or []) != (expected.entrypoint or []):  # no ENTRYPOINT: the registry says null
        problems.append(f"entrypoint {cfg.get('Entrypoint')} != Dockerfile's {expected.entrypoint}")
    if problems:
        raise AssertionError(f"{name} ({entry['uri']}): " + "; ".join(problems))
    return {"digest": info["Digest"], "architecture": info["Architecture"], "user": cfg.get("User"),
            "entrypoint": cfg.get("Entrypoint"), "labels": labels, "media_type": raw.get("mediaType"),
            "size": sum(layer.get("size", 0) for layer in raw.get("layers", [])) + (raw.get("config") or {}).get("size", 0)}


def _forget_previous_runs(store: Store) -> None:
    """Untags the images earlier runs pushed to their (since stopped) registries: with vfs every image
    is a full copy on disk. The layer cache (untagged intermediate images) and the stand-ins stay."""
    proc = store.quick("images", "--json")
    if proc.returncode != 0:
        return
    old = [name for image in json.loads(proc.stdout or "[]") for name in image.get("names") or []
           if name.startswith("127.0.0.1:")]
    if old:
        store.quick("rmi", *old, timeout=600)


def run(root: Path, local_dir: Path, images: list[str], say: Callable[[str], None], keep_registry: bool = False,
        extra_args: list[str] | None = None) -> dict[str, Any]:
    """Everything ``make images`` does; returns the build result, skopeo's findings and timings."""
    import boto3
    import requests
    from moto.server import ThreadedMotoServer

    home = local_dir / "images"
    store = Store(home)
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    _forget_previous_runs(store)
    standins.ensure(root, store, say=say)
    if standins.seed_maven_cache(store):
        say("seeded the Connect build stage's Maven cache mount from ~/.m2/repository")
    timings["standins_s"] = round(time.monotonic() - t0, 1)

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    registry = None
    try:
        assert moto._server is not None  # started above
        moto_url = f"http://127.0.0.1:{moto._server.server_address[1]}"
        aws_env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
        ecr = boto3.client("ecr", region_name=REGION, endpoint_url=moto_url,
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        # moto's backends are per process: a test session's other moto server may hold these already.
        requests.post(f"{moto_url}/moto-api/reset", timeout=10)
        for name in IMAGE_NAMES:
            with contextlib.suppress(ecr.exceptions.RepositoryAlreadyExistsException):
                ecr.create_repository(repositoryName=f"msk-migrate-{ENV}-{name}", imageTagMutability="IMMUTABLE")
        import base64

        token = ecr.get_authorization_token(registryIds=[ACCOUNT])["authorizationData"][0]["authorizationToken"]
        username, _, password = base64.b64decode(token).decode().partition(":")
        reg_home = home / "registry"
        shutil.rmtree(reg_home / "data", ignore_errors=True)  # a fresh registry: every run builds and pushes
        registry = localregistry.start(reg_home, username, password)
        say(f"registry https://{registry.host} (htpasswd: the ECR token's credentials); moto ECR {moto_url}")

        argv = [sys.executable, str(root / "build_images.py"), ACCOUNT, REGION, "--env", ENV, "--builder", "buildah",
                "--local-bases", "--registry", registry.host, "--registry-ca", str(registry.ca_file), "--output", "json",
                "--images", ",".join(images), *(extra_args or [])]
        env = {**os.environ, **aws_env, "AWS_ENDPOINT_URL_ECR": moto_url, "MSK_MIGRATE_LOCAL_DIR": str(local_dir),
               "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
        t1 = time.monotonic()
        proc = subprocess.run(argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=None, text=True)
        timings["build_push_s"] = round(time.monotonic() - t1, 1)
        if proc.returncode != 0:
            raise RuntimeError(f"build_images.py exited with {proc.returncode}")
        result = json.loads(proc.stdout)
        if "kafka-connect" in images:  # `make rehearse WORKER=image` runs this very image
            from .rehearsal_image import adopt

            adopt(result["images"]["kafka-connect"]["uri"])
        auth = localregistry.write_auth_file(home / "run" / "skopeo-auth.json", registry.host, username, password)
        try:
            checks = {name: skopeo_check(registry.host, registry.ca_file, auth, result["images"][name], name, root, result["git_commit"])
                      for name in images}
        finally:
            auth.unlink(missing_ok=True)
        out = {"build": result, "skopeo": checks, "timings": timings, "registry": registry.host}
        if keep_registry:
            out["_registry"] = registry  # the caller stops it
        return out
    finally:
        if registry is not None and not keep_registry:
            registry.stop()
        moto.stop()


def main(argv: list[str] | None = None) -> None:
    """``make images`` behind the one error boundary (cliutil.run_guarded): a stand-in that cannot be
    made -> one line, exit 2; a failed build or check -> one line, exit 1."""
    from ..cliutil import ArgumentParser, run_guarded

    parser = ArgumentParser(prog="make images", description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", default=",".join(IMAGE_NAMES))
    parser.add_argument("--output", choices=("text", "json"), default="text")
    sys.exit(run_guarded(lambda: _make_images(parser.parse_args(argv))))


def _make_images(args: argparse.Namespace) -> None:
    from .. import paths

    images = [i for i in args.images.split(",") if i]
    say = lambda m: print(f"[images] {m}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        out = run(paths.REPO_ROOT, paths.LOCAL_DIR, images, say)
    except (RuntimeError, AssertionError, subprocess.CalledProcessError) as exc:  # an outcome, not a bug
        raise BuildError(f"make images: {exc}") from exc
    if args.output == "json":
        print(json.dumps(out, indent=2, sort_keys=True))
        return
    print(f"pushed to https://{out['registry']} (stopped) and checked with skopeo: linux/amd64, digest, labels, non-root user, entrypoint")
    for name, check in out["skopeo"].items():
        print(f"  {name:<14} {check['digest']}  user {check['user']:<12} {check['size'] / 1e6:7.1f} MB compressed  {out['build']['images'][name]['uri']}")
    print(f"manifest: {out['build']['manifest_path']}")


if __name__ == "__main__":
    main()
