"""One side of the local environment as a cluster: N brokers (KRaft voters, or Kafka 2.8 brokers with their
ZooKeeper), each a process of its own with fixed ports, so a fault test can stop, kill and start broker ``i``.

The layout lives in the environment's state.json under ``clusters.<role>``::

    {"nodes": [{"id": 1, "name": "source-broker", "ports": {"SASL_SSL": .., "INTERNAL": ..}}, ...],
     "zookeeper": {"name": "source-zookeeper", "port": ..} | null, "cluster_id": "..", "secured": true}

Node 1 keeps the historical process name ``<role>-broker``; node i > 1 is ``<role>-broker-<i>``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from ..access.admin import quiet
from ..kafka.mm2_acls import forward_source_acls
from .acl import grant, mtls_client, scram_client
from .broker import AclSecurity, BrokerSpec, new_cluster_id, start_broker, wait_broker_ready
from .classpath import classpath
from .pki import ADMIN_CN, BROKER_CN, TlsFiles, ensure_pki
from .procs import ProcRecord, free_port, port_open
from .scram import ADMIN_USER, MM2_USER, create_users, scram_users
from .shape import ClusterShape
from .zookeeper import start_zookeeper, wait_zookeeper_ready


def broker_name(role: str, node_id: int) -> str:
    return f"{role}-broker" if node_id == 1 else f"{role}-broker-{node_id}"


def zookeeper_name(role: str) -> str:
    return f"{role}-zookeeper"


def client_listener(shape: ClusterShape) -> str:
    """The listener applications and MM2 use: SASL_SSL on the secured shape, else PLAINTEXT."""
    return "SASL_SSL" if shape.security == "scram-tls" else "PLAINTEXT"


def admin_listener(shape: ClusterShape) -> str:
    """The listener the harness itself probes and administers through (mTLS INTERNAL when secured)."""
    return "INTERNAL" if shape.security == "scram-tls" else "PLAINTEXT"


def plan_layout(shape: ClusterShape) -> dict[str, Any]:
    """Ports of every node, chosen once (KRaft voters must all know each controller port)."""
    listeners = [client_listener(shape)]
    if shape.security == "scram-tls":
        listeners.append("INTERNAL")
    if shape.mode == "kraft":
        listeners.append("CONTROLLER")
    nodes = [{"id": i, "name": broker_name(shape.role, i), "ports": {lis: free_port() for lis in listeners}}
             for i in range(1, shape.brokers + 1)]
    zk = {"name": zookeeper_name(shape.role), "port": free_port()} if shape.mode == "zookeeper" else None
    return {"nodes": nodes, "zookeeper": zk, "cluster_id": new_cluster_id(), "secured": False}


def bootstrap(shape: ClusterShape, layout: dict[str, Any]) -> str:
    lis = client_listener(shape)
    return ",".join(f"127.0.0.1:{n['ports'][lis]}" for n in layout["nodes"])


class ClusterOps:
    """Start, stop and administer one side; state changes go through ``record`` (the harness's state)."""

    def __init__(self, shape: ClusterShape, layout: dict[str, Any], base_dir: Path,
                 record: Callable[[str, ProcRecord | None], None], procs: Callable[[str], ProcRecord | None],
                 progress: Callable[[str], None]):
        self.shape, self.layout, self.dir = shape, layout, base_dir / shape.role
        self.record, self.procs, self.progress = record, procs, progress

    # ---- security material ---------------------------------------------------------------------
    @property
    def tls(self) -> TlsFiles:
        return ensure_pki(self.dir / "tls")

    def admin_client_conf(self) -> dict[str, Any]:
        """librdkafka settings of the harness admin (bootstrap included)."""
        lis = admin_listener(self.shape)
        conf: dict[str, Any] = {"bootstrap.servers": ",".join(f"127.0.0.1:{n['ports'][lis]}" for n in self.layout["nodes"])}
        if self.shape.security == "scram-tls":
            t = self.tls
            conf.update(mtls_client(str(t.ca), str(t.admin_cert), str(t.admin_key)))
        return conf

    def user_client_conf(self, user: str = ADMIN_USER) -> dict[str, Any]:
        """librdkafka settings of an application (``user``) on the client listener (bootstrap included)."""
        conf: dict[str, Any] = {"bootstrap.servers": bootstrap(self.shape, self.layout)}
        if self.shape.security == "scram-tls":
            conf.update(scram_client(str(self.tls.ca), user, scram_users(self.dir)[user]))
        return conf

    # ---- processes -----------------------------------------------------------------------------
    def _zk_connect(self) -> str | None:
        zk = self.layout["zookeeper"]
        return f"127.0.0.1:{zk['port']}" if zk else None

    def ensure_zookeeper(self) -> None:
        zk = self.layout["zookeeper"]
        if not zk:
            return
        rec = self.procs(zk["name"])
        if rec and rec.alive() and port_open(zk["port"]):
            return
        self.progress(f"starting {self.shape.role} ZooKeeper")
        rec, _ = start_zookeeper(self.dir / "zookeeper", classpath("kafka-zk"), zk["name"], zk["port"])
        self.record(zk["name"], rec)
        wait_zookeeper_ready(rec, zk["port"])

    def _spec(self, node: dict[str, Any]) -> BrokerSpec:
        s = self.shape
        cp = classpath("kafka-zk" if s.mode == "zookeeper" else ("kafka-source" if s.role == "source" else "kafka-target"))
        acl = None
        if s.security == "scram-tls":
            t = self.tls
            acl = AclSecurity(ca_pem=t.ca, keystore_p12=t.broker_keystore,
                              keystore_password=t.broker_keystore_password.read_text(),
                              super_users=[f"User:CN={BROKER_CN}", f"User:CN={ADMIN_CN}", f"User:{ADMIN_USER}"])
        quorum = None
        if s.mode == "kraft":
            quorum = ",".join(f"{n['id']}@127.0.0.1:{n['ports']['CONTROLLER']}" for n in self.layout["nodes"])
        return BrokerSpec(s.role, s.kafka_version, cp, self.dir / f"broker-{node['id']}", auto_create_topics=s.role == "source",
                          heap=s.heap, ports=dict(node["ports"]), node_id=node["id"], cluster_size=s.brokers,
                          quorum=quorum, cluster_id=self.layout["cluster_id"], zookeeper=self._zk_connect(), acl=acl,
                          name=node["name"])

    def node(self, node_id: int) -> dict[str, Any]:
        for n in self.layout["nodes"]:
            if n["id"] == node_id:
                return n
        raise ValueError(f"{self.shape.role} has no broker {node_id} (brokers 1..{len(self.layout['nodes'])})")

    def _alive(self, node: dict[str, Any]) -> bool:
        rec = self.procs(node["name"])
        return bool(rec and rec.alive() and port_open(node["ports"][admin_listener(self.shape)]))

    def start_nodes(self, node_ids: list[int] | None = None) -> list[int]:
        """Start the given (default: every dead) broker(s) on their ports; wait until each is ready."""
        todo = [self.node(i) for i in node_ids] if node_ids else [n for n in self.layout["nodes"] if not self._alive(n)]
        todo = [n for n in todo if not self._alive(n)]
        if not todo:
            return []
        self.ensure_zookeeper()
        what = "ZooKeeper" if self.shape.mode == "zookeeper" else "KRaft"
        self.progress(f"starting {self.shape.role} cluster (Kafka {self.shape.kafka_version}, {what}, "
                      f"broker(s) {', '.join(str(n['id']) for n in todo)} of {self.shape.brokers})")
        specs = [(n, self._spec(n)) for n in todo]  # classpaths resolved once, before the parallel starts
        started: list[tuple[dict[str, Any], ProcRecord]] = []
        errors: list[BaseException] = []

        def launch(n: dict[str, Any], spec: BrokerSpec) -> None:  # KRaft storage format is a JVM run per node
            try:
                rec, _port = start_broker(spec)
                self.record(n["name"], rec)
                started.append((n, rec))
            except BaseException as exc:
                errors.append(exc)

        launchers = [threading.Thread(target=launch, args=pair) for pair in specs]
        for t in launchers:
            t.start()
        for t in launchers:
            t.join()
        if errors:
            raise errors[0]
        conf = {k: v for k, v in self.admin_client_conf().items() if k != "bootstrap.servers"}

        def wait(n: dict[str, Any], rec: ProcRecord) -> None:
            try:
                wait_broker_ready(rec, n["ports"][admin_listener(self.shape)], timeout=180, client=conf, node_id=n["id"])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=wait, args=pair) for pair in started]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return [n["id"] for n, _ in started]

    def secure(self) -> None:
        """Once per environment: the SCRAM users, and the MM2 user's forward ACLs (read-only)."""
        if self.shape.security != "scram-tls" or self.layout.get("secured"):
            return
        self.progress(f"creating SCRAM users and MirrorMaker 2's ACLs on the {self.shape.role} cluster")
        admin = AdminClient(quiet(self.admin_client_conf()))
        create_users(admin, scram_users(self.dir))
        grant(admin, f"User:{MM2_USER}", forward_source_acls())
        self.layout["secured"] = True
