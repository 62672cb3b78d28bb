"""The validation job's package in the stack's bucket: shipped by the build module, checked before a run.

``./build_images.py ACCOUNT REGION --env ENV`` builds the package (:mod:`.package`: ``msk_migrate.zip``,
``spark_entry.py``, ``jars/``) for the release the environment's application runs and ships it by
content::

    s3://<config bucket>/validation/job/<version>/<digest>/...   the files, never overwritten
    s3://<config bucket>/validation/job/<version>/spark_entry.py the digest's entry script again, at a key
                                                                 that does not change: the Glue job's script
    s3://<config bucket>/validation/job/<version>/manifest.json  written last: which digest, for which release

``validate --on emr-serverless`` / ``--on glue`` never upload. It reads the manifest of its own version and refuses
(one line, exit 2, nothing submitted) a package that is missing, incomplete, built for another Spark
than the application's release, or built from other code than the submitting one (the zip is built
byte for byte reproducibly, so its digest is the code's).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..aws import emr_serverless as emr_mod
from ..aws import glue as glue_mod
from ..errors import UnreachableError, UsageError

KIND = "msk-migrate/validation-job-package"
MANIFEST = "manifest.json"
SHIP_FIX = "ship this version's package: ./build_images.py ACCOUNT REGION --env ENV"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Manifest:
    """What was shipped: the files by sha256, the release they were built for, and the digest over both."""

    tool_version: str
    release_label: str
    #: the release's Spark (what the application runs)
    spark_version: str
    #: the Spark whose spark-sql-kafka connector the package's jars hold (jvm/pom.xml's pin: Maven Central here
    #: serves that line's connector only; docs/validation.md says what is verified for the release's own Spark)
    connector_spark: str
    files: dict[str, str]

    @property
    def digest(self) -> str:
        canonical = json.dumps({"release_label": self.release_label, "spark_version": self.spark_version,
                                "connector_spark": self.connector_spark, "files": self.files},
                               sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def prefix(self) -> str:
        return f"{emr_mod.job_prefix(self.tool_version)}{self.digest}/"

    def to_json(self) -> str:
        return json.dumps({"kind": KIND, "tool_version": self.tool_version, "release_label": self.release_label,
                           "spark_version": self.spark_version, "connector_spark": self.connector_spark, "digest": self.digest,
                           "files": self.files}, indent=2, sort_keys=True)

    @classmethod
    def of_directory(cls, built: Path, release_label: str, spark_version: str, connector_spark: str) -> Manifest:
        files = {p.relative_to(built).as_posix(): _sha256(p) for p in sorted(built.rglob("*")) if p.is_file()}
        return cls(__version__, release_label, spark_version, connector_spark, files)

    @classmethod
    def parse(cls, body: bytes, where: str, option: str = emr_mod.OPTION) -> Manifest:
        try:
            doc = json.loads(body)
            if doc.get("kind") != KIND:
                raise ValueError(f"kind {doc.get('kind')!r}")
            found = cls(doc["tool_version"], doc["release_label"], doc["spark_version"], doc["connector_spark"], dict(doc["files"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(option, f"{where} is not a job package manifest ({exc})", SHIP_FIX) from None
        if found.digest != doc.get("digest"):
            raise UsageError(option, f"{where}: its digest does not match its files", SHIP_FIX)
        return found

    def package(self, bucket: str) -> emr_mod.JobPackage:
        prefix = self.prefix()
        return emr_mod.JobPackage(bucket, prefix, entry=prefix + "spark_entry.py", zip=prefix + "msk_migrate.zip",
                                  jars=tuple(sorted(prefix + f for f in self.files if f.startswith("jars/") and f.endswith(".jar"))))


def local_code_digest() -> str:
    """The sha256 of the ``msk_migrate.zip`` this installation builds (reproducible: fixed order and times)."""
    from .package import write_package_zip

    with tempfile.TemporaryDirectory(prefix="msk-migrate-zip-") as tmp:
        return _sha256(write_package_zip(Path(tmp) / "msk_migrate.zip"))


def _manifest_key(version: str) -> str:
    return emr_mod.job_prefix(version) + MANIFEST


def read_manifest(s3: Any, bucket: str, version: str = __version__, option: str = emr_mod.OPTION) -> Manifest | None:
    """The shipped manifest of ``version``; None when there is none."""
    key = _manifest_key(version)
    try:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except Exception as exc:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        if code in ("NoSuchKey", "404"):
            return None
        raise UnreachableError(f"s3://{bucket}/{key}: {str(exc).splitlines()[0]}") from None
    return Manifest.parse(body, f"s3://{bucket}/{key}", option)


def _read(s3: Any, bucket: str, key: str) -> bytes | None:
    """An object's bytes; None when there is none."""
    try:
        return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    except Exception as exc:
        if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise UnreachableError(f"s3://{bucket}/{key}: {str(exc).splitlines()[0]}") from None


def _stable_entry_current(s3: Any, bucket: str, manifest: Manifest) -> bool:
    body = _read(s3, bucket, glue_mod.entry_key(manifest.tool_version))
    return body is not None and hashlib.sha256(body).hexdigest() == manifest.files.get("spark_entry.py")


def ship(s3: Any, bucket: str, progress: Callable[[str], None], *, release_label: str = emr_mod.RELEASE_LABEL,
         spark_version: str = emr_mod.RELEASE_SPARK) -> tuple[Manifest, bool]:
    """Build the package for ``release_label`` and ship it; returns the manifest and whether anything was
    uploaded (a package of the same digest already shipped is kept as it is). The manifest goes last, so a
    run never reads one that names files not yet there."""
    from .. import versions
    from .package import build

    connector = versions.spark_version()
    with tempfile.TemporaryDirectory(prefix="msk-migrate-job-") as tmp:
        progress(f"validation job: building msk-migrate {__version__} for {release_label} (Spark {spark_version}; "
                 f"spark-sql-kafka {connector})")
        build(Path(tmp), connector)
        manifest = Manifest.of_directory(Path(tmp), release_label, spark_version, connector)
        current = read_manifest(s3, bucket)
        entry_key = glue_mod.entry_key(__version__)
        if current is not None and current.digest == manifest.digest:
            if _stable_entry_current(s3, bucket, manifest):
                progress(f"validation job: s3://{bucket}/{manifest.prefix()} already holds it")
                return manifest, False
            progress(f"validation job: s3://{bucket}/{manifest.prefix()} already holds it; its entry script to s3://{bucket}/{entry_key}")
            try:
                s3.upload_file(str(Path(tmp) / "spark_entry.py"), bucket, entry_key)
            except Exception as exc:
                raise UnreachableError(f"upload to s3://{bucket}/: {str(exc).splitlines()[0]}") from None
            return manifest, True
        progress(f"validation job: uploading to s3://{bucket}/{manifest.prefix()}")
        try:
            for rel in manifest.files:
                s3.upload_file(str(Path(tmp) / rel), bucket, manifest.prefix() + rel)
            # The Glue job's script (a property of the job, written by the stack only): the digest's entry script
            # again at a key that does not change; the manifest, written last, names its sha256.
            s3.upload_file(str(Path(tmp) / "spark_entry.py"), bucket, entry_key)
            s3.put_object(Bucket=bucket, Key=_manifest_key(__version__), Body=manifest.to_json().encode(),
                          ContentType="application/json")
        except Exception as exc:
            raise UnreachableError(f"upload to s3://{bucket}/: {str(exc).splitlines()[0]}") from None
    return manifest, True


def _checked(s3: Any, bucket: str, option: str, release: tuple[str, str] | None) -> tuple[Manifest, emr_mod.JobPackage]:
    """This version's manifest and package: there, built for ``release`` (label of the home, what it runs) when
    given, from this code, complete; UsageError (exit 2, nothing submitted) naming ``option`` and the fix."""
    where = f"s3://{bucket}/{emr_mod.job_prefix(__version__)}"
    manifest = read_manifest(s3, bucket, option=option)
    if manifest is None:
        raise UsageError(option, f"no validation job package of msk-migrate {__version__} in {where}", SHIP_FIX)
    if release is not None and release[0] != manifest.release_label:
        raise UsageError(option, f"the package in {where} is built for {manifest.release_label} (Spark "
                         f"{manifest.spark_version}); {release[1]}", f"{SHIP_FIX}, after deploying the stack of this version")
    if manifest.files.get("msk_migrate.zip") != local_code_digest():
        raise UsageError(option, f"the package in {where} was built from other code than this msk-migrate "
                         f"{__version__} (msk_migrate.zip sha256 {manifest.files.get('msk_migrate.zip', '?')[:12]}…)", SHIP_FIX)
    package = manifest.package(bucket)
    present = {o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=package.prefix)
               for o in page.get("Contents", [])}
    missing = sorted(rel for rel in manifest.files if package.prefix + rel not in present)
    if missing:
        raise UsageError(option, f"the package s3://{bucket}/{package.prefix} is incomplete ({missing[0]} missing)", SHIP_FIX)
    return manifest, package


def verified(s3: Any, bucket: str, application: dict[str, Any]) -> emr_mod.JobPackage:
    """This version's shipped package, checked against the application's release and this code; UsageError
    (exit 2, nothing submitted) naming what does not match and the fix."""
    release = application.get("releaseLabel")
    return _checked(s3, bucket, emr_mod.OPTION,
                    (release, f"the application {application.get('name')} runs {release}") if release else None)[1]


def verified_for_glue(s3: Any, bucket: str) -> emr_mod.JobPackage:
    """This version's shipped package for the Glue job (whose release :func:`.glue.find_job` checked): from this
    code and complete, and the entry script at the job's digest-free script location is this package's one
    (sha256 as in the manifest); UsageError (exit 2, nothing started) otherwise."""
    manifest, package = _checked(s3, bucket, glue_mod.OPTION, None)
    if not _stable_entry_current(s3, bucket, manifest):
        raise UsageError(glue_mod.OPTION, f"the Glue job's script s3://{bucket}/{glue_mod.entry_key(__version__)} is missing or "
                         f"not the entry script of the package s3://{bucket}/{package.prefix}", SHIP_FIX)
    return package
