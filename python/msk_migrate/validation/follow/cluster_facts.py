"""What the follower knows of both clusters, asked through either client (standard library only).

The follower on an operator's machine asks through confluent-kafka (:mod:`..kafka_meta`); the chained Spark run
as an EMR Serverless or Glue job asks through the Kafka Java admin in its own JVM (:mod:`..jvm_meta`), since the
release's image holds nothing but its Python and pyspark. Both answer :class:`~..cluster_meta.ClusterMetadata`,
so the facts a mark is checked against (:func:`.mark.check_against`) are computed by one piece of code whoever
asks: the selected topics, partition counts, topic ids, both sides' log bounds, and which topics carry
LogAppendTime (their timestamps are the broker's, never compared).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...access.secrets import SecretResolver
from ...errors import UsageError
from .. import cluster_meta as cm
from ..plan import MetadataFactory, select_topics
from ..request import ValidationRequest
from .mark import ClusterFacts, Mark, TopicFacts, add_missing, check_against, new_mark, truncate_passed
from .store import MarkStore

TP = tuple[str, int]


@dataclass
class FollowClusters:
    """Both clusters' metadata sessions for one follower of ``migration``."""

    req: ValidationRequest
    migration: str
    src: cm.ClusterMetadata
    tgt: cm.ClusterMetadata
    #: topics whose records carry LogAppendTime on either side (set by :meth:`facts`)
    no_ts: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, req: ValidationRequest, migration: str, metadata: MetadataFactory,
             resolver: SecretResolver | None = None) -> FollowClusters:
        """Sessions opened by ``metadata`` (the planner's factory: confluent's or the job JVM's)."""
        resolver = resolver or SecretResolver()
        src, tgt = (metadata(role, getattr(req, role), resolver, req.metadata_timeout_seconds) for role in ("source", "target"))
        return cls(req, migration, src, tgt)

    def facts(self) -> ClusterFacts:
        """What the clusters say now: ids, selected topics, partition counts, topic ids, log bounds."""
        req, iso = self.req, self.req.isolation_level
        if req.compacted == "latest-per-key":
            raise UsageError("--compacted", "latest-per-key is compared by the batch validator only",
                             "drop --follow, or follow with --compacted records")
        src_topics, tgt_topics = self.src.topics(refresh=True), self.tgt.topics(refresh=True)
        topics = select_topics(req, src_topics)
        missing = [t for t in topics if req.target_topic(t) not in tgt_topics]
        if missing:
            raise UsageError("--topic", f"{', '.join(missing[:3])} not on the target (yet)",
                             "start the follower once MM2 created the target topics, or map them with --topic-map")
        names = {t: req.target_topic(t) for t in topics}
        src_tps = [(t, p) for t in topics for p in range(src_topics[t])]
        tgt_tps = [(names[t], p) for t in topics for p in range(tgt_topics[names[t]])]
        s_lo, s_hi = cm.offsets(self.src, src_tps, cm.earliest(), iso), cm.offsets(self.src, src_tps, cm.latest(), iso)
        t_lo, t_hi = cm.offsets(self.tgt, tgt_tps, cm.earliest(), iso), cm.offsets(self.tgt, tgt_tps, cm.latest(), iso)
        s_ids, t_ids = self.src.topic_ids(topics), self.tgt.topic_ids(list(names.values()))
        s_meta, t_meta = self.src.describe(topics), self.tgt.describe(list(names.values()))
        self.no_ts = {t for t in topics if (s_meta.get(t) and s_meta[t].log_append_time)
                      or (t_meta.get(names[t]) and t_meta[names[t]].log_append_time)}
        out = {}
        for t in topics:
            n = names[t]
            out[t] = TopicFacts(
                n, src_topics[t], tgt_topics[n], s_ids.get(t), t_ids.get(n),
                {p: s_lo[(t, p)] for p in range(src_topics[t])}, {p: s_hi[(t, p)] for p in range(src_topics[t])},
                {p: t_hi[(n, p)] for p in range(tgt_topics[n])}, {p: t_lo[(n, p)] for p in range(tgt_topics[n])})
        return ClusterFacts(self.migration, self.src.cluster_id(), self.tgt.cluster_id(), out)

    def source_ends(self, tps: list[TP]) -> dict[TP, int]:
        """The source's end offsets of ``tps`` now (one ListOffsets round, at the follower's isolation level)."""
        return cm.offsets(self.src, tps, cm.latest(), self.req.isolation_level)

    def latest(self, facts: ClusterFacts) -> ClusterFacts:
        """``facts`` with both sides' end offsets read again (one ListOffsets round per cluster): what a
        pass between two full checks needs."""
        iso = self.req.isolation_level
        src_tps = [(t, p) for t, tf in facts.topics.items() for p in tf.source_end]
        tgt_tps = [(tf.target_name, p) for tf in facts.topics.values() for p in tf.target_end]
        s_hi, t_hi = cm.offsets(self.src, src_tps, cm.latest(), iso), cm.offsets(self.tgt, tgt_tps, cm.latest(), iso)
        topics = {t: replace(tf, source_end={p: s_hi[(t, p)] for p in tf.source_end},
                             target_end={p: t_hi[(tf.target_name, p)] for p in tf.target_end})
                  for t, tf in facts.topics.items()}
        return replace(facts, topics=topics)


def prepare(store: MarkStore, facts: ClusterFacts, copy_marks: dict[str, str] | None = None) -> tuple[Mark, list[TP]]:
    """The mark to follow from: the stored one checked against ``facts`` (refusal: exit 2, nothing
    written), or a new one; partitions truncated by retention marked so. Returns the truncated ones.
    ``copy_marks``: the follower compares per origin with these aliases (a mark made otherwise is refused)."""
    mark = store.load()
    if mark is None:
        mark = new_mark(facts, copy_marks)
    else:
        check_against(mark, facts, store.field, copy_marks)
    truncated = truncate_passed(mark, facts)
    add_missing(mark, facts)
    return mark, truncated
