"""A Spark standalone cluster on 127.0.0.1 from the installed PySpark's own jars: one master and N
workers, each its own JVM (``org.apache.spark.deploy.master.Master`` / ``worker.Worker``), so that
the validation job runs the way EMR runs it — a cluster manager, executors in JVMs of their own,
launched by the workers with an environment that has no msk_migrate (tests and benchmarks).

    with StandaloneCluster(workers=2, cores=1, memory="1g") as cluster:
        spark-submit --master cluster.url ...
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from ..errors import UnreachableError
from .spark_local import require_spark


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else (shutil.which("java") or "java")


class StandaloneCluster:
    """Master + workers as child processes (logs and work dirs under ``base``)."""

    def __init__(self, base: Path, workers: int = 2, cores: int = 1, memory: str = "1g", daemon_memory: str = "256m"):
        self.base = Path(base)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.daemon_memory = daemon_memory
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.worker_env: dict[str, str] = {}

    def _start(self, name: str, cls: str, *args: str) -> None:
        home = spark_home()
        log = open(self.base / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        # The daemons and the executors they launch see only this environment: no PYTHONPATH, no
        # virtualenv, no msk_migrate; SPARK_HOME is the PySpark install (its jars/ is the classpath).
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.base),
            "SPARK_HOME": str(home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_SCALA_VERSION": require_spark()[1],
            "SPARK_LOG_DIR": str(self.base),
            **({"JAVA_HOME": os.environ["JAVA_HOME"]} if os.environ.get("JAVA_HOME") else {}),
        }
        self.worker_env = env
        cmd = [_java(), f"-Xmx{self.daemon_memory}", "-cp", f"{home / 'jars'}/*", cls, *args]
        self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.base,
                                           start_new_session=True))
        log.close()

    def _log(self, name: str) -> str:
        p = self.base / f"{name}.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def start(self, timeout: float = 120) -> StandaloneCluster:
        self.base.mkdir(parents=True, exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(_free_port()))
        for i in range(self.workers):
            work = self.base / f"worker-{i}"
            work.mkdir(exist_ok=True)
            self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                        "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(_free_port()),
                        "--work-dir", str(work))
        deadline = time.time() + timeout
        while time.time() < deadline:
            registered = sum("Successfully registered with master" in self._log(f"worker-{i}")
                             for i in range(self.workers))
            if registered == self.workers:
                return self
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        tail = self._log("master")[-800:]
        self.stop()
        raise UnreachableError(f"Spark standalone cluster did not come up within {timeout:.0f}s: {tail}")

    def executor_dirs(self) -> list[Path]:
        """Work dirs of the executors the workers launched (app-*/<executor id>/, with stderr)."""
        return sorted(p for p in self.base.glob("worker-*/app-*/*") if p.is_dir())

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        self.procs.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
