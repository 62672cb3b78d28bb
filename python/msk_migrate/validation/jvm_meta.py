"""Cluster metadata through the Kafka Java admin inside the Spark job's own JVM (py4j).

The Spark job runs on a release's image that holds nothing but its Python and pyspark; the Kafka
client it needs is already there, in the job's jars (spark-sql-kafka's kafka-clients, aws-msk-iam-auth
for IAM), so the planner asks the clusters through it: the same client properties as Spark's Kafka
source (:func:`msk_migrate.access.spark_options.spark_kafka_options`), the same questions as the
confluent-kafka session of an operator's machine (:class:`~.cluster_meta.ClusterMetadata`), the same
error contract (:class:`~msk_migrate.errors.UnreachableError` naming the role and the servers). Standard
library and pyspark only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..access.secrets import SecretResolver
from ..errors import UnreachableError
from .cluster_meta import Listed, OffsetQuery, TopicMeta

TP = tuple[str, int]
_DYNAMIC_TOPIC_CONFIG = "DYNAMIC_TOPIC_CONFIG"


def _cause(exc: BaseException) -> str:
    """The Java exception's own message (py4j wraps it in a long trace)."""
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    if java is not None:
        return f"{java.getClass().getSimpleName()}: {java.getMessage()}"
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class JvmClusterMeta:
    """One cluster's Kafka Java ``Admin`` in the driver JVM of ``spark`` (a SparkSession)."""

    def __init__(self, role: str, spark: Any, properties: dict[str, str], timeout: float):
        self.role, self.timeout = role, timeout
        self.bootstrap = properties.get("bootstrap.servers")
        self._jvm = spark.sparkContext._jvm
        props = self._jvm.java.util.Properties()
        millis = str(int(timeout * 1000))
        for key, value in {**properties, "request.timeout.ms": millis, "default.api.timeout.ms": millis,
                           "socket.connection.setup.timeout.ms": str(int(min(timeout, 30) * 1000)),
                           "client.id": f"msk-migrate-validate-{role}"}.items():
            props.setProperty(key, value)
        try:
            self._admin = self._jvm.org.apache.kafka.clients.admin.Admin.create(props)
        except Exception as exc:
            raise self._error("cannot create the Kafka admin client", exc) from None
        self._topics: dict[str, int] | None = None

    def _error(self, what: str, exc: BaseException | None = None) -> UnreachableError:
        detail = _cause(exc) if exc is not None else "no response"
        return UnreachableError(f"{self.role}.bootstrap_servers ({self.bootstrap}): {what}: {detail} "
                                f"(fix: check host:port, the network path and the {self.role} auth settings)")

    def _get(self, future: Any, what: str) -> Any:
        try:
            return future.get(int(self.timeout * 1000) + 5000, self._jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
        except Exception as exc:
            raise self._error(what, exc) from None

    def close(self) -> None:
        self._admin.close()

    def topics(self, refresh: bool = False) -> dict[str, int]:
        if self._topics is None or refresh:
            options = self._jvm.org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(True)
            names = list(self._get(self._admin.listTopics(options).names(), f"cluster unreachable within {self.timeout:.0f}s"))
            described = self._get(self._admin.describeTopics(self._list(names)).allTopicNames(), "describe topics failed") if names else {}
            self._topics = {name: described[name].partitions().size() for name in names}
        return self._topics

    def cluster_id(self) -> str | None:
        return self._get(self._admin.describeCluster().clusterId(), "describe cluster failed")

    def topic_ids(self, names: list[str]) -> dict[str, str | None]:
        if not names:
            return {}
        try:
            found = self._admin.describeTopics(self._list(list(names))).allTopicNames().get(
                int(self.timeout * 1000) + 5000, self._jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
            return {n: str(found[n].topicId().toString()) for n in names}
        except Exception:  # an older broker or no Describe ACL: see ClusterMetadata.topic_ids
            return dict.fromkeys(names)

    def describe(self, names: Iterable[str]) -> dict[str, TopicMeta]:
        known = self.topics()
        names = [n for n in names if n in known]
        if not names:
            return {}
        resource = self._jvm.org.apache.kafka.common.config.ConfigResource
        topic_type = getattr(self._jvm.org.apache.kafka.common.config, "ConfigResource$Type").TOPIC
        found = self._get(self._admin.describeConfigs(self._list([resource(topic_type, n) for n in names])).all(),
                          "describe configs failed")
        out: dict[str, TopicMeta] = {}
        for res, config in found.items():
            meta = TopicMeta(res.name(), known[res.name()])
            for entry in config.entries().toArray():  # a Collection: py4j iterates arrays
                value = entry.value() if entry.value() is not None else ""
                meta.configs[entry.name()] = value
                if entry.source().name() == _DYNAMIC_TOPIC_CONFIG:
                    meta.overrides[entry.name()] = value
            out[res.name()] = meta
        return {n: out[n] for n in names if n in out}

    def listed(self, queries: dict[TP, OffsetQuery], isolation_level: str = "read_committed") -> dict[TP, Listed]:
        if not queries:
            return {}
        jvm = self._jvm
        spec = jvm.org.apache.kafka.clients.admin.OffsetSpec
        partition = jvm.org.apache.kafka.common.TopicPartition
        made = {"earliest": spec.earliest(), "latest": spec.latest(), "max_timestamp": spec.maxTimestamp()}
        request = jvm.java.util.HashMap()
        for (topic, p), query in queries.items():
            request.put(partition(topic, p), spec.forTimestamp(query.at_ms) if query.kind == "time" else made[query.kind])
        level = jvm.org.apache.kafka.common.IsolationLevel
        options = jvm.org.apache.kafka.clients.admin.ListOffsetsOptions(
            level.READ_COMMITTED if isolation_level == "read_committed" else level.READ_UNCOMMITTED)
        found = self._get(self._admin.listOffsets(request, options).all(), "listing offsets failed")
        return {(tp.topic(), tp.partition()): Listed(info.offset(), info.timestamp()) for tp, info in found.items()}

    def _list(self, items: list[Any]) -> Any:
        out = self._jvm.java.util.ArrayList()
        for item in items:
            out.add(item)
        return out


def jvm_metadata(spark: Any) -> Any:
    """The planner's metadata factory for the Spark job (:data:`.plan.MetadataFactory`): each cluster asked through
    the driver JVM's Kafka admin with Spark's own client properties."""
    from ..access.client_security import java_client_properties

    def open_meta(role: str, endpoint: Any, resolver: SecretResolver, timeout: float) -> JvmClusterMeta:
        props = {"bootstrap.servers": endpoint.bootstrap_servers, **java_client_properties(role, endpoint.auth, resolver)}
        return JvmClusterMeta(role, spark, props, timeout)

    return open_meta
