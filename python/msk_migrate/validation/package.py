"""Build what EMR / Glue need to run the validation job, into one directory to upload to S3:

    DEST/msk_migrate.zip        the package, for --py-files (EMR) / --extra-py-files (Glue), with
                                msk_migrate/VERSION (the installed version: a zip has no distribution metadata)
    DEST/spark_entry.py         the entry script
    DEST/jars/*.jar             spark-sql-kafka-0-10 of the cluster's Spark version, aws-msk-iam-auth and the
                                AWS SDK clients the driver uses (Secrets Manager, S3), minus what a Spark
                                distribution already ships

The driver needs nothing else: it imports the standard library and pyspark only, on Python 3.9 or later
(EMR 7.9 runs Amazon Linux 2023's 3.9, Glue 5.0 runs 3.11), and asks the clusters, Secrets Manager and S3
through the jars (tests/validation/test_validation_clean_room.py).

    python -m msk_migrate.validation.package DEST [--spark-version 3.5.4] [--scala 2.12]
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

from .. import versions
from .spark_local import artifact_name, resolve_jars

PKG_DIR = Path(__file__).resolve().parents[1]

def _entry(name: str) -> zipfile.ZipInfo:
    """A zip entry with fixed time and mode: the same files give the same zip, byte for byte (the job
    package is shipped and checked by its digest, :mod:`.job_package`)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def write_package_zip(zpath: Path) -> Path:
    """The ``msk_migrate`` package as a zip, plus ``msk_migrate/VERSION``: the project version from the
    installed distribution's metadata (its one source, pyproject.toml), which ``msk_migrate.__version__``
    reads when imported from the zip. Reproducible: sorted entries, fixed times and modes."""
    from importlib.metadata import version

    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(PKG_DIR.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc" and f.name != "VERSION":
                zf.writestr(_entry(f.relative_to(PKG_DIR.parent).as_posix()), f.read_bytes())
        zf.writestr(_entry(f"{PKG_DIR.name}/VERSION"), version("msk-migrate") + "\n")
    return zpath


def build(dest: Path, spark_version: str | None = None, scala: str | None = None) -> dict[str, object]:
    dest.mkdir(parents=True, exist_ok=True)
    zpath = write_package_zip(dest / "msk_migrate.zip")
    shutil.copy2(Path(__file__).with_name("spark_entry.py"), dest / "spark_entry.py")
    jars_dir = dest / "jars"
    jars_dir.mkdir(exist_ok=True)
    spark_version = spark_version or versions.spark_version()
    scala = scala or ("2.13" if spark_version.startswith("4.") else versions.scala_binary_version())
    shipped = set()
    try:
        import pyspark

        shipped = {artifact_name(j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    except ImportError:  # pragma: no cover
        pass
    jars = [j for j in resolve_jars(spark_version, scala) if artifact_name(j) not in shipped]
    for j in jars:
        shutil.copy2(j, jars_dir / Path(j).name)
    return {"zip": str(zpath), "entry": str(dest / "spark_entry.py"), "jars": sorted(p.name for p in jars_dir.glob("*.jar"))}


def main(argv: list[str] | None = None) -> int:
    """Behind the one error boundary (cliutil.run_guarded): bad input -> one line on stderr, exit 2."""
    from ..cliutil import ArgumentParser, run_guarded

    ap = ArgumentParser(prog="python -m msk_migrate.validation.package", description="Build the validation job's EMR/Glue artefacts.")
    ap.add_argument("dest", type=Path)
    ap.add_argument("--spark-version", help=f"Spark of the cluster (default {versions.spark_version()})")
    ap.add_argument("--scala", help="Scala binary version (default 2.12 for Spark 3.x, 2.13 for 4.x)")

    def run() -> int:
        args = ap.parse_args(argv)
        out = build(args.dest, args.spark_version, args.scala)
        jars = "\n         ".join(str(j) for j in out["jars"])  # type: ignore[attr-defined]
        print(f"package: {out['zip']}\nentry:   {out['entry']}\njars:    {jars}")
        return 0

    return run_guarded(run)


if __name__ == "__main__":
    sys.exit(main())
