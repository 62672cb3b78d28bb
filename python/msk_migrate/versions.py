"""Every version msk-migrate depends on, each read from the one place it is pinned.

* JVM side (Kafka, aws-msk-iam-auth, the JMX agent, Spark, Scala, the JVM project revision):
  ``jvm/pom.xml`` properties, read here and nowhere else (:func:`pom_properties`).
* Python side: the package's own version and its pins come from the installed distribution's
  metadata (``pyproject.toml`` at build time) through :mod:`importlib.metadata`.

``tests/unit/test_versions.py`` checks that the two sides agree where they describe one thing
(the project revision, the Spark version of the ``pyspark`` pin).
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

from .errors import UsageError
from .paths import JVM_DIR

_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
DIST_NAME = "msk-migrate"


@functools.cache
def pom_properties(jvm_dir: Path = JVM_DIR) -> dict[str, str]:
    """The ``<properties>`` of ``<jvm_dir>/pom.xml`` (the only reader of that file; ``jvm_dir`` is another
    checkout's jvm/ for build_images.py, which builds from a git checkout of its own)."""
    pom = jvm_dir / "pom.xml"
    try:
        root = ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise RuntimeError(f"cannot read {pom}: {exc}") from None
    props = root.find("m:properties", _NS)
    if props is None:
        raise RuntimeError(f"{pom} has no <properties>")
    return {child.tag.split("}", 1)[1]: (child.text or "").strip() for child in props if isinstance(child.tag, str)}


def _pom(key: str) -> str:
    try:
        return pom_properties()[key]
    except KeyError:
        raise RuntimeError(f"{JVM_DIR / 'pom.xml'} has no <{key}> property") from None


def jvm_revision() -> str:
    """The JVM modules' version (``${revision}``): names the policy JAR ``replication-policy-<rev>.jar``."""
    return _pom("revision")


def kafka_version() -> str:
    """Connect runtime and local source cluster."""
    return _pom("kafka.version")


def checkout_kafka_version(root: Path) -> str:
    """The Connect runtime pinned in another checkout's ``jvm/pom.xml`` (build_images.py builds from a git
    checkout of its own). Bad or missing pom: :class:`UsageError` naming the file."""
    pom = root / "jvm" / "pom.xml"
    try:
        value = pom_properties(root / "jvm").get("kafka.version", "")
    except RuntimeError as exc:
        raise UsageError(str(pom), f"cannot read the pinned kafka.version ({exc})") from None
    if not value:
        raise UsageError(str(pom), "has no kafka.version property")
    return value


def kafka_target_version() -> str:
    """Local target cluster (a 4.x line MSK offers)."""
    return _pom("kafka.target.version")


def kafka_zk_version() -> str:
    """Local source cluster of the ZooKeeper era (2.8.x; jvm/classpaths/kafka-zk)."""
    return _pom("kafka.zk.version")


def kafka_zk_oldest_version() -> str:
    """The oldest local source (2.4.x on ZooKeeper; jvm/classpaths/kafka-zk at this version)."""
    return _pom("kafka.zk.oldest.version")


def zookeeper_version() -> str:
    """The ZooKeeper ensemble the ZooKeeper-era source registers in."""
    return _pom("zookeeper.version")


def spark_version() -> str:
    return _pom("spark.version")


def scala_binary_version() -> str:
    return _pom("scala.binary.version")


def aws_msk_iam_auth_version() -> str:
    return _pom("aws-msk-iam-auth.version")


def jmx_exporter_version() -> str:
    return _pom("jmx-prometheus-javaagent.version")


def package_version() -> str:
    """The installed msk-migrate version (pyproject.toml's ``version``)."""
    return metadata.version(DIST_NAME)


def pinned_requirement(name: str, extra: str | None = None) -> str | None:
    """The exact version pyproject.toml pins for ``name`` (in ``extra`` when given), or None."""
    wanted = re.sub(r"[-_.]+", "-", name).lower()
    for req in metadata.requires(DIST_NAME) or []:
        m = re.match(r"\s*([A-Za-z0-9_.\-\[\]]+?)(?:\[[^\]]*\])?\s*==\s*([^;\s]+)\s*(?:;(.*))?$", req)
        if not m:
            continue
        req_name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        marker = m.group(3) or ""
        in_extra = f'extra == "{extra}"' in marker if extra else "extra ==" not in marker
        if req_name == wanted and in_extra:
            return m.group(2)
    return None


def apicurio_version() -> str:
    """Apicurio Registry, the schema registry the harness runs per side (jvm/classpaths/schema-registry)."""
    return _pom("apicurio.version")
