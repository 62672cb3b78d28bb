"""Preflight checks of the MM2 data path itself: record sizes, min.insync.replicas, MSK partition limits.

Small functions, each returning ``(name, status, detail)`` rows that :mod:`.preflight` adds to its
report. Every failure names the setting to change.
"""

from __future__ import annotations

from confluent_kafka.admin import ConfigResource

from ..access.admin import AdminSession
from ..config.migration import MigrationSpec, WorkerSpec
from ..config.overrides import PROFILES, known_keys

Row = tuple[str, str, str]

#: Amazon's recommended maximum partitions (leader + follower replicas) per Standard broker, from
#: "Best practices for Standard brokers -> Right-size your cluster: Number of partitions per broker",
#: https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html (read 2026-11).
#: Above it AWS may block configuration updates, version upgrades and broker-type changes.
MSK_PARTITIONS_PER_BROKER: dict[str, int] = {
    "kafka.t3.small": 300,
    "kafka.m5.large": 1000, "kafka.m5.xlarge": 1000, "kafka.m5.2xlarge": 2000,
    "kafka.m5.4xlarge": 4000, "kafka.m5.8xlarge": 4000, "kafka.m5.12xlarge": 4000,
    "kafka.m5.16xlarge": 4000, "kafka.m5.24xlarge": 4000,
    "kafka.m7g.large": 1000, "kafka.m7g.xlarge": 1000, "kafka.m7g.2xlarge": 2000,
    "kafka.m7g.4xlarge": 4000, "kafka.m7g.8xlarge": 4000, "kafka.m7g.12xlarge": 4000, "kafka.m7g.16xlarge": 4000,
}
MSK_SOURCE_URL = "https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html"


#: The rule of the record-size row. Both limits measure the same thing: one record as a v2 record batch,
#: its 61-byte batch header included (the broker compares a produced batch's size with the topic's
#: ``max.message.bytes``; MM2's producer compares a record's batch-size upper bound, uncompressed, with
#: ``max.request.size`` and throws RecordTooLargeException above it). So every record the source can hold
#: fits MM2's producer exactly when ``max.request.size >= max.message.bytes``. Kafka's default pair
#: (1048588 vs 1048576) leaves a band of this many bytes: a warning, not a failure (records of
#: 1048577..1048588 bytes are rare); a wider gap fails. Records the source stored compressed can be larger
#: uncompressed than max.message.bytes: that is not visible in configs (docs/runbooks/migration.md).
DEFAULTS_BAND = 12


def producer_max_request_size(m: MigrationSpec) -> int:
    """What MM2's producer will use: the operator's override, else the profile, else Kafka's default."""
    key = "max.request.size"
    value = m.producer_overrides.get(key) or PROFILES[m.tuning_profile]["producer"].get(key)
    return int(value or known_keys()["producer"][key]["default"])


def _configs(session: AdminSession, rtype, name: str) -> dict:
    return session.describe_configs(rtype, [name])[name]


def message_size_checks(src: AdminSession, tgt: AdminSession, topics: list[dict], m: MigrationSpec,
                        target_broker_id: int) -> list[Row]:
    """Source ``max.message.bytes`` must fit MM2's producer ``max.request.size`` and the target's limit."""
    request_size = producer_max_request_size(m)
    broker_wait = tgt.submit_configs(ConfigResource.Type.BROKER, [str(target_broker_id)])
    src_wait = src.submit_configs(ConfigResource.Type.TOPIC, [row["topic"] for row in topics])
    tgt_wait = tgt.submit_configs(ConfigResource.Type.TOPIC, [row["target_topic"] for row in topics if row.get("exists_on_target")])
    # every DescribeConfigs call in flight together (at 1,000 topics each one is a noticeable wait)
    broker_limit = broker_wait()[str(target_broker_id)].get("message.max.bytes")
    src_cfgs, tgt_cfgs = src_wait(), tgt_wait()
    too_big_for_producer, too_big_for_target, in_band = [], [], []
    largest = 0
    for row in topics:
        cfg = src_cfgs[row["topic"]]
        entry = cfg.get("max.message.bytes")
        if entry is None:
            continue
        size = int(entry.value)
        largest = max(largest, size)
        if size > request_size + DEFAULTS_BAND:
            too_big_for_producer.append((row["topic"], size))
        elif size > request_size:
            in_band.append((row["topic"], size))
        if row.get("exists_on_target"):
            tentry = tgt_cfgs[row["target_topic"]].get("max.message.bytes")
            limit = int(tentry.value) if tentry else None
        elif not entry.is_default and m.sync_topic_configs:
            limit = size  # MM2 creates the topic with the source's explicit max.message.bytes
        else:
            limit = int(broker_limit.value) if broker_limit else None
        if limit is not None and size > limit:
            too_big_for_target.append((row["target_topic"], size, limit))
    rows: list[Row] = []
    rule = "(both count one record as a batch, 61-byte batch header included)"
    if too_big_for_producer:
        need = max(s for _, s in too_big_for_producer)
        names = ", ".join(f"{t} ({s} B)" for t, s in too_big_for_producer[:5])
        rows.append(("record size vs MM2 producer", "fail",
                     f"source max.message.bytes above MM2's producer max.request.size {request_size} B {rule}: {names}; "
                     f"a record that large fails the task with RecordTooLargeException "
                     f"(fix: set migration.producer_overrides.max.request.size: {need})"))
    elif in_band:
        need = max(s for _, s in in_band)
        names = ", ".join(f"{t} ({s} B)" for t, s in in_band[:5]) + (f" and {len(in_band) - 5} more" if len(in_band) > 5 else "")
        rows.append(("record size vs MM2 producer", "warn",
                     f"source max.message.bytes up to {need} B > MM2's producer max.request.size {request_size} B by "
                     f"{need - request_size} B {rule} (Kafka's default pair): a record of {request_size + 1}..{need} B "
                     f"passes the source and fails the MM2 task: {names} "
                     f"(fix: set migration.producer_overrides.max.request.size: {need})"))
    else:
        rows.append(("record size vs MM2 producer", "ok",
                     f"largest source max.message.bytes {largest} B <= MM2's producer max.request.size {request_size} B {rule}"))
    if too_big_for_target:
        names = ", ".join(f"{t} ({s} B > {lim} B)" for t, s, lim in too_big_for_target[:5])
        rows.append(("record size vs target topics", "fail",
                     f"target would refuse records the source accepts: {names} "
                     "(fix: raise max.message.bytes of those target topics, or message.max.bytes of the target cluster)"))
    elif topics:
        rows.append(("record size vs target topics", "ok", "every target limit >= its source's max.message.bytes"))
    return rows


def min_insync_replicas_check(tgt: AdminSession, target_broker_id: int, m: MigrationSpec,
                              worker: WorkerSpec) -> Row:
    """A replication factor below the target's ``min.insync.replicas`` makes every acks=all write fail."""
    entry = _configs(tgt, ConfigResource.Type.BROKER, str(target_broker_id)).get("min.insync.replicas")
    if entry is None:
        return ("replication factor vs min.insync.replicas", "warn", "target min.insync.replicas not readable")
    min_isr = int(entry.value)
    fields = {"migration.replication_factor": m.replication_factor,
              "migration.internal_replication_factor": m.internal_replication_factor,
              "worker.replication_factor": worker.replication_factor}
    low = {f: rf for f, rf in fields.items() if rf < min_isr}
    if low:
        names = ", ".join(f"{f}={rf}" for f, rf in low.items())
        return ("replication factor vs min.insync.replicas", "fail",
                f"{names} below the target's min.insync.replicas={min_isr}: every write would fail with "
                f"NotEnoughReplicas (fix: set them to at least {min_isr})")
    return ("replication factor vs min.insync.replicas", "ok",
            f"every replication factor >= target min.insync.replicas={min_isr}")


def partition_limit_check(tgt: AdminSession, topics: list[dict], m: MigrationSpec, broker_type: str | None,
                          brokers: int) -> Row:
    """Target partition replicas per broker after the migration vs AWS's limit for the broker type."""
    name = "MSK partitions per broker"
    if not broker_type:
        return (name, "warn", "target broker type unknown: set target.broker_type (existing cluster, e.g. kafka.m7g.large; "
                              "a created cluster uses target.create.instance_type) "
                              "to check AWS's per-broker partition limit")
    limit = MSK_PARTITIONS_PER_BROKER.get(broker_type)
    if limit is None:
        return (name, "warn", f"no pinned AWS partition limit for {broker_type!r} (known: Standard kafka.t3/m5/m7g; "
                              f"see {MSK_SOURCE_URL})")
    existing = 0
    for t in tgt.admin.list_topics(timeout=15).topics.values():
        for p in t.partitions.values():
            existing += len(p.replicas)
    new = sum(r["partitions"] for r in topics if not r.get("exists_on_target")) * m.replication_factor
    per_broker = -(-(existing + new) // max(brokers, 1))
    if per_broker > limit:
        need = -(-(existing + new) // limit)
        return (name, "fail",
                f"{existing + new} partition replicas on {brokers} {broker_type} broker(s) = {per_broker} per broker "
                f"> AWS's {limit} ({MSK_SOURCE_URL}) (fix: use at least {need} brokers or a larger broker type)")
    return (name, "ok", f"{per_broker} partition replicas per broker <= {limit} for {broker_type}")


def mm2_checks(src: AdminSession, tgt: AdminSession, topics: list[dict], m: MigrationSpec, worker: WorkerSpec,
               broker_ids: list[int], broker_type: str | None) -> list[Row]:
    """All checks of this module, in report order."""
    if not broker_ids:
        return []
    rows = message_size_checks(src, tgt, topics, m, broker_ids[0])
    rows.append(min_insync_replicas_check(tgt, broker_ids[0], m, worker))
    rows.append(partition_limit_check(tgt, topics, m, broker_type, len(broker_ids)))
    return rows

