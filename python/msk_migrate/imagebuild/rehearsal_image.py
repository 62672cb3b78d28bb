"""The rehearsal's kafka-connect image in the local buildah store: its tag, what it is made of, and its
adoption from a ``make images`` build (:mod:`msk_migrate.imagebuild.localbuild` hands over the image it built).

Running a worker from it is :mod:`msk_migrate.local.image_worker`'s (``local`` imports ``build``, never the
other way).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from ..errors import UsageError
from ..paths import LOCAL_DIR, REPO_ROOT
from ..versions import checkout_kafka_version
from .bases import read_bases
from .buildah import Store
from .images import IMAGES

IMAGE = "localhost/msk-migrate/kafka-connect:rehearsal"


def image_ref(kafka_version: str | None) -> str:
    """The default runtime (jvm/pom.xml) is :rehearsal; another Kafka runtime gets its own tag."""
    return IMAGE if not kafka_version else f"{IMAGE}-kafka{kafka_version}"


def store() -> Store:
    return Store(LOCAL_DIR / "images")


def buildah(st: Store, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("buildah")
    if not exe:
        raise UsageError("--worker image", "buildah is not installed", "run `make setup` (scripts/setup-images.sh)")
    proc = subprocess.run([exe, *st.global_args(), *args], capture_output=True, text=True, env=st.env(), timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"buildah {args[0]} failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    return proc


def inputs_hash(st: Store, kafka_version: str) -> str:
    """What the kafka-connect image is made of: its input files, the Kafka runtime, the bases' ids."""
    h = hashlib.sha256(kafka_version.encode())
    for rel in IMAGES["kafka-connect"].inputs:
        for path in sorted((REPO_ROOT / rel).rglob("*")):
            if path.is_file() and not {"target", "__pycache__", ".idea"} & set(path.relative_to(REPO_ROOT).parts):
                h.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes())
    for base in read_bases(REPO_ROOT / IMAGES["kafka-connect"].dockerfile):
        h.update(buildah(st, "inspect", "--type", "image", "--format", "{{.FromImageID}}", base.qualified).stdout.strip().encode())
    return h.hexdigest()[:16]


def record_path(st: Store, ref: str) -> Path:
    return st.home / f"{ref.rsplit('/', 1)[-1].replace(':', '_')}.inputs.json"


def image_id(st: Store, ref: str) -> str | None:
    proc = buildah(st, "inspect", "--type", "image", "--format", "{{.FromImageID}}", ref, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def adopt(built_ref: str, kafka_version: str | None = None) -> None:
    """Tags an image `make images` just built from the current inputs as the rehearsal image."""
    st = store()
    kv = kafka_version or checkout_kafka_version(REPO_ROOT)
    ref = image_ref(kafka_version)
    buildah(st, "tag", built_ref, ref)
    record_path(st, ref).write_text(json.dumps({"inputs": inputs_hash(st, kv), "id": image_id(st, ref)}))
