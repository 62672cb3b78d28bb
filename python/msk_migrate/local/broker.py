"""One Kafka broker started from the Maven classpath: a KRaft node (combined broker+controller, one of
``cluster_size`` voters) or a ZooKeeper-era broker (Kafka 2.8 or 2.4, ``zookeeper`` set).

The local source cluster runs Kafka ``versions.kafka_version()`` (3.9.x, KRaft), ``versions.kafka_zk_version()``
(2.8.x, ZooKeeper) or ``versions.kafka_zk_oldest_version()`` (2.4.x, ZooKeeper), the target ``versions.kafka_target_version()`` (4.1.x)
like an MSK cluster: ``auto.create.topics.enable=false``, replication factor 3 and ``min.insync.replicas=2``
once it has 3 brokers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient

from ..access.admin import quiet
from .layout import new_cluster_id
from .procs import ProcRecord, free_port, launch, port_open, wait_ready
from .shape import default_heap

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
class AclSecurity:
    """The secured-cluster shape (``local up --source-security scram-tls``): clients reach the brokers only
    through ``SASL_SSL`` (SCRAM), brokers talk to each other (and, on KRaft, to the controllers) over an
    ``INTERNAL`` SSL listener that requires a certificate of the environment's CA, and the ACL authorizer is
    on (AclAuthorizer on ZooKeeper, StandardAuthorizer on KRaft) with ``super_users`` only. No PLAINTEXT
    listener. SCRAM users are created by the harness admin after start (:mod:`.scram`)."""

    ca_pem: Path
    keystore_p12: Path  #: the broker's key and certificate chain (PKCS#12)
    keystore_password: str
    super_users: list[str]  #: principals, e.g. ["User:CN=localhost", "User:admin"]
    scram_mechanism: str = "SCRAM-SHA-512"


@dataclass
class BrokerSpec:
    role: str  #: "source" or "target"
    version: str
    classpath: str
    data_dir: Path
    auto_create_topics: bool
    #: JVM heap (:func:`.shape.default_heap`: MSK_MIGRATE_LOCAL_BROKER_HEAP sizes the brokers for scale runs)
    heap: str = field(default_factory=default_heap)
    security: BrokerSecurity | None = None
    #: listener name -> port, filled by :func:`start_broker` (PLAINTEXT, and SASL_SSL/SSL with ``security``),
    #: or given in advance by a multi-broker cluster (every voter must know every controller port)
    ports: dict[str, int] = field(default_factory=dict)
    node_id: int = 1
    cluster_size: int = 1  #: brokers in the cluster: replication factor min(3, n), min.insync.replicas 2 from 3
    quorum: str | None = None  #: KRaft ``controller.quorum.voters`` (None: this node alone)
    cluster_id: str | None = None  #: KRaft storage cluster id shared by the nodes (None: a fresh one)
    zookeeper: str | None = None  #: ``zookeeper.connect``: a ZooKeeper-era broker (Kafka 2.8) instead of KRaft
    acl: AclSecurity | None = None
    name: str | None = None  #: process name (default ``<role>-broker``)


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


def _acl_properties(spec: BrokerSpec, acl: AclSecurity) -> dict[str, str]:
    """Listeners and authorizer of the secured shape (see :class:`AclSecurity`)."""
    p = spec.ports
    zk = spec.zookeeper is not None
    listeners = f"SASL_SSL://127.0.0.1:{p['SASL_SSL']},INTERNAL://127.0.0.1:{p['INTERNAL']}"
    props = {
        "listeners": listeners + ("" if zk else f",CONTROLLER://127.0.0.1:{p['CONTROLLER']}"),
        "advertised.listeners": listeners,
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,INTERNAL:SSL" + ("" if zk else ",CONTROLLER:SSL"),
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": acl.scram_mechanism,
        f"listener.name.sasl_ssl.{acl.scram_mechanism.lower()}.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.internal.ssl.client.auth": "required",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(acl.keystore_p12),
        "ssl.keystore.password": acl.keystore_password,
        "ssl.key.password": acl.keystore_password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(acl.ca_pem),
        "ssl.endpoint.identification.algorithm": "https",
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer" if zk
        else "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": ";".join(acl.super_users),
        "allow.everyone.if.no.acl.found": "false",
    }
    if not zk:
        props["listener.name.controller.ssl.client.auth"] = "required"
    return props


def _properties(spec: BrokerSpec, port: int, cport: int) -> str:
    rf = str(min(3, spec.cluster_size))
    isr = "2" if spec.cluster_size >= 3 else "1"
    props = {
        "process.roles": "broker,controller",
        "node.id": str(spec.node_id),
        "controller.quorum.voters": spec.quorum or f"{spec.node_id}@127.0.0.1:{cport}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(spec.data_dir / "log"),
        "num.partitions": "1",
        "default.replication.factor": rf,
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "transaction.state.log.num.partitions": "4",
        "group.initial.rebalance.delay.ms": "0",
        # A KRaft broker waits this long for the controllers to see it caught up (60 s default): a loaded
        # machine starting 3 voters at once needs longer, or the broker exits at start-up.
        "initial.broker.registration.timeout.ms": "300000",
        "auto.create.topics.enable": "true" if spec.auto_create_topics else "false",
        "unclean.leader.election.enable": "false",
        "log.cleaner.backoff.ms": "1000",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "log.cleaner.threads": "1",
        "num.recovery.threads.per.data.dir": "1",
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": isr,
    }
    if spec.zookeeper is not None:  # Kafka 2.8 on ZooKeeper: no KRaft keys, no share groups
        for key in ("process.roles", "node.id", "initial.broker.registration.timeout.ms", "controller.quorum.voters", "controller.listener.names",
                    "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr"):
            props.pop(key)
        props.update({"broker.id": str(spec.node_id), "zookeeper.connect": spec.zookeeper,
                      "zookeeper.connection.timeout.ms": "30000",
                      "listeners": f"PLAINTEXT://127.0.0.1:{port}",
                      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"})
    if spec.acl:
        props.update(_acl_properties(spec, spec.acl))
    elif spec.security:
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
    if spec.ports:  # a cluster chose every node's ports in advance (and keeps them across restarts)
        port, cport = spec.ports.get("PLAINTEXT", spec.ports.get("SASL_SSL", 0)), spec.ports.get("CONTROLLER", 0)
    else:
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
    props.touch(mode=0o600)
    props.chmod(0o600)  # the secured shape's keystore password is in it
    props.write_text(_properties(spec, port, cport))
    if spec.zookeeper is None and not (spec.data_dir / "log" / "meta.properties").exists():
        cid = spec.cluster_id or new_cluster_id()
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
    rec = launch(spec.name or f"{spec.role}-broker", _java_cmd(spec, "kafka.Kafka", str(props)), spec.data_dir / "broker.log")
    return rec, port


def wait_broker_ready(rec: ProcRecord, port: int, timeout: float = 120.0, client: dict[str, str] | None = None,
                      node_id: int | None = None) -> None:
    """Ready = the port answers and a metadata request lists brokers (``node_id`` among them when given).
    ``client``: librdkafka settings for a secured listener (the harness admin's mTLS ones)."""
    def probe() -> bool:
        if not port_open(port):
            return False
        conf = quiet({**(client or {}), "bootstrap.servers": f"127.0.0.1:{port}"})
        brokers = AdminClient(conf).list_topics(timeout=5).brokers
        return bool(brokers) and (node_id is None or node_id in brokers)

    wait_ready(rec, probe, timeout, log_lines=20)
