"""The Connect worker run FROM THE BUILT IMAGE (``msk-migrate rehearse --worker image``,
``make rehearse WORKER=image``): the image's entrypoint, classpath, policy JAR and JMX agent, not the
repository's copies.

The kafka-connect image is built with buildah from ``images/kafka-connect/Dockerfile`` against the
stand-in bases (:mod:`msk_migrate.imagebuild.standins`) and tagged ``localhost/msk-migrate/kafka-connect:rehearsal``;
it is rebuilt only when its inputs change (a hash of the image's input files, the Kafka runtime and
the stand-in bases' ids; ``make images`` hands over the image it built). The worker is a buildah working
container of that image, started with ``buildah run --isolation chroot --network host`` as the image's
own user, running the image's ENTRYPOINT with the same worker environment ECS gets
(:func:`msk_migrate.connectors.worker_environment`). The environment is set on the working container
(``buildah config --env``), never on a command line. Nothing binds beyond 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..imagebuild import standins
from ..imagebuild.bases import read_bases
from ..imagebuild.buildah import Store, bud_command
from ..imagebuild.images import IMAGES
from ..imagebuild.rehearsal_image import buildah as _buildah
from ..imagebuild.rehearsal_image import image_id as _image_id
from ..imagebuild.rehearsal_image import image_ref, inputs_hash, store
from ..imagebuild.rehearsal_image import record_path as _record
from ..outcome import quiet
from ..paths import REPO_ROOT
from ..versions import checkout_kafka_version
from .procs import ProcRecord, launch


def ensure_image(progress: Callable[[str], None] = quiet, kafka_version: str | None = None) -> str:
    """Builds the kafka-connect image from the stand-in bases unless one of the same inputs exists. Returns its id."""
    st = store()
    standins.ensure(REPO_ROOT, st, say=progress)
    spec = IMAGES["kafka-connect"]
    args = {b.arg: b.by_tag for b in read_bases(REPO_ROOT / spec.dockerfile)}
    args["KAFKA_VERSION"] = kafka_version or checkout_kafka_version(REPO_ROOT)
    ref = image_ref(kafka_version)
    wanted = inputs_hash(st, args["KAFKA_VERSION"])
    try:
        seen = json.loads(_record(st, ref).read_text())
    except (OSError, ValueError):
        seen = {}
    current = _image_id(st, ref)
    if current and seen == {"inputs": wanted, "id": current}:
        progress(f"{ref} is up to date with its inputs")
        return current
    standins.seed_maven_cache(st)
    iid = st.home / "kafka-connect-rehearsal.iid"
    log = st.home / "kafka-connect-rehearsal.log"
    argv = bud_command(st, dockerfile=spec.dockerfile, tags=[ref], build_args=args, labels={}, iidfile=iid, pull_never=True)
    argv[0] = shutil.which("buildah") or "buildah"
    progress(f"building {ref} with buildah (Kafka {args['KAFKA_VERSION']}; cached layers are reused)")
    with log.open("w") as out:
        code = subprocess.run(argv, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, env=st.env(), timeout=3600).returncode
    if code != 0:
        tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
        raise RuntimeError(f"building {ref} failed: {tail[0] if tail else code} (log: {log})")
    image_id = _image_id(st, ref) or iid.read_text().strip()
    _record(st, ref).write_text(json.dumps({"inputs": wanted, "id": image_id}))
    return image_id


def container_name(data_dir: Path, name: str) -> str:
    return f"msk-migrate-{name}-{hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:10]}"


def remove_container(data_dir: Path, name: str = "connect") -> None:
    """Removes the worker's working container (its writable copy of the image); no-op when absent."""
    _buildah(store(), "rm", container_name(data_dir, name), check=False)


def image_config(st: Store, ref: str) -> dict:
    data = json.loads(_buildah(st, "inspect", "--type", "image", ref).stdout)
    return (data.get("OCIv1") or {}).get("config") or {}


def start_image_worker(
    worker_env: dict[str, str],
    data_dir: Path,
    name: str = "connect",
    progress: Callable[[str], None] = quiet,
    kafka_version: str | None = None,
) -> ProcRecord:
    """Starts the worker from the image with ``worker_env``: the environment start_connect_worker
    renders for the local worker (worker.properties, REST credentials, secrets), minus host paths."""
    st = store()
    ensure_image(progress, kafka_version)
    ref = image_ref(kafka_version)
    config = image_config(st, ref)
    entrypoint = config.get("Entrypoint") or []
    if not entrypoint:
        raise RuntimeError(f"{ref} has no ENTRYPOINT")
    env = {**worker_env, "CONNECT_METRICS_BIND_HOST": "127.0.0.1"}
    cname = container_name(data_dir, name)
    _buildah(st, "rm", cname, check=False)
    _buildah(st, "from", "--pull=never", "--name", cname, ref, timeout=900)
    cfg = ["config"]
    for key, value in env.items():
        cfg += ["--env", f"{key}={value}"]
    _buildah(st, *cfg, cname)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "image.json").write_text(json.dumps({"image": ref, "container": cname, "entrypoint": entrypoint,
                                                     "user": config.get("User")}, indent=2))
    argv = [shutil.which("buildah") or "buildah", *st.global_args(), "run", "--isolation", "chroot", "--network", "host",
            cname, "--", *entrypoint, *(config.get("Cmd") or [])]
    progress(f"starting the Connect worker from {ref} (user {config.get('User')}, {' '.join(entrypoint)})")
    return launch(name, argv, data_dir / "connect.log", env=st.env())
