"""Where one side's processes listen: a node per broker with its ports by listener, the ZooKeeper of a
ZooKeeper-era source, and the cluster id. Chosen once per cluster (KRaft voters must all know every
controller port) and kept across restarts, so clients and the Connect worker's configs stay valid.

Node 1 keeps the process name ``<role>-broker``; node i > 1 is ``<role>-broker-<i>``. Nothing here opens a
connection or starts a process.
"""

from __future__ import annotations

import base64
import uuid

from pydantic import BaseModel, ConfigDict, Field

from .procs import free_port
from .shape import ClusterShape


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


def new_cluster_id() -> str:
    """A KRaft cluster id (base64url UUID) the storage tool accepts."""
    cid = "-"
    while cid.startswith("-"):  # the storage tool would read a leading '-' as an option
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    return cid


class Node(BaseModel):
    """One broker: its id, process name and port per listener (PLAINTEXT or SASL_SSL, INTERNAL, CONTROLLER)."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=1)
    name: str
    ports: dict[str, int]


class ZooKeeperNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    port: int


class ClusterLayout(BaseModel):
    """The ports and ids of one side; ``secured``: its SCRAM users and MM2's ACLs exist (done once)."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[Node]
    zookeeper: ZooKeeperNode | None = None
    cluster_id: str
    secured: bool = False

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise ValueError(f"no broker {node_id} (brokers 1..{len(self.nodes)})")

    def bootstrap(self, listener: str) -> str:
        return ",".join(f"127.0.0.1:{n.ports[listener]}" for n in self.nodes)


def plan_layout(shape: ClusterShape) -> ClusterLayout:
    """Free ports for every node of ``shape`` and a new cluster id."""
    listeners = [client_listener(shape)]
    if shape.security == "scram-tls":
        listeners.append("INTERNAL")
    if shape.mode == "kraft":
        listeners.append("CONTROLLER")
    nodes = [Node(id=i, name=broker_name(shape.role, i), ports={lis: free_port() for lis in listeners})
             for i in range(1, shape.brokers + 1)]
    zk = ZooKeeperNode(name=zookeeper_name(shape.role), port=free_port()) if shape.mode == "zookeeper" else None
    return ClusterLayout(nodes=nodes, zookeeper=zk, cluster_id=new_cluster_id())


def bootstrap(shape: ClusterShape, layout: ClusterLayout) -> str:
    """The client listener's bootstrap servers of one side."""
    return layout.bootstrap(client_listener(shape))


def registry_name(role: str) -> str:
    """Process name of ``role``'s schema registry (``local up --schema-registry``)."""
    return f"{role}-registry"


class RegistryPorts(BaseModel):
    """Where one side's schema registry listens: its HTTP port (the Confluent API under /apis/ccompat/v7)
    and its management port, both on 127.0.0.1."""

    model_config = ConfigDict(extra="forbid")

    port: int
    management_port: int

    @property
    def url(self) -> str:
        """The Confluent-compatible API the ``schemas`` commands talk to."""
        return f"http://127.0.0.1:{self.port}/apis/ccompat/v7"
