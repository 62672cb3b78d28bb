"""Apicurio Registry processes for the harness and the tests: one in-memory registry per side.

The application is pinned in jvm/pom.xml (``apicurio.version``) and unpacked by Maven into
``.local/apicurio-<version>`` (scripts/setup-schema-registry.sh, or the first :func:`start_registry`).
It needs Java 21+: the JDK is ``$JAVA21_HOME`` or the newest JDK >= 21 under /usr/lib/jvm (the machine's
default ``java`` is 17). Both its HTTP and management ports are bound to 127.0.0.1 on free ports; the
Confluent-compatible API is at ``/apis/ccompat/v7``.

Invariant: a :class:`RegistryProcess` is a process this module started (pid + kernel start time, as
:mod:`.procs` records it); :meth:`RegistryProcess.stop` never signals anything else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .. import versions
from ..paths import JVM_DIR, LOCAL_DIR
from .classpath import require_tool
from .procs import ProcRecord, free_port, launch, stop, wait_ready

MODULE_POM = JVM_DIR / "classpaths" / "schema-registry" / "pom.xml"
MIN_JAVA = 21
#: Deletion is off by default in Apicurio 3; the migration tests soft-delete versions on the source.
APP_PROPERTIES = (
    "apicurio.rest.deletion.artifact-version.enabled=true",
    "apicurio.rest.deletion.artifact.enabled=true",
    "apicurio.rest.deletion.group.enabled=true",
)


def install_dir() -> Path:
    return LOCAL_DIR / f"apicurio-{versions.apicurio_version()}"


def ensure_installed() -> Path:
    """``quarkus-run.jar`` of the pinned Apicurio, unpacked by Maven when missing."""
    jar = install_dir() / "quarkus-run.jar"
    if jar.is_file():
        return jar
    mvn = require_tool("mvn", "install Maven 3.8+ (apt-get install maven)")
    proc = subprocess.run([mvn, "-q", "-B", "-f", str(MODULE_POM), "package", f"-Dapicurio.dir={install_dir()}"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not jar.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"maven could not unpack Apicurio Registry {versions.apicurio_version()}:\n{tail}")
    return jar


def _java_major(home: Path) -> int | None:
    try:
        text = (home / "release").read_text()
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)', text, re.M)
    return int(m.group(1)) if m else None


def find_java() -> str:
    """The ``java`` of a JDK >= 21: ``$JAVA21_HOME``, else the newest such JDK under /usr/lib/jvm."""
    explicit = os.environ.get("JAVA21_HOME")
    if explicit:
        home = Path(explicit)
        major = _java_major(home)
        if (home / "bin" / "java").is_file() and (major is None or major >= MIN_JAVA):
            return str(home / "bin" / "java")
        raise RuntimeError(f"JAVA21_HOME={explicit} is not a JDK {MIN_JAVA}+ (bin/java and release)")
    candidates = []
    for home in Path("/usr/lib/jvm").glob("*"):
        major = _java_major(home)
        if major and major >= MIN_JAVA and (home / "bin" / "java").is_file() and not home.is_symlink():
            candidates.append((major, str(home / "bin" / "java")))
    if not candidates:
        raise RuntimeError(f"Apicurio Registry needs Java {MIN_JAVA}+: install one under /usr/lib/jvm or set JAVA21_HOME")
    return max(candidates)[1]


@dataclass(frozen=True)
class RegistryProcess:
    """A running Apicurio Registry on 127.0.0.1:``port`` (its management port is ``management_port``)."""

    name: str
    port: int
    pid: int
    log: Path
    management_port: int = 0
    record: ProcRecord | None = field(default=None, compare=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ccompat_url(self) -> str:
        """The Confluent Schema Registry API (what ``msk-migrate schemas`` talks to)."""
        return self.base_url + "/apis/ccompat/v7"

    def alive(self) -> bool:
        return self.record is not None and self.record.alive()

    def stop(self) -> None:
        if self.record is not None:
            stop(self.record)


def command(java: str, jar: Path, port: int, management_port: int) -> list[str]:
    return [java, "-Xmx384m", "-XX:+UseSerialGC",
            "-Dquarkus.http.host=127.0.0.1", f"-Dquarkus.http.port={port}",
            "-Dquarkus.management.host=127.0.0.1", f"-Dquarkus.management.port={management_port}",
            *(f"-D{p}" for p in APP_PROPERTIES),
            "-jar", str(jar)]


def _ready(url: str) -> bool:
    with urllib.request.urlopen(url + "/subjects", timeout=2) as resp:
        return resp.status == 200 and isinstance(json.load(resp), list)


def start_registry(workdir: Path, name: str, port: int | None = None, timeout_s: float = 60) -> RegistryProcess:
    """Start an in-memory Apicurio Registry named ``name`` (logs under ``workdir``) on ``port`` (a free one
    when None) and wait until its Confluent API answers."""
    jar = ensure_installed()
    java = find_java()
    port = port or free_port()
    mgmt = free_port()
    log = Path(workdir) / f"{name}.log"
    rec = launch(name, command(java, jar, port, mgmt), log, cwd=jar.parent)
    proc = RegistryProcess(name=name, port=port, pid=rec.pid, log=log, management_port=mgmt, record=rec)
    try:
        wait_ready(rec, lambda: _ready(proc.ccompat_url), timeout=timeout_s)
    except BaseException:
        stop(rec)
        raise
    return proc


def from_record(rec: ProcRecord, port: int, management_port: int = 0) -> RegistryProcess:
    """The handle of a registry recorded earlier (``local up --schema-registry``)."""
    return RegistryProcess(name=rec.name, port=port, pid=rec.pid, log=Path(rec.log), management_port=management_port,
                           record=rec)
