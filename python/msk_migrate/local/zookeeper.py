"""The one-node ZooKeeper ensemble a Kafka 2.8 source registers in, started from the same Maven classpath
(jvm/classpaths/kafka-zk: ``org.apache.zookeeper:zookeeper`` at ``versions.zookeeper_version()``), as
``bin/zookeeper-server-start.sh`` would. It listens on 127.0.0.1 only; the admin HTTP server is off.
"""

from __future__ import annotations

import socket
from pathlib import Path

from .broker import LOG4J1
from .procs import ProcRecord, free_port, launch, wait_ready


def _ruok(port: int) -> bool:
    """ZooKeeper's four-letter ``srvr`` (the one allowed by default): answers once the server serves."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"srvr")
        return b"Zookeeper version" in s.recv(4096)


def start_zookeeper(data_dir: Path, classpath: str, name: str, port: int | None = None,
                    heap: str = "128m") -> tuple[ProcRecord, int]:
    """Launch ZooKeeper on ``port`` (a free one the first time; kept in ``data_dir/port`` for restarts)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port_file = data_dir / "port"
    if port is None:
        port = int(port_file.read_text()) if port_file.exists() else free_port()
    port_file.write_text(str(port))
    cfg = data_dir / "zoo.cfg"
    cfg.write_text(
        f"dataDir={data_dir / 'data'}\n"
        f"clientPort={port}\nclientPortAddress=127.0.0.1\n"
        "tickTime=2000\ninitLimit=10\nsyncLimit=5\nmaxClientCnxns=0\n"
        "admin.enableServer=false\n4lw.commands.whitelist=srvr\n"
    )
    (data_dir / "log4j.properties").write_text(LOG4J1.replace("log4j.logger.kafka=WARN", "log4j.logger.org.apache.zookeeper=WARN"))
    cmd = ["java", f"-Xmx{heap}", "-Xms64m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
           f"-Dlog4j.configuration=file:{data_dir / 'log4j.properties'}", "-Dzookeeper.admin.enableServer=false",
           "-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(cfg)]
    return launch(name, cmd, data_dir / "zookeeper.log"), port


def wait_zookeeper_ready(rec: ProcRecord, port: int, timeout: float = 60.0) -> None:
    wait_ready(rec, lambda: _ruok(port), timeout, log_lines=20)
