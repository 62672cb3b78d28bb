"""Versions of the JVM side, read from jvm/pom.xml: the one place they are pinned."""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET

from .paths import JVM_DIR

_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@functools.cache
def pom_properties() -> dict[str, str]:
    root = ET.parse(JVM_DIR / "pom.xml").getroot()
    props = root.find("m:properties", _NS)
    return {child.tag.split("}", 1)[1]: (child.text or "").strip() for child in props}


def kafka_version() -> str:
    """Connect runtime and local source cluster."""
    return pom_properties()["kafka.version"]


def kafka_target_version() -> str:
    """Local target cluster (a 4.x line MSK offers)."""
    return pom_properties()["kafka.target.version"]


def spark_version() -> str:
    return pom_properties()["spark.version"]


def scala_binary_version() -> str:
    return pom_properties()["scala.binary.version"]


def aws_msk_iam_auth_version() -> str:
    return pom_properties()["aws-msk-iam-auth.version"]


def jmx_exporter_version() -> str:
    return pom_properties()["jmx-prometheus-javaagent.version"]
