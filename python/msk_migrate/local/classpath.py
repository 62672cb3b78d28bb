"""JVM classpaths resolved by Maven from jvm/ (the same poms the Connect image uses).

Each classpath is a file of absolute jar paths under .local/classpath/, rebuilt when a pom or the
policy sources change. Maven downloads into ~/.m2 once; later calls are offline-fast.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .. import versions
from ..errors import UsageError
from ..paths import JVM_DIR, LOCAL_DIR
from .shape import ClusterShape

#: name -> (maven module, extra args builder)
MODULES = {
    "connect": "classpaths/connect",
    "kafka-source": "classpaths/kafka-source",
    "kafka-target": "classpaths/kafka-target",
    "kafka-zk": "classpaths/kafka-zk",
    "spark-kafka": "classpaths/spark-kafka",
}

#: The pom property a ``kafka_version`` override sets, per classpath (default: the Connect runtime's).
VERSION_PROPERTY = {"kafka-zk": "kafka.zk.version"}


def broker_classpath(shape: ClusterShape) -> str:
    """The classpath a broker (and ZooKeeper) of ``shape`` runs from: the KRaft source or target line, or
    the ZooKeeper-era module at the shape's own Kafka version."""
    if shape.mode == "zookeeper":
        return classpath("kafka-zk", None if shape.kafka_version == versions.kafka_zk_version() else shape.kafka_version)
    return classpath("kafka-source" if shape.role == "source" else "kafka-target")


def _inputs(module: str) -> list[Path]:
    files = [JVM_DIR / "pom.xml", JVM_DIR / module / "pom.xml"]
    if module == "classpaths/connect":
        policy = JVM_DIR / "replication-policy"
        files += [policy / "pom.xml", *sorted((policy / "src" / "main").rglob("*.java"))]
        ext = JVM_DIR / "connect-extensions"
        files += [ext / "pom.xml", *sorted((ext / "src" / "main").rglob("*"))]
    return [f for f in files if f.exists()]


def require_tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if not path:
        raise UsageError(name, "not found on PATH", hint)
    return path


def _names_missing(out: Path) -> bool:
    """The resolved classpath names a jar or directory that is gone (a ``mvn clean``, or a file another checkout
    sharing this ``.local`` wrote with its own paths): resolved again rather than handed to a JVM that fails on it."""
    return any(entry and not Path(entry).exists() for entry in out.read_text().strip().split(":"))


def classpath(name: str, kafka_version: str | None = None) -> str:
    """Colon-separated classpath for ``name`` (see MODULES); builds it with Maven when stale.

    ``kafka_version`` overrides the module's Kafka version (:data:`VERSION_PROPERTY`): e.g. 4.1.2 for a 4.x
    Connect worker, or 2.4.1 for the older ZooKeeper-era source.
    """
    module = MODULES[name]
    tag = name if not kafka_version else f"{name}-{kafka_version}"
    out = LOCAL_DIR / "classpath" / f"{tag}.txt"
    stale = not out.exists() or any(f.stat().st_mtime > out.stat().st_mtime for f in _inputs(module)) or _names_missing(out)
    if stale:
        mvn = require_tool("mvn", "install Maven 3.8+ (apt-get install maven)")
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [mvn, "-q", "-B", "-f", str(JVM_DIR / "pom.xml"), "-pl", module, "-am", "package",
               "-DskipTests", f"-Dclasspath.file={out}"]
        if kafka_version:
            cmd.append(f"-D{VERSION_PROPERTY.get(name, 'kafka.version')}={kafka_version}")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
            raise RuntimeError(f"maven failed to resolve the {tag} classpath:\n" + "\n".join(tail))
    cp = out.read_text().strip()
    if name == "connect":
        # Reactor builds list the policy module as target/classes or the jar; prefer the jar.
        jar = JVM_DIR / "replication-policy" / "target" / f"replication-policy-{versions.jvm_revision()}.jar"
        cp = cp.replace(str(JVM_DIR / "replication-policy" / "target" / "classes"), str(jar))
        ext = JVM_DIR / "connect-extensions" / "target" / f"connect-extensions-{versions.pom_properties().get('project.version', '0.1.0')}.jar"
        cp = cp.replace(str(JVM_DIR / "connect-extensions" / "target" / "classes"), str(ext))
    return cp


def jar_in(cp: str, fragment: str) -> str:
    for entry in cp.split(":"):
        if fragment in Path(entry).name:
            return entry
    raise RuntimeError(f"no jar matching {fragment!r} on the classpath")
