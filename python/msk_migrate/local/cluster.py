"""One side of the local environment as a cluster: N brokers (KRaft voters, or ZooKeeper-era brokers with
their ZooKeeper), each a process of its own on the ports of its :class:`~.layout.ClusterLayout`, so a fault
test can stop, kill and start broker ``i``. Process records go through ``record`` (the harness's state).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from ..access.admin import quiet
from ..kafka.mm2_acls import forward_source_acls
from ..threads import run_all
from .acl import grant, mtls_client, scram_client
from .broker import AclSecurity, BrokerSpec, start_broker, wait_broker_ready
from .classpath import broker_classpath
from .layout import ClusterLayout, Node, admin_listener, bootstrap
from .pki import ADMIN_CN, BROKER_CN, TlsFiles, ensure_pki
from .procs import ProcRecord, port_open
from .scram import ADMIN_USER, MM2_USER, create_users, scram_users
from .shape import ClusterShape
from .zookeeper import start_zookeeper, wait_zookeeper_ready


class ClusterOps:
    """Start, stop and administer one side; process records go through ``record`` and ``procs`` (the
    harness's state), so a thread that starts a broker records it at once."""

    def __init__(self, shape: ClusterShape, layout: ClusterLayout, base_dir: Path,
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
        conf: dict[str, Any] = {"bootstrap.servers": self.layout.bootstrap(admin_listener(self.shape))}
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

    def mm2_secrets(self) -> dict[str, str]:
        """MM2's user on a secured side, by purpose (username, password, ca); {} on a plaintext side."""
        if self.shape.security != "scram-tls":
            return {}
        return {"username": MM2_USER, "password": scram_users(self.dir)[MM2_USER], "ca": self.tls.ca.read_text()}

    # ---- processes -----------------------------------------------------------------------------
    def process_names(self) -> list[str]:
        """Every process of this side, brokers first (the order to stop them in)."""
        names = [n.name for n in sorted(self.layout.nodes, key=lambda n: n.id, reverse=True)]
        return names + ([self.layout.zookeeper.name] if self.layout.zookeeper else [])

    def _zk_connect(self) -> str | None:
        zk = self.layout.zookeeper
        return f"127.0.0.1:{zk.port}" if zk else None

    def ensure_zookeeper(self) -> None:
        zk = self.layout.zookeeper
        if not zk:
            return
        rec = self.procs(zk.name)
        if rec and rec.alive() and port_open(zk.port):
            return
        self.progress(f"starting {self.shape.role} ZooKeeper")
        rec, _ = start_zookeeper(self.dir / "zookeeper", broker_classpath(self.shape), zk.name, zk.port)
        self.record(zk.name, rec)
        wait_zookeeper_ready(rec, zk.port)

    def _spec(self, node: Node) -> BrokerSpec:
        s = self.shape
        acl = None
        if s.security == "scram-tls":
            t = self.tls
            acl = AclSecurity(ca_pem=t.ca, keystore_p12=t.broker_keystore,
                              keystore_password=t.broker_keystore_password.read_text(),
                              super_users=[f"User:CN={BROKER_CN}", f"User:CN={ADMIN_CN}", f"User:{ADMIN_USER}"])
        quorum = None
        if s.mode == "kraft":
            quorum = ",".join(f"{n.id}@127.0.0.1:{n.ports['CONTROLLER']}" for n in self.layout.nodes)
        return BrokerSpec(s.role, s.kafka_version, broker_classpath(s), self.dir / f"broker-{node.id}",
                          auto_create_topics=s.role == "source", heap=s.heap, ports=dict(node.ports), node_id=node.id,
                          cluster_size=s.brokers, quorum=quorum, cluster_id=self.layout.cluster_id,
                          zookeeper=self._zk_connect(), acl=acl, name=node.name)

    def node(self, node_id: int) -> Node:
        try:
            return self.layout.node(node_id)
        except ValueError as exc:
            raise ValueError(f"{self.shape.role} has {exc}") from None

    def _alive(self, node: Node) -> bool:
        rec = self.procs(node.name)
        return bool(rec and rec.alive() and port_open(node.ports[admin_listener(self.shape)]))

    def start_nodes(self, node_ids: list[int] | None = None) -> list[int]:
        """Start the given (default: every dead) broker(s) on their ports; wait until each is ready."""
        todo = [self.node(i) for i in node_ids] if node_ids else list(self.layout.nodes)
        todo = [n for n in todo if not self._alive(n)]
        if not todo:
            return []
        self.ensure_zookeeper()
        what = "ZooKeeper" if self.shape.mode == "zookeeper" else "KRaft"
        self.progress(f"starting {self.shape.role} cluster (Kafka {self.shape.kafka_version}, {what}, "
                      f"broker(s) {', '.join(str(n.id) for n in todo)} of {self.shape.brokers})")
        specs = [(n, self._spec(n)) for n in todo]  # classpaths resolved once, before the parallel starts

        def launch(n: Node, spec: BrokerSpec) -> ProcRecord:  # KRaft storage format is a JVM run per node
            rec, _port = start_broker(spec)
            self.record(n.name, rec)
            return rec

        started = run_all([partial(launch, n, spec) for n, spec in specs])
        conf = {k: v for k, v in self.admin_client_conf().items() if k != "bootstrap.servers"}
        port = admin_listener(self.shape)
        run_all([partial(wait_broker_ready, rec, n.ports[port], timeout=180, client=conf, node_id=n.id)
                 for n, rec in zip(todo, started, strict=True)])
        return [n.id for n in todo]

    def secure(self) -> None:
        """Once per cluster: the SCRAM users, and the MM2 user's forward ACLs (read-only)."""
        if self.shape.security != "scram-tls" or self.layout.secured:
            return
        self.progress(f"creating SCRAM users and MirrorMaker 2's ACLs on the {self.shape.role} cluster")
        admin = AdminClient(quiet(self.admin_client_conf()))
        create_users(admin, scram_users(self.dir))
        grant(admin, f"User:{MM2_USER}", forward_source_acls())
        self.layout.secured = True
