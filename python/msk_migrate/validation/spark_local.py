"""Local Spark for ``msk-migrate validate``: the spark-sql-kafka jars of the installed PySpark's exact
version (and aws-msk-iam-auth), resolved by Maven from jvm/classpaths/spark-kafka (pinned in
jvm/pom.xml) and added with ``spark.jars`` — no Ivy download at run time."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .. import versions
from ..access.spark_options import REDACTION_REGEX
from ..errors import UsageError
from ..paths import JVM_DIR, LOCAL_DIR

_VERSIONED = re.compile(r"^(?P<artifact>.+)-(?P<version>\d[^-]*(?:-[A-Za-z0-9.]+)*)\.jar$")


def require_spark() -> tuple[str, str]:
    """(pyspark version, scala binary version) of the installed PySpark; clear errors when absent."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise UsageError("java", "no Java runtime found", "install Java 17 (apt-get install openjdk-17-jre-headless)")
    try:
        import pyspark
    except ImportError:
        raise UsageError("pyspark", "not installed", "pip install 'msk-migrate[spark]' (pyspark==3.5.7)") from None
    jars = Path(pyspark.__file__).parent / "jars"
    scala = "2.12"
    for jar in jars.glob("spark-core_*.jar"):
        scala = jar.name.split("_", 1)[1].split("-", 1)[0]
    return pyspark.__version__, scala


def artifact_name(jar: str) -> str:
    m = _VERSIONED.match(Path(jar).name)
    return m.group("artifact") if m else Path(jar).stem


def resolve_jars(spark_version: str, scala: str) -> list[str]:
    """Absolute jar paths (spark-sql-kafka + deps + aws-msk-iam-auth) for this Spark version."""
    override = os.environ.get("MSK_MIGRATE_SPARK_JARS")
    if override:
        return [j for j in re.split(r"[,:]", override) if j]
    pinned = versions.spark_version() == spark_version and versions.scala_binary_version() == scala
    if pinned:
        try:
            from ..local.classpath import classpath  # shared with the local harness (.local/classpath/)

            return classpath("spark-kafka").split(":")
        except ImportError:  # pragma: no cover - harness module absent
            pass
    out = LOCAL_DIR / "classpath" / f"spark-kafka-{spark_version}_{scala}.txt"
    inputs = [JVM_DIR / "pom.xml", JVM_DIR / "classpaths" / "spark-kafka" / "pom.xml"]
    if not out.exists() or any(f.stat().st_mtime > out.stat().st_mtime for f in inputs):
        mvn = shutil.which("mvn")
        if not mvn:
            raise UsageError("mvn", "Maven not found on PATH", "install Maven 3.8+ (apt-get install maven)")
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            mvn, "-q", "-B", "-f", str(JVM_DIR / "pom.xml"), "-pl", "classpaths/spark-kafka", "package",
            f"-Dclasspath.file={out}", f"-Dspark.version={spark_version}", f"-Dscala.binary.version={scala}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "; ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise UsageError("spark-kafka jars", f"Maven could not resolve them: {tail}", "check network access to Maven Central")
    return out.read_text().strip().split(":")


def job_jars() -> list[str]:
    """The resolved jars minus artifacts PySpark already ships (its own versions win)."""
    spark_version, scala = require_spark()
    import pyspark

    shipped = {artifact_name(j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return [j for j in resolve_jars(spark_version, scala) if artifact_name(j) not in shipped]


#: Spark's own log4j2 configuration for the local driver: nothing on the console unless --verbose
#: (Spark's defaults print WARN lines — loopback hostname, native-hadoop — before ours is applied).
#: The root stays at WARN (any other root level makes PySpark print "Setting default log level");
#: the console appender's threshold is what silences it.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = {level}
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""

#: Set by ``validate --verbose`` (commands/validate_console.py) before the session starts: Spark's WARN lines on stderr.
VERBOSE = False


def _log4j2_file(level: str) -> Path:
    path = LOCAL_DIR / "spark" / f"log4j2-{level}.properties"
    if not path.exists() or path.read_text() != _LOG4J2.format(level=level):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_LOG4J2.format(level=level))
    return path


def local_spark(master: str = "local[*]", driver_memory: str = "2g"):
    """The active SparkSession, or a new local one with the Kafka jars (quiet, no UI, bound to 127.0.0.1).

    The jars go on the driver JVM's class path (``spark.driver.extraClassPath``), not ``spark.jars``:
    in local mode the executor is the driver JVM, so nothing is served, fetched or copied per task."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    jars = job_jars()
    level = "warn" if VERBOSE else "off"
    java_opts = f"-Dderby.system.home={LOCAL_DIR / 'derby'} -Dlog4j2.configurationFile={_log4j2_file(level)}"
    spark = (
        SparkSession.builder.master(master)
        .appName("msk-migrate-validate")
        .config("spark.driver.extraClassPath", os.pathsep.join(jars))
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.redaction.regex", REDACTION_REGEX)
        .config("spark.sql.warehouse.dir", str(LOCAL_DIR / "spark-warehouse"))
        .config("spark.driver.extraJavaOptions", java_opts)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel(level.upper())
    return spark
