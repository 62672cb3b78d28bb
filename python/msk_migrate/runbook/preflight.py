"""Preflight: everything that can be checked before the connectors are applied.

Each check yields ``ok``, ``warn`` or ``fail`` with a sentence an SRE can act on. Unreachable
clusters raise (exit 2) with librdkafka's own message.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, OffsetSpec

from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from .admin import connect_admin


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str


@dataclass
class PreflightReport:
    checks: list[Check] = field(default_factory=list)
    topics: list[dict] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))

    def to_dict(self) -> dict:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks], "topics": self.topics, "groups": self.groups}


def _matches(name: str, include: list[str], exclude: list[str]) -> bool:
    return any(re.fullmatch(p, name) for p in include) and not any(re.fullmatch(p, name) for p in exclude)


def _broker_config(admin: AdminClient, broker_id: int, key: str) -> str | None:
    res = ConfigResource(ConfigResource.Type.BROKER, str(broker_id))
    try:
        cfg = admin.describe_configs([res])[res].result(timeout=15)
    except KafkaException:
        return None
    entry = cfg.get(key)
    return entry.value if entry else None


def _end_offsets(admin: AdminClient, topic: str, partitions: int) -> dict[int, int]:
    res = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}, request_timeout=15)
    return {tp.partition: f.result().offset for tp, f in res.items()}


def run_preflight(source: ClusterEndpoint, target: ClusterEndpoint, migration: MigrationSpec,
                  worker: WorkerSpec | None = None) -> PreflightReport:
    worker = worker or WorkerSpec()
    rep = PreflightReport()
    src = connect_admin("source", source)
    rep.add("source reachable", "ok", f"{source.bootstrap_servers} ({source.auth.mode})")
    tgt = connect_admin("target", target)
    rep.add("target reachable", "ok", f"{target.bootstrap_servers} ({target.auth.mode})")

    try:
        desc = src.describe_cluster(request_timeout=15).result()
        rep.add("source broker version", "ok",
                f"{len(desc.nodes)} broker(s); DescribeCluster supported, so Kafka >= 2.8 "
                "(Connect 3.9 and 4.x clients both work)")
    except Exception:  # noqa: BLE001 - old brokers reject DescribeCluster
        rep.add("source broker version", "warn",
                "DescribeCluster unsupported: Kafka < 2.8. Keep the Connect image on Kafka 3.9 "
                "(4.x clients need brokers >= 2.1; see docs/runbooks/migration.md)")

    src_md = src.list_topics(timeout=15).topics
    tgt_md = tgt.list_topics(timeout=15).topics
    selected = sorted(t for t in src_md if _matches(t, migration.topics, migration.topics_exclude))
    if not selected:
        rep.add("topics selected", "fail", f"no source topic matches topics={migration.topics} minus topics_exclude")
    total_parts = 0
    conflicts, mismatched = [], []
    for t in selected:
        parts = len(src_md[t].partitions)
        total_parts += parts
        ends = _end_offsets(src, t, parts)
        target_name = migration.topic_renames.get(t, t)
        row = {"topic": t, "target_topic": target_name, "partitions": parts, "records_upper_bound": sum(ends.values()),
               "exists_on_target": target_name in tgt_md}
        if target_name in tgt_md:
            tparts = len(tgt_md[target_name].partitions)
            row["target_partitions"] = tparts
            if tparts != parts:
                mismatched.append(f"{target_name} ({parts} vs {tparts})")
            elif sum(_end_offsets(tgt, target_name, tparts).values()) > 0:
                conflicts.append(target_name)
        rep.topics.append(row)
    if selected:
        rep.add("topics selected", "ok", f"{len(selected)} topic(s), {total_parts} partition(s)")
    if mismatched:
        rep.add("target partition counts", "fail",
                "already on target with a different partition count: " + ", ".join(mismatched)
                + " (delete them on the target or align partitions before replicating)")
    if conflicts:
        rep.add("target topics empty", "warn",
                "already hold data on the target (MM2 appends; validation will report extra records): "
                + ", ".join(conflicts[:10]) + ("..." if len(conflicts) > 10 else ""))
    elif selected and not mismatched:
        rep.add("target topics empty", "ok", "no selected topic holds data on the target yet")

    if total_parts and migration.tasks_max > total_parts:
        rep.add("tasks.max", "warn", f"tasks_max={migration.tasks_max} > {total_parts} partitions: extra tasks stay idle")
    else:
        rep.add("tasks.max", "ok", f"tasks_max={migration.tasks_max} for {total_parts} partition(s)")

    tdesc = tgt.describe_cluster(request_timeout=15).result()
    brokers = len(tdesc.nodes)
    rf = max(migration.replication_factor, migration.internal_replication_factor, worker.replication_factor)
    if rf > brokers:
        rep.add("replication factor", "fail", f"RF {rf} > {brokers} target broker(s): lower replication_factor")
    else:
        rep.add("replication factor", "ok", f"RF {rf} <= {brokers} target broker(s)")
    auto = _broker_config(tgt, tdesc.nodes[0].id, "auto.create.topics.enable")
    if auto == "true":
        rep.add("target auto.create.topics.enable", "warn",
                "true: a producer moved too early silently creates topics with default settings")
    elif auto == "false":
        rep.add("target auto.create.topics.enable", "ok", "false")

    from .preflight_mm2 import mm2_checks

    for row in mm2_checks(src, tgt, rep.topics, migration, worker, [n.id for n in tdesc.nodes], target.msk_broker_type):
        rep.add(*row)

    groups = src.list_consumer_groups(request_timeout=15).result()
    rep.groups = sorted(g.group_id for g in groups.valid if _matches(g.group_id, migration.groups, migration.groups_exclude))
    rep.add("consumer groups", "ok" if rep.groups else "warn",
            f"{len(rep.groups)} group(s) will be checkpointed" if rep.groups else "no source group matches groups")
    return rep


def require_replication_factors(target: ClusterEndpoint, migration: MigrationSpec, worker: WorkerSpec | None = None) -> None:
    """Refuse (exit 2, nothing applied) replication factors the target cluster cannot honour."""
    from ..errors import UsageError

    admin = connect_admin("target", target)  # keep a reference: futures die with their client
    brokers = len(admin.describe_cluster(request_timeout=15).result().nodes)
    fields = {"migration.replication_factor": migration.replication_factor,
              "migration.internal_replication_factor": migration.internal_replication_factor}
    if worker is not None:
        fields["worker.replication_factor"] = worker.replication_factor
    for field, rf in fields.items():
        if rf > brokers:
            raise UsageError(field, f"{rf} is above the target's {brokers} broker(s)", f"set it to at most {brokers}")
