"""The shape of the local clusters: which Kafka the source runs (3.9 KRaft, or 2.8 or 2.4 on ZooKeeper), how many
brokers each side has, whether the source listens SCRAM-SHA-512 over TLS with its ACL authorizer on, and the
broker heap. Checked before anything starts: a wrong value is one line naming the option and the fix.

A third cluster, the *peer*, is optional (``--peer-brokers``): a plaintext KRaft cluster of the source's Kafka
line that the topology rehearsals use as a second source (consolidation), a second target (fan-out) or the
third hop of a forwarding chain. Its role name is ``peer``; its MM2 alias is ``peer`` too.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from .. import versions
from ..errors import UsageError
from .settings import LocalSettings

Security = Literal["plaintext", "scram-tls"]
#: What a broker JVM costs beyond its heap (metaspace, threads, direct buffers, page tables), measured on the
#: harness's brokers (RSS minus -Xmx after a rehearsal); with the Connect worker and the Spark validation
#: job on top (RESERVE_MIB) it decides how many brokers this machine can hold.
BROKER_OVERHEAD_MIB = 256
RESERVE_MIB = 2560
DEFAULT_HEAP = "384m"


def default_heap() -> str:
    """Broker heap of the harness unless --broker-heap says otherwise: MSK_MIGRATE_LOCAL_BROKER_HEAP sizes
    it for scale runs (e.g. 2g at 10,000 partitions) without editing code, else :data:`DEFAULT_HEAP`."""
    return LocalSettings.from_env().broker_heap or DEFAULT_HEAP


def source_versions() -> dict[str, str]:
    """Kafka versions the harness can start as the source -> metadata mode ("kraft" or "zookeeper")."""
    return {versions.kafka_version(): "kraft", versions.kafka_zk_version(): "zookeeper",
            versions.kafka_zk_oldest_version(): "zookeeper"}


#: SCRAM users are created through AlterUserScramCredentials (KIP-554), which brokers answer from Kafka 2.7.
SCRAM_API_SINCE = (2, 7)


def release_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def heap_mib(heap: str) -> int:
    m = re.fullmatch(r"(\d+)([mMgG])", heap.strip())
    if not m:
        raise UsageError("--broker-heap", f"{heap!r} is not a JVM heap size", "give e.g. 384m or 1g")
    n = int(m.group(1)) * (1024 if m.group(2) in "gG" else 1)
    if n < 192:
        raise UsageError("--broker-heap", f"{heap} is too small for a Kafka broker", "give at least 192m")
    return n


def available_mib() -> int:
    """MemAvailable of this machine (what new processes can use without swapping)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 4096


def max_brokers(heap: str, available: int | None = None) -> int:
    """Brokers (both sides together) that fit in this machine's free memory next to Connect and Spark."""
    free = available_mib() if available is None else available
    return max(0, (free - RESERVE_MIB) // (heap_mib(heap) + BROKER_OVERHEAD_MIB))


@dataclass(frozen=True)
class ClusterShape:
    """One side: Kafka version, metadata mode, broker count, client security and heap per broker."""

    role: str  #: "source" | "target" | "peer"
    kafka_version: str
    mode: str  #: "kraft" | "zookeeper"
    brokers: int
    security: Security
    heap: str

    @property
    def replication_factor(self) -> int:
        """Like MSK: 3 replicas when there are 3 brokers (fewer on a smaller cluster)."""
        return min(3, self.brokers)

    @property
    def min_insync_replicas(self) -> int:
        """Like MSK: 2 with 3 replicas, 1 on a 1- or 2-broker cluster."""
        return 2 if self.brokers >= 3 else 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def same_cluster(self, other: ClusterShape) -> bool:
        """Everything but the heap equal: the cluster's data stays valid (a heap change only restarts it)."""
        return replace(self, heap=other.heap) == other


#: The optional third cluster's role (and MM2 alias).
PEER = "peer"


@dataclass(frozen=True)
class EnvironmentShape:
    source: ClusterShape
    target: ClusterShape
    peer: ClusterShape | None = None  #: the optional third cluster (topology rehearsals)

    def to_dict(self) -> dict[str, Any]:
        out = {"source": self.source.to_dict(), "target": self.target.to_dict()}
        if self.peer is not None:
            out[PEER] = self.peer.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EnvironmentShape:
        peer = raw.get(PEER)
        return cls(ClusterShape(**raw["source"]), ClusterShape(**raw["target"]), ClusterShape(**peer) if peer else None)

    @property
    def roles(self) -> tuple[str, ...]:
        """The clusters this shape has: source and target, then the peer when there is one."""
        return ("source", "target", PEER) if self.peer is not None else ("source", "target")

    def side(self, role: str) -> ClusterShape:
        if role == PEER:
            if self.peer is None:
                raise ValueError("this environment has no peer cluster (local up --peer-brokers 1)")
            return self.peer
        return self.source if role == "source" else self.target

    def describe(self, role: str) -> str:
        s = self.side(role)
        sec = ", SCRAM-SHA-512/TLS + ACLs" if s.security == "scram-tls" else ""
        return f"Kafka {s.kafka_version} ({'ZooKeeper' if s.mode == 'zookeeper' else 'KRaft'}), {s.brokers} broker(s){sec}"


def default_shape(heap: str | None = None) -> EnvironmentShape:
    """The fast default pair (one 3.9 KRaft broker -> one 4.1 broker, plaintext), not checked against free
    memory: it is what every test session and a bare ``local up`` start."""
    return make_shape(heap=heap or default_heap(), available=1 << 30)


def make_shape(source_kafka: str | None = None, source_brokers: int = 1, target_brokers: int = 1,
               source_security: str = "auto", heap: str | None = None, available: int | None = None,
               peer_brokers: int = 0) -> EnvironmentShape:
    """Check every field and build the shape; raises :class:`UsageError` naming the option at fault.
    ``peer_brokers`` > 0 adds the peer cluster (plaintext KRaft, Kafka :func:`versions.kafka_version`)."""
    known = source_versions()
    version = source_kafka or versions.kafka_version()
    if version not in known:
        raise UsageError("--source-kafka", f"the harness cannot start Kafka {version}",
                         f"use one of {', '.join(sorted(known))} (pinned in jvm/pom.xml)")
    mode = known[version]
    scram_ok = release_tuple(version) >= SCRAM_API_SINCE
    if source_security == "auto":
        source_security = "scram-tls" if mode == "zookeeper" and scram_ok else "plaintext"
    if source_security not in ("plaintext", "scram-tls"):
        raise UsageError("--source-security", f"{source_security!r} is not a harness security mode",
                         "use plaintext, scram-tls or auto")
    if source_security == "scram-tls" and not scram_ok:
        raise UsageError("--source-security", f"the harness creates SCRAM users through an API Kafka {version} lacks "
                         "(AlterUserScramCredentials, Kafka >= 2.7)", "use plaintext (or auto) with this source")
    heap = heap or default_heap()
    mib = heap_mib(heap)
    for option, n in (("--source-brokers", source_brokers), ("--target-brokers", target_brokers)):
        if n < 1:
            raise UsageError(option, f"{n} brokers cannot make a cluster", "give 1 or more (3 is MSK's shape)")
    if peer_brokers < 0:
        raise UsageError("--peer-brokers", f"{peer_brokers} is not a broker count", "give 0 (no peer cluster) or more")
    fit = max_brokers(heap, available)
    if source_brokers + target_brokers + peer_brokers > fit:
        free = available_mib() if available is None else available
        option = "--source-brokers" if source_brokers >= target_brokers else "--target-brokers"
        if peer_brokers and source_brokers + target_brokers <= fit:  # the pair fits: the peer is what does not
            option = "--peer-brokers"
        total = f"{source_brokers} + {target_brokers}" + (f" + {peer_brokers}" if peer_brokers else "")
        raise UsageError(option, f"{total} brokers of {mib} MiB heap do not fit in "
                         f"{free} MiB of free memory (at most {fit} next to Connect and Spark)",
                         "give fewer brokers or a smaller --broker-heap")
    peer = ClusterShape(PEER, versions.kafka_version(), "kraft", peer_brokers, "plaintext", heap) if peer_brokers else None
    return EnvironmentShape(
        ClusterShape("source", version, mode, source_brokers, source_security, heap),  # type: ignore[arg-type]
        ClusterShape("target", versions.kafka_target_version(), "kraft", target_brokers, "plaintext", heap),
        peer,
    )
