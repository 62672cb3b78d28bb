"""Maven verifies every artefact it downloads (issue 37, supply chain): ``--strict-checksums`` lives once, in
jvm/.mvn/maven.config, which Maven reads for every build of jvm/pom.xml (the Makefile's JUnit run, the local
classpaths of msk_migrate.local.classpath, the Connect image's build stage, which copies jvm/ whole)."""

from __future__ import annotations

from msk_migrate.paths import JVM_DIR, REPO_ROOT


def test_every_maven_build_of_jvm_runs_with_strict_checksums() -> None:
    assert (JVM_DIR / ".mvn" / "maven.config").read_text().split() == ["--strict-checksums"]
    dockerfile = (REPO_ROOT / "images" / "kafka-connect" / "Dockerfile").read_text()
    assert "COPY jvm/ jvm/" in dockerfile and "-f jvm/pom.xml" in dockerfile
    assert "!jvm/" in (REPO_ROOT / ".dockerignore").read_text().splitlines()
