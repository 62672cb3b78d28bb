"""The producers of partitions still written: DescribeProducers (KIP-664, brokers 2.8+), asked through the Java
admin client because confluent-kafka 2.8 (librdkafka 2.8) has no such call.

The helper is one Java source file the product ships (``jvm/producer-describer/.../DescribeProducers.java``), run
with the java source launcher on a kafka-clients classpath the product already has, nothing built:

1. ``MSK_MIGRATE_KAFKA_CLASSPATH`` (jars or ``dir/*``, colon-separated) when set;
2. the Connect image's libraries (``CONNECT_CLASSPATH``, else ``/opt/kafka-connect/libs``);
3. the local harness's Connect classpath (``.local/classpath/connect.txt``, resolved by Maven from jvm/).

Only kafka-clients and slf4j-api are taken from it (a short classpath starts fast). The client settings, secrets
included, go to the JVM on stdin, never on its command line. Every partition gets an answer: its producers, or why
not (the broker is older than 2.8 and does not know the API, the principal may not describe the topic, no JVM or
kafka-clients here, IAM auth): :attr:`ProducersAnswer.unanswered` says so per partition, and the watch prints it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...paths import JVM_DIR, LOCAL_DIR

TP = tuple[str, int]
HELPER = JVM_DIR / "producer-describer" / "src" / "main" / "java" / "io" / "mskmigrate" / "tools" / "DescribeProducers.java"
CONNECT_IMAGE_LIBS = "/opt/kafka-connect/libs"
_JARS = ("kafka-clients-", "slf4j-api-")


@dataclass(frozen=True)
class ProducerRow:
    """One active producer of a partition, as the partition leader reports it."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int  #: ms since the epoch (-1: unknown)
    coordinator_epoch: int | None = None  #: transactional producers with an open transaction
    current_transaction_start_offset: int | None = None  #: first offset of its open transaction

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "last_sequence": self.last_sequence,
                "last_timestamp": self.last_timestamp, "coordinator_epoch": self.coordinator_epoch,
                "current_transaction_start_offset": self.current_transaction_start_offset}


@dataclass
class ProducersAnswer:
    """The producers of each asked partition, or why the source did not name them."""

    rows: list[ProducerRow] = field(default_factory=list)
    unanswered: dict[TP, str] = field(default_factory=dict)  #: partition -> why no producer list

    def of(self, tp: TP) -> list[ProducerRow]:
        return [r for r in self.rows if (r.topic, r.partition) == tp]

    def table(self, tps: list[TP]) -> list[dict[str, Any]]:
        """One row per producer of ``tps`` (a partition the source did not answer: one row with the reason)."""
        out: list[dict[str, Any]] = []
        for tp in tps:
            mine = self.of(tp)
            out += [{**r.to_dict(), "answer": "answered"} for r in mine]
            if not mine:
                why = self.unanswered.get(tp, "answered: no active producer (the writer's state expired, or only markers)")
                out.append({"topic": tp[0], "partition": tp[1], "producer_id": None, "producer_epoch": None,
                            "last_sequence": None, "last_timestamp": None, "coordinator_epoch": None,
                            "current_transaction_start_offset": None,
                            "answer": why if tp in self.unanswered else "answered: no active producer"})
        return out


def _jars(entries: list[str]) -> list[str]:
    found: list[str] = []
    for e in entries:
        paths = sorted(glob.glob(e)) if "*" in e else ([str(p) for p in sorted(Path(e).glob("*.jar"))] if Path(e).is_dir() else [e])
        found += [p for p in paths if Path(p).name.startswith(_JARS) and p.endswith(".jar") and Path(p).exists()]
    return found


def kafka_classpath(environ: dict[str, str] | None = None) -> tuple[str | None, str]:
    """(classpath of kafka-clients + slf4j-api or None, where it came from / why none)."""
    env = dict(os.environ) if environ is None else environ
    candidates: list[tuple[str, list[str]]] = []
    if env.get("MSK_MIGRATE_KAFKA_CLASSPATH"):
        candidates.append(("MSK_MIGRATE_KAFKA_CLASSPATH", env["MSK_MIGRATE_KAFKA_CLASSPATH"].split(":")))
    if env.get("CONNECT_CLASSPATH"):
        candidates.append(("CONNECT_CLASSPATH", env["CONNECT_CLASSPATH"].replace(",", ":").split(":")))
    candidates.append((CONNECT_IMAGE_LIBS, [CONNECT_IMAGE_LIBS]))
    local = LOCAL_DIR / "classpath" / "connect.txt"
    if local.exists():
        candidates.append((str(local), local.read_text().strip().split(":")))
    for where, entries in candidates:
        jars = _jars(entries)
        if any(Path(j).name.startswith("kafka-clients-") for j in jars):
            return ":".join(jars), where
    return None, ("no kafka-clients jar found (set MSK_MIGRATE_KAFKA_CLASSPATH to kafka-clients 3.0+ and slf4j-api jars, "
                  "or run where the Connect image's or the local harness's libraries are)")


def _escape(value: str) -> str:
    """A Java properties value (``Properties.load`` reads ``\\n`` and ``\\\\`` back)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def _read(path: str) -> str:
    return Path(path).read_text()


def java_properties(conf: dict[str, Any]) -> dict[str, str] | str:
    """The Java client properties equivalent to a librdkafka ``conf`` (as the session acts: same principal), or why
    there are none (IAM: the helper's classpath has no aws-msk-iam-auth)."""
    if conf.get("oauth_cb") is not None or str(conf.get("sasl.mechanism", "")).upper() in ("OAUTHBEARER", "AWS_MSK_IAM"):
        return "not asked: IAM/OAUTHBEARER auth (the helper runs without aws-msk-iam-auth)"
    props = {"bootstrap.servers": str(conf["bootstrap.servers"])}
    proto = str(conf.get("security.protocol", "PLAINTEXT")).upper()
    props["security.protocol"] = proto
    if proto.startswith("SASL"):
        mech = str(conf.get("sasl.mechanism", conf.get("sasl.mechanisms", "PLAIN"))).upper()
        props["sasl.mechanism"] = mech
        module = ("org.apache.kafka.common.security.scram.ScramLoginModule" if mech.startswith("SCRAM")
                  else "org.apache.kafka.common.security.plain.PlainLoginModule")
        user = str(conf.get("sasl.username", "")).replace("\\", "\\\\").replace('"', '\\"')
        pw = str(conf.get("sasl.password", "")).replace("\\", "\\\\").replace('"', '\\"')
        props["sasl.jaas.config"] = f'{module} required username="{user}" password="{pw}";'
    if "SSL" in proto:
        ca = conf.get("ssl.ca.pem") or (_read(conf["ssl.ca.location"]) if conf.get("ssl.ca.location") else None)
        if ca:
            props["ssl.truststore.type"] = "PEM"
            props["ssl.truststore.certificates"] = str(ca)
        chain = conf.get("ssl.certificate.pem") or (_read(conf["ssl.certificate.location"]) if conf.get("ssl.certificate.location") else None)
        key = conf.get("ssl.key.pem") or (_read(conf["ssl.key.location"]) if conf.get("ssl.key.location") else None)
        if chain and key:
            props["ssl.keystore.type"] = "PEM"
            props["ssl.keystore.certificate.chain"] = str(chain)
            props["ssl.keystore.key"] = str(key)
        if str(conf.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
            props["ssl.endpoint.identification.algorithm"] = ""
    return props


def _reason(error: str) -> str:
    """The helper's per-partition error as the watch says it."""
    if error.startswith("UnsupportedVersionException"):
        return "not answered: the source does not support DescribeProducers (Kafka < 2.8)"
    if "AuthorizationException" in error:
        return f"not answered: the principal may not describe the topic ({error.split(':', 1)[0]}; needs READ on the topic)"
    return f"not answered: {error}"


def describe_producers(conf: dict[str, Any], tps: list[TP], timeout: float = 20.0,
                       environ: dict[str, str] | None = None) -> ProducersAnswer:
    """DescribeProducers for ``tps`` on the cluster ``conf`` reaches (the session's librdkafka settings), as the
    session's principal. Never raises for an unanswered partition: it says why in :attr:`ProducersAnswer.unanswered`."""
    ans = ProducersAnswer()
    tps = sorted(set(tps))
    if not tps:
        return ans

    def none(why: str) -> ProducersAnswer:
        ans.unanswered = dict.fromkeys(tps, why)
        return ans

    props = java_properties(conf)
    if isinstance(props, str):
        return none(props)
    java = shutil.which("java")
    if java is None:
        return none("not asked: no java on PATH (the DescribeProducers helper runs on a JVM, 17+)")
    if not HELPER.exists():
        return none(f"not asked: the DescribeProducers helper is not here ({HELPER})")
    cp, where = kafka_classpath(environ)
    if cp is None:
        return none(f"not asked: {where}")
    args = [java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp, str(HELPER), str(int(timeout * 1000))]
    for t, p in tps:
        args += [t, str(p)]
    stdin = "".join(f"{k}={_escape(v)}\n" for k, v in props.items())
    try:
        proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        return none(f"not answered: the DescribeProducers helper did not finish within {timeout + 60:.0f} s")
    seen: set[TP] = set()
    for line in proc.stdout.splitlines():
        if not line.startswith("MSKMIGRATE "):
            continue
        d = json.loads(line[len("MSKMIGRATE "):])
        tp = (d["topic"], int(d["partition"]))
        seen.add(tp)
        if "error" in d:
            ans.unanswered[tp] = _reason(str(d["error"]))
            continue
        ans.rows += [ProducerRow(tp[0], tp[1], int(r["producer_id"]), int(r["producer_epoch"]), int(r["last_sequence"]),
                                 int(r["last_timestamp"]), r.get("coordinator_epoch"), r.get("current_transaction_start_offset"))
                     for r in d["producers"]]
    if proc.returncode != 0 or len(seen) < len(tps):
        tail = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip() and not ln.startswith(("SLF4J", "log4j"))]
        why = f"not answered: the DescribeProducers helper exited {proc.returncode}" + (f" ({tail[-1][:200]})" if tail else "")
        for tp in tps:
            if tp not in seen:
                ans.unanswered[tp] = why
    return ans
