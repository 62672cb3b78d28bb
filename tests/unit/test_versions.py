"""Each version is pinned once; where two build systems describe the same thing, they must agree."""

from __future__ import annotations

from importlib import metadata

import msk_migrate
from msk_migrate import versions


def test_package_version_comes_from_the_distribution_metadata():
    assert msk_migrate.__version__ == metadata.version("msk-migrate") == versions.package_version()


def test_jvm_revision_is_the_python_package_version():
    assert versions.jvm_revision() == versions.package_version(), (
        "jvm/pom.xml <revision> and pyproject.toml version differ: bump both in one commit"
    )


def test_pyspark_pin_matches_the_spark_version_of_the_jvm_pins():
    pin = versions.pinned_requirement("pyspark", extra="spark")
    assert pin is not None, "pyproject.toml's [spark] extra must pin pyspark exactly"
    assert pin == versions.spark_version(), f"pyspark=={pin} but jvm/pom.xml spark.version={versions.spark_version()}"
    assert metadata.version("pyspark") == pin, "the installed pyspark is not the pinned one: run make setup"


def test_scala_binary_version_matches_the_pyspark_jars():
    from importlib.util import find_spec
    from pathlib import Path

    # The jars directory ships with the wheel: found without importing pyspark (py4j and all, about 1 s).
    spec = find_spec("pyspark")
    assert spec is not None and spec.origin, "pyspark is not installed: run make setup"
    jars = {p.name for p in (Path(spec.origin).parent / "jars").glob("spark-core_*.jar")}
    assert jars == {f"spark-core_{versions.scala_binary_version()}-{versions.spark_version()}.jar"}


def test_every_jvm_module_inherits_the_one_revision():
    import re

    from msk_migrate.paths import JVM_DIR

    for pom in JVM_DIR.rglob("pom.xml"):
        if "target" in pom.parts or pom == JVM_DIR / "pom.xml":
            continue
        text = pom.read_text()
        parent = re.search(r"<parent>.*?</parent>", text, re.S)
        assert parent and "<version>${revision}</version>" in parent.group(0), f"{pom}: parent version must be ${{revision}}"
        own = re.sub(r"<parent>.*?</parent>|<dependenc.*", "", text, flags=re.S)
        assert not re.search(r"<version>\d", own), f"{pom}: the module must not re-type a project version"
