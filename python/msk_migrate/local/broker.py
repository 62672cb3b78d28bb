"""One KRaft Kafka node (combined broker+controller) started from the Maven classpath.

The local source cluster runs Kafka ``versions.kafka_version()`` (3.9.x), the target
``versions.kafka_target_version()`` (4.1.x) like an MSK cluster: ``auto.create.topics.enable=false``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient

from .procs import ProcRecord, free_port, launch, port_open, wait_ready

LOG4J1 = """log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=WARN
log4j.logger.org.apache.kafka=WARN
log4j.logger.kafka.server.KafkaServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
"""
LOG4J2 = """status = error
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
logger.broker.name = kafka.server.BrokerServer
logger.broker.level = INFO
"""


@dataclass
class BrokerSecurity:
    """Authenticated listeners next to PLAINTEXT, as plain Kafka configuration (no authorizer: any
    authenticated principal may do anything): ``SASL_SSL`` with SCRAM users created at storage format
    (``--add-scram``, KRaft) and ``SSL`` requiring a client certificate. TLS material is PEM files:
    ``ca_pem`` (trust store, signs client certificates) and ``keystore_pem`` (the broker's unencrypted
    PKCS#8 key followed by its certificate chain)."""

    ca_pem: Path
    keystore_pem: Path
    scram_users: dict[str, str]
    scram_mechanism: str = "SCRAM-SHA-512"
    #: ACL authorizer on (KRaft StandardAuthorizer); these principals are super users (the PLAINTEXT and
    #: controller listeners' User:ANONYMOUS must be one, or the broker cannot reach its controller).
    super_users: tuple[str, ...] | None = None


@dataclass
class BrokerSpec:
    role: str  #: "source" or "target"
    version: str
    classpath: str
    data_dir: Path
    auto_create_topics: bool
    heap: str = "384m"
    security: BrokerSecurity | None = None
    #: listener name -> port, filled by :func:`start_broker` (PLAINTEXT, and SASL_SSL/SSL with ``security``)
    ports: dict[str, int] = field(default_factory=dict)


def _security_properties(sec: BrokerSecurity, sasl_port: int, ssl_port: int) -> dict[str, str]:
    return {
        "listeners": f",SASL_SSL://127.0.0.1:{sasl_port},SSL://127.0.0.1:{ssl_port}",
        "advertised.listeners": f",SASL_SSL://127.0.0.1:{sasl_port},SSL://127.0.0.1:{ssl_port}",
        "listener.security.protocol.map": ",SASL_SSL:SASL_SSL,SSL:SSL",
        "sasl.enabled.mechanisms": sec.scram_mechanism,
        f"listener.name.sasl_ssl.{sec.scram_mechanism.lower()}.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(sec.keystore_pem),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(sec.ca_pem),
        "ssl.endpoint.identification.algorithm": "https",
        **({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": ";".join(sec.super_users)} if sec.super_users else {}),
    }


def _properties(spec: BrokerSpec, port: int, cport: int) -> str:
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{cport}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(spec.data_dir / "log"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "4",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "true" if spec.auto_create_topics else "false",
        "unclean.leader.election.enable": "false",
        "log.cleaner.backoff.ms": "1000",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "log.cleaner.threads": "1",
        "num.recovery.threads.per.data.dir": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
    }
    if spec.security:
        extra = _security_properties(spec.security, spec.ports["SASL_SSL"], spec.ports["SSL"])
        for key in ("listeners", "advertised.listeners", "listener.security.protocol.map"):
            props[key] += extra.pop(key)
        props.update(extra)
    return "".join(f"{k}={v}\n" for k, v in props.items())


def _java_cmd(spec: BrokerSpec, main: str, *args: str) -> list[str]:
    return [
        "java", f"-Xmx{spec.heap}", "-Xms128m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
        f"-Dlog4j.configuration=file:{spec.data_dir / 'log4j.properties'}",
        f"-Dlog4j2.configurationFile={spec.data_dir / 'log4j2.properties'}",
        f"-Dkafka.logs.dir={spec.data_dir / 'logs'}",
        "-cp", spec.classpath, main, *args,
    ]


def start_broker(spec: BrokerSpec) -> tuple[ProcRecord, int]:
    """Format storage on first start, launch the node, return (process record, client port)."""
    import subprocess

    spec.data_dir.mkdir(parents=True, exist_ok=True)
    (spec.data_dir / "log4j.properties").write_text(LOG4J1)
    (spec.data_dir / "log4j2.properties").write_text(LOG4J2)
    ports_file = spec.data_dir / "ports"
    if ports_file.exists():  # restart keeps the ports (clients and Connect configs point at them)
        port, cport, *secure = (int(p) for p in ports_file.read_text().split())
    else:
        port, cport = free_port(), free_port()
        secure = [free_port(), free_port()] if spec.security else []
        ports_file.write_text(" ".join(str(p) for p in (port, cport, *secure)))
    spec.ports = {"PLAINTEXT": port}
    if spec.security:
        spec.ports.update(SASL_SSL=secure[0], SSL=secure[1])
    props = spec.data_dir / "server.properties"
    props.write_text(_properties(spec, port, cport))
    if not (spec.data_dir / "log" / "meta.properties").exists():
        import base64

        cid = "-"
        while cid.startswith("-"):  # the storage tool would read a leading '-' as an option
            cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        scram = []
        if spec.security:
            mech = spec.security.scram_mechanism
            for user, password in spec.security.scram_users.items():
                scram += ["--add-scram", f"{mech}=[name={user},password={password}]"]
        fmt = subprocess.run(
            _java_cmd(spec, "kafka.tools.StorageTool", "format", "-t", cid, "-c", str(props), *scram),
            capture_output=True, text=True,
        )
        if fmt.returncode != 0:
            raise RuntimeError(f"{spec.role} broker: storage format failed: {fmt.stdout}{fmt.stderr}")
    rec = launch(f"{spec.role}-broker", _java_cmd(spec, "kafka.Kafka", str(props)), spec.data_dir / "broker.log")
    return rec, port


def wait_broker_ready(rec: ProcRecord, port: int, timeout: float = 120.0) -> None:
    def probe() -> bool:
        if not port_open(port):
            return False
        return bool(AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"}).list_topics(timeout=5).brokers)

    wait_ready(rec, probe, timeout, log_lines=20)
