"""The verified-up-to mark: per partition, the source offset and the target offset below which every
record was compared and matched in order (``source_next`` / ``target_next``: the next offset to read).

Invariants:

- A mark belongs to one migration and one pair of clusters (cluster ids) and to the topics' partition
  counts (and topic ids when the clusters give them) at the time it was started; :func:`check_against`
  refuses any other cluster, a changed partition count, a recreated topic (new topic id, or a mark ahead
  of the cluster's end offset) with one line (:class:`~msk_migrate.errors.UsageError`, exit 2) before
  anything is read or written.
- A partition whose source log start passed ``source_next`` (retention deleted records never compared)
  is ``truncated``: never a match, its mark never advances again.
- A ``mismatch`` names the first differing record (topic, partition, source offset, target offset, what
  differed) and the mark stays at it. A target record with no source record (``unexpected``, or
  ``duplicates`` of a proven one) is one wherever it stands: its ``source_offset`` is the source's end, where
  its source record would be, and ``timestamp`` (the source record's) is None.
- A target partition beyond the source's partition count (:func:`sourceless`: the target topic has more
  partitions than the source's) is followed too: it has no source partition, so its ``source_next`` stays 0 and
  its first record is ``unexpected`` at source offset 0, as a batch run finds it ``extra_on_target``.
- After a pass that ended before its deadline, every target record the pass read of a ``following``
  partition is proven (or a re-delivery passed over with ``--allow-duplicates``): ``target_next`` is past all
  of them, and none waits for a source record. So a ``following`` partition never hides a record the target
  holds and the source does not, and a gate reading the mark refuses one the follower has read.
- ``compared`` counts the records compared and matched, persisted together with the offsets, so across
  restarts ``compared`` equals the number of source records below ``source_next`` that were read (none
  twice, none skipped: the tests count them).
- Where copies are marked (:attr:`Mark.copy_marks`: the flow's ``mark_copies`` or ``--copy-marks SRC,TGT``) the
  mark compares *per origin* (:mod:`.compare`): ``compared`` counts the source origin's records (the source's
  natives, matched in order with the target's copies, mark removed), and ``origin_target`` the target origin's
  records below the mark on each side (on the source: records copied from the target, left out; on the target:
  its natives), counted and never compared. A mark is continued only by a follower comparing the same way with
  the same aliases (:func:`check_against`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ..cluster_meta import topic_id_text

FORMAT = 1
#: ``cut-over``: proven up to the fence the topic's producers moved behind (:mod:`.fences`); read no more, as the
#: target's records after it are the producers' own
STATES = ("following", "mismatch", "truncated", "cut-over")


@dataclass
class PartitionMark:
    """One partition's verified-up-to mark."""

    source_next: int
    target_next: int
    compared: int = 0  #: records compared and matched below the mark (all runs)
    duplicates: int = 0  #: target re-deliveries passed over (``--allow-duplicates``)
    state: str = "following"
    #: the first differing record when ``state == "mismatch"``: category, source/target offsets, what differed
    mismatch: dict[str, Any] | None = None
    #: timestamp (ms) of the last source record proven; proof lag in seconds is measured from it
    proven_ts_ms: int | None = None
    #: the source log start when it passed the mark (``state == "truncated"``)
    source_log_start: int | None = None
    #: per-origin marks only: records of the target's origin below the mark, per side (``source``: copied from the
    #: target, left out; ``target``: the target's natives), counted, not compared; None on a mark compared in order
    origin_target: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source_next": self.source_next, "target_next": self.target_next, "compared": self.compared,
                             "duplicates": self.duplicates, "state": self.state, "proven_ts_ms": self.proven_ts_ms}
        if self.mismatch is not None:
            d["mismatch"] = self.mismatch
        if self.source_log_start is not None:
            d["source_log_start"] = self.source_log_start
        if self.origin_target is not None:
            d["origin_target"] = dict(self.origin_target)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str) -> PartitionMark:
        try:
            pm = cls(int(d["source_next"]), int(d["target_next"]), int(d.get("compared", 0)), int(d.get("duplicates", 0)),
                     str(d.get("state", "following")), d.get("mismatch"), d.get("proven_ts_ms"), d.get("source_log_start"))
            if d.get("origin_target") is not None:
                pm.origin_target = {side: int(d["origin_target"].get(side, 0)) for side in ("source", "target")}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if pm.state not in STATES or pm.source_next < 0 or pm.target_next < 0 or pm.compared < 0:
            raise ValueError(f"{where}: state {pm.state!r} / offsets {pm.source_next},{pm.target_next}")
        return pm


@dataclass
class TopicMark:
    """One topic's marks, with what identifies the topic on each cluster."""

    target_name: str
    source_partitions: int
    target_partitions: int
    source_topic_id: str | None = None
    target_topic_id: str | None = None
    partitions: dict[int, PartitionMark] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"target_name": self.target_name, "source_partitions": self.source_partitions,
                "target_partitions": self.target_partitions, "source_topic_id": self.source_topic_id,
                "target_topic_id": self.target_topic_id,
                "partitions": {str(p): m.to_dict() for p, m in sorted(self.partitions.items())}}

    @classmethod
    def from_dict(cls, topic: str, d: dict[str, Any]) -> TopicMark:
        try:
            parts = {int(p): PartitionMark.from_dict(m, f"{topic}[{p}]") for p, m in (d.get("partitions") or {}).items()}
            return cls(str(d["target_name"]), int(d["source_partitions"]), int(d["target_partitions"]),
                       d.get("source_topic_id"), d.get("target_topic_id"), parts)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{topic}: {exc}") from None


@dataclass
class Mark:
    """The whole mark document of one follower."""

    migration: str
    source_cluster_id: str | None
    target_cluster_id: str | None
    topics: dict[str, TopicMark] = field(default_factory=dict)
    updated_ms: int = 0
    #: where copies are marked: ``{"source_alias": S, "target_alias": T}``, and the mark compares per origin
    #: (``compare: per-origin``); None: every record in order (``compare: records``)
    copy_marks: dict[str, str] | None = None

    @property
    def compare(self) -> str:
        return "per-origin" if self.copy_marks is not None else "records"

    def partition(self, topic: str, partition: int) -> PartitionMark:
        return self.topics[topic].partitions[partition]

    def items(self) -> list[tuple[tuple[str, int], PartitionMark]]:
        return [((t, p), m) for t, tm in sorted(self.topics.items()) for p, m in sorted(tm.partitions.items())]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "msk-migrate proof mark", "format": FORMAT, "migration": self.migration,
                             "source_cluster_id": self.source_cluster_id, "target_cluster_id": self.target_cluster_id,
                             "updated_ms": self.updated_ms, "compare": self.compare}
        if self.copy_marks is not None:
            d["copy_marks"] = dict(self.copy_marks)
        d["topics"] = {t: tm.to_dict() for t, tm in sorted(self.topics.items())}
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Mark:
        """Raises ValueError (the caller names the location) on anything that is not a mark document."""
        if not isinstance(d, dict) or d.get("kind") != "msk-migrate proof mark":
            raise ValueError("not a proof mark (written by `msk-migrate validate --follow`)")
        if d.get("format") != FORMAT:
            raise ValueError(f"mark format {d.get('format')!r}, this msk-migrate reads format {FORMAT}")
        topics = {str(t): TopicMark.from_dict(str(t), tm) for t, tm in (d.get("topics") or {}).items()}
        marks = d.get("copy_marks")
        if marks is not None and not (isinstance(marks, dict) and all(isinstance(marks.get(k), str)
                                                                      for k in ("source_alias", "target_alias"))):
            raise ValueError(f"copy_marks {marks!r} does not name both aliases")
        return cls(str(d.get("migration")), d.get("source_cluster_id"), d.get("target_cluster_id"), topics,
                   int(d.get("updated_ms") or 0),
                   {k: str(marks[k]) for k in ("source_alias", "target_alias")} if marks is not None else None)


@dataclass(frozen=True)
class TopicFacts:
    """What the clusters say about one topic now (what a mark is checked against)."""

    target_name: str
    source_partitions: int
    target_partitions: int
    source_topic_id: str | None
    target_topic_id: str | None
    source_start: dict[int, int]  #: log start offset per partition
    source_end: dict[int, int]
    target_end: dict[int, int]
    target_start: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterFacts:
    migration: str
    source_cluster_id: str | None
    target_cluster_id: str | None
    topics: dict[str, TopicFacts]


def verdict(mark: Mark) -> tuple[str, int]:
    """The mark's verdict and exit code: ``mismatch`` or ``truncated`` anywhere fails (1), and so does a mark
    that proved nothing at all (a verdict on nothing is never a pass); else ``proven`` (0)."""
    states = [pm.state for _, pm in mark.items()]
    if "mismatch" in states:
        return "mismatch", 1
    if "truncated" in states:
        return "truncated", 1
    if not any(pm.compared for _, pm in mark.items()):
        return "nothing proven", 1
    return "proven", 0


def _compare_text(marks: dict[str, str] | None) -> str:
    if marks is None:
        return "every record in order (no copy marks)"
    return f"per origin (copy marks {marks['source_alias']},{marks['target_alias']})"


def check_against(mark: Mark, facts: ClusterFacts, field_name: str = "--mark",
                  copy_marks: dict[str, str] | None = None) -> None:
    """Refuse a mark that is not this follower's: one line naming the mark, the difference and the fix
    (UsageError, exit 2). Nothing is read past the mark nor written before this passes. ``copy_marks``: the
    aliases this run compares per origin with (None: in order); a mark made comparing otherwise proves something
    else (its ``compared`` counts other records), so it is refused too."""
    fix_new = "give a new --mark location for this migration (or remove the old mark if the topic was recreated on purpose)"
    if mark.migration != facts.migration:
        raise UsageError(field_name, f"the mark belongs to migration {mark.migration!r}, not {facts.migration!r}", fix_new)
    if mark.copy_marks != copy_marks:
        raise UsageError(field_name, f"the mark compares {_compare_text(mark.copy_marks)}, this run "
                         f"{_compare_text(copy_marks)}", "give a new --mark location for this way of comparing")
    for role, have, now in (("source", mark.source_cluster_id, facts.source_cluster_id),
                            ("target", mark.target_cluster_id, facts.target_cluster_id)):
        if have is not None and now is not None and have != now:
            raise UsageError(field_name, f"the mark was made on another {role} cluster (cluster id {have}, this one is {now})", fix_new)
    for topic, tm in sorted(mark.topics.items()):
        tf = facts.topics.get(topic)
        if tf is None:
            continue  # a topic no longer selected keeps its mark untouched
        where = f"{field_name} {topic}"
        if tm.target_name != tf.target_name:
            raise UsageError(where, f"the mark compares it with target topic {tm.target_name!r}, now {tf.target_name!r}", fix_new)
        for role, have_n, now_n in (("source", tm.source_partitions, tf.source_partitions),
                                    ("target", tm.target_partitions, tf.target_partitions)):
            if have_n != now_n:
                raise UsageError(where, f"partition count changed on the {role}: the mark has {have_n}, the cluster {now_n}", fix_new)
        for role, have_id, now_id in (("source", tm.source_topic_id, tf.source_topic_id),
                                      ("target", tm.target_topic_id, tf.target_topic_id)):
            if have_id and now_id and topic_id_text(have_id) != topic_id_text(now_id):  # a mark of an earlier release
                raise UsageError(where, f"the topic was recreated on the {role} (topic id {have_id}, now {now_id})", fix_new)
        for p, pm in sorted(tm.partitions.items()):
            s_end, t_end = tf.source_end.get(p), tf.target_end.get(p)
            if s_end is not None and pm.source_next > s_end:
                raise UsageError(f"{where}[{p}]", f"the mark (source offset {pm.source_next}) is ahead of the source's end "
                                 f"offset {s_end}: the topic was recreated", fix_new)
            if t_end is not None and pm.target_next > t_end:
                raise UsageError(f"{where}[{p}]", f"the mark (target offset {pm.target_next}) is ahead of the target's end "
                                 f"offset {t_end}: the topic was recreated", fix_new)


def truncate_passed(mark: Mark, facts: ClusterFacts) -> list[tuple[str, int]]:
    """Mark ``truncated`` every following partition whose source log start passed its mark (records deleted
    by retention were never compared); returns those partitions. They are never reported as a match."""
    out = []
    for (topic, p), pm in mark.items():
        tf = facts.topics.get(topic)
        start = tf.source_start.get(p) if tf else None
        if pm.state == "following" and start is not None and start > pm.source_next:
            pm.state = "truncated"
            pm.source_log_start = start
            out.append((topic, p))
    return out


def new_mark(facts: ClusterFacts, copy_marks: dict[str, str] | None = None) -> Mark:
    """A mark at the start of both logs (nothing proven yet); ``copy_marks``: it compares per origin."""
    return Mark(facts.migration, facts.source_cluster_id, facts.target_cluster_id, {},
                copy_marks=dict(copy_marks) if copy_marks is not None else None)


def sourceless(mark: Mark, topic: str, partition: int) -> bool:
    """Whether ``partition`` of ``topic`` exists on the target only (at or past the source's partition count):
    nothing is read from the source for it, and any record on it is one only on the target."""
    tm = mark.topics.get(topic)
    return tm is not None and partition >= tm.source_partitions


def add_missing(mark: Mark, facts: ClusterFacts) -> list[tuple[str, int]]:
    """Topics (and their partitions) selected now but not in the mark start at both logs' start offsets. Every
    target partition is followed, those the source does not have (:func:`sourceless`) included: MM2 never gives
    a target topic more partitions than its source's, so a record there has no source record. A source partition
    the target does not have yet is not followed (MM2 adds it; the changed count is then refused as any other)."""
    added = []
    for topic, tf in sorted(facts.topics.items()):
        tm = mark.topics.get(topic)
        if tm is None:
            tm = mark.topics[topic] = TopicMark(tf.target_name, tf.source_partitions, tf.target_partitions,
                                                tf.source_topic_id, tf.target_topic_id)
        for p in range(tf.target_partitions):
            if p not in tm.partitions:
                tm.partitions[p] = PartitionMark(tf.source_start.get(p, 0), tf.target_start.get(p, 0),
                                                 origin_target={"source": 0, "target": 0} if mark.copy_marks else None)
                added.append((topic, p))
    return added
