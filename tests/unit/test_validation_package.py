"""The EMR/Glue zip of the validation job carries the project version (importlib.metadata, the one source)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib.metadata import version


def test_validation_zip_carries_the_installed_version_and_the_package_reads_it_from_there(tmp_path):
    from msk_migrate.validation.package import write_package_zip

    zpath = write_package_zip(tmp_path / "msk_migrate.zip")
    with zipfile.ZipFile(zpath) as zf:
        assert zf.read("msk_migrate/VERSION").decode().strip() == version("msk-migrate")
        assert "msk_migrate/validation/spark_entry.py" in zf.namelist()
    # As on EMR: only the zip on the path, no distribution metadata (-S: no site-packages, -I: no user site).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    probe = subprocess.run(
        [sys.executable, "-I", "-S", "-c",
         f"import sys; sys.path.insert(0, {str(zpath)!r}); import msk_migrate; print(msk_migrate.__file__, msk_migrate.__version__)"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    where, got = probe.stdout.split()
    assert where.startswith(str(zpath)) and got == version("msk-migrate")
