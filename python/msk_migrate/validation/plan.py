"""Planning a validation run: everything that needs the clusters but not Spark — topic selection,
metadata, the offset ranges to read on each side, topic-level decisions (LogAppendTime, latest per
key). Every failure here is bad input or an unreachable cluster (exit 2) before Spark starts."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..access.secrets import SecretResolver
from ..access.spark_options import spark_kafka_options
from ..errors import UsageError
from ..outcome import quiet
from . import cluster_meta as cm
from .reading import TP, ReadPlan
from .request import ValidationRequest, iso

if TYPE_CHECKING:  # an alias for annotations only: `int | None` is not a runtime value on the job's Python 3.9
    Window = dict[TP, tuple[int | None, int | None]]
#: Opens one cluster's metadata session: (role, endpoint, secrets, timeout) -> ClusterMetadata.
MetadataFactory = Callable[[str, Any, SecretResolver, float], cm.ClusterMetadata]


def confluent_metadata(role: str, endpoint: Any, resolver: SecretResolver, timeout: float) -> cm.ClusterMetadata:
    """The operator machine's session: confluent-kafka's AdminClient (the native pass reads with the same settings)."""
    from ..access.client_security import admin_config
    from .kafka_meta import ClusterMeta

    return ClusterMeta(role, admin_config(role, endpoint, resolver), timeout)


def select_topics(req: ValidationRequest, source_topics: dict[str, int]) -> list[str]:
    if req.offsets_snapshot:
        names = sorted(req.offsets_snapshot)
        for t in names:
            if t not in source_topics:
                raise UsageError("--offsets-snapshot", f"topic {t!r} does not exist on the source", "fix the snapshot")
        return names
    chosen: set[str] = set()
    for t in req.topics:
        if t not in source_topics:
            raise UsageError("--topic", f"topic {t!r} does not exist on the source", "check the name or use --topic-regex")
        chosen.add(t)
    if req.topic_regex:
        rx = re.compile(req.topic_regex)
        excl = [re.compile(r) for r in req.exclude_regexes]
        matched = {t for t in source_topics if rx.fullmatch(t) and not any(e.fullmatch(t) for e in excl)}
        if not matched and not chosen:
            raise UsageError("--topic-regex", f"{req.topic_regex!r} matches no source topic", "check the regex")
        chosen |= matched
    return sorted(chosen)


@dataclass
class ValidationPlan:
    """What one run compares. ``target`` is None in offset-snapshot mode until the source checksum
    is known (:meth:`snapshot_target`)."""

    req: ValidationRequest
    topics: list[str]
    src_topics: dict[str, int]
    tgt_topics: dict[str, int]
    src_meta: dict[str, cm.TopicMeta]
    tgt_meta: dict[str, cm.TopicMeta]
    tgt_name: dict[str, str]
    src_tps: list[TP]
    tgt_tps: list[TP]
    source: ReadPlan
    target: ReadPlan | None
    window: dict[str, Any]
    no_ts: set[str] = field(default_factory=set)
    latest_topics: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    _tgt: cm.ClusterMetadata | None = None
    _tgt_offsets: tuple[dict[TP, int], dict[TP, int]] | None = None
    _target_options: dict[str, str] = field(default_factory=dict)
    #: librdkafka settings per side (secrets resolved): the native checksum pass reads with them
    client_confs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the source log per partition when planned: (earliest, latest) offsets, newest record timestamp (None: unknown)
    source_log: dict[TP, tuple[int, int]] = field(default_factory=dict)
    source_newest_ms: dict[TP, int | None] = field(default_factory=dict)
    #: each side's cluster id (what the report records and `cutover check` compares)
    cluster_ids: dict[str, str | None] = field(default_factory=dict)

    @property
    def both(self) -> list[TP]:
        return sorted(set(self.src_tps) & set(self.tgt_tps))

    def order_checked(self, tp: TP) -> bool:
        """Order is checked for every compared partition except latest-per-key topics."""
        return tp[0] not in self.latest_topics

    def snapshot_target(self, src_digests: dict[TP, Any]) -> ReadPlan:
        """Offset-snapshot mode: the target compared over the timestamps the snapshot's records span."""
        slack = self.req.timestamp_slack_seconds * 1000
        pw: dict[TP, tuple[int, int]] = {}
        for tp in self.tgt_tps:
            d = src_digests.get(tp)
            if d is None or d.count == 0 or d.min_ts is None:
                pw[tp] = (0, 0)
            else:
                pw[tp] = (d.min_ts, d.max_ts + 1 + (slack if tp[0] in self.no_ts else 0))
        earliest, latest = self._tgt_offsets  # type: ignore[misc]
        empty = {tp for tp, (lo, hi) in pw.items() if hi <= lo}
        ranges = {tp: (latest[tp], latest[tp]) for tp in empty}
        ranges.update(
            _bounds(self, self._tgt, {tp: (lo, hi - 1) for tp, (lo, hi) in pw.items() if tp not in empty},  # type: ignore[arg-type]
                    earliest, latest, rename=True)
        )
        self.target = ReadPlan(
            self._target_options, ranges, self.tgt_name, partition_windows=pw, no_ts_topics=self.no_ts,
            latest_per_key_topics=self.latest_topics, min_partitions=self.req.min_partitions,
            **mark_fields(self.req, "target"),
        )
        return self.target


def _named(plan_or_names: dict[str, str], tps: list[TP]) -> list[TP]:
    return [(plan_or_names[t], p) for t, p in tps]


def _unnamed(tgt_name: dict[str, str], d: dict[TP, int]) -> dict[TP, int]:
    back = {v: k for k, v in tgt_name.items()}
    return {(back[t], p): o for (t, p), o in d.items()}


def _bounds(plan: ValidationPlan, meta: cm.ClusterMetadata, windows: Window, earliest: dict[TP, int],
            latest: dict[TP, int], rename: bool) -> dict[TP, tuple[int, int]]:
    """Per partition [start, end) offsets covering timestamps [lo - slack, hi + slack)."""
    slack = plan.req.timestamp_slack_seconds * 1000
    iso_level = plan.req.isolation_level
    q = (lambda d: {(plan.tgt_name[t], p): v for (t, p), v in d.items()}) if rename else (lambda d: d)
    back = (lambda d: _unnamed(plan.tgt_name, d)) if rename else (lambda d: d)
    lo_specs = {tp: cm.at_time(max(lo - slack, 0)) for tp, (lo, _hi) in windows.items() if lo is not None}
    hi_specs = {tp: cm.at_time(hi + slack) for tp, (_lo, hi) in windows.items() if hi is not None}
    lo_found = back(cm.offsets_by_query(meta, q(lo_specs), iso_level))
    hi_found = back(cm.offsets_by_query(meta, q(hi_specs), iso_level))
    out = {}
    for tp in windows:
        start = earliest[tp] if tp not in lo_found else (lo_found[tp] if lo_found[tp] >= 0 else latest[tp])
        end = latest[tp] if tp not in hi_found else (hi_found[tp] if hi_found[tp] >= 0 else latest[tp])
        out[tp] = (start, max(start, end))
    return out


def _snapshot_ranges(req: ValidationRequest, src_topics: dict[str, int], earliest: dict[TP, int],
                     latest: dict[TP, int]) -> dict[TP, tuple[int, int]]:
    ranges: dict[TP, tuple[int, int]] = {}
    for t, parts in (req.offsets_snapshot or {}).items():
        for p, rng in parts.items():
            if p >= src_topics[t]:
                raise UsageError(f"--offsets-snapshot {t}", f"partition {p} does not exist (the topic has {src_topics[t]})")
            start = rng.start if rng.start is not None else earliest[(t, p)]
            if start < earliest[(t, p)]:
                raise UsageError(
                    f"--offsets-snapshot {t}[{p}]",
                    f"start {start} is below the earliest offset {earliest[(t, p)]} (deleted by retention)",
                    "use a later start",
                )
            if rng.end > latest[(t, p)]:
                committed = "committed " if req.isolation_level == "read_committed" else ""
                raise UsageError(
                    f"--offsets-snapshot {t}[{p}]",
                    f"end {rng.end} is beyond the latest {committed}offset {latest[(t, p)]}",
                    "take the snapshot from this source cluster",
                )
            ranges[(t, p)] = (start, rng.end)
    return ranges


def make_plan(req: ValidationRequest, resolver: SecretResolver, say=quiet, metadata: MetadataFactory | None = None) -> ValidationPlan:
    """Read the clusters' metadata and decide what to compare (no Spark job). ``metadata`` opens each cluster's
    session: confluent-kafka's by default (and the native pass's client settings with it), the Spark job's
    own JVM admin in the job (:mod:`.jvm_meta`)."""
    snapshot = bool(req.offsets_snapshot)
    until = None if snapshot else req.effective_until_ms(int(time.time() * 1000))
    frm = None if snapshot else req.from_timestamp_ms
    if frm is not None and until is not None and frm >= until:  # until defaulted to now - grace
        raise UsageError(
            "--from-timestamp",
            f"{iso(frm)} is not before the window end {iso(until)} (now minus --grace-seconds {req.grace_seconds})",
            "give an earlier --from-timestamp, or a later --until-timestamp",
        )
    say("connecting to the clusters")
    opts = {
        role: spark_kafka_options(role, getattr(req, role), resolver, req.isolation_level, req.kafka_options)
        for role in ("source", "target")
    }
    open_meta = metadata or confluent_metadata
    src, tgt = (open_meta(role, getattr(req, role), resolver, req.metadata_timeout_seconds) for role in ("source", "target"))
    # the native pass reads with the confluent session's settings; a JVM session has none (the job is Spark's pass)
    client_confs = {role: dict(getattr(session, "client_conf", {})) for role, session in (("source", src), ("target", tgt))}
    src_topics, tgt_topics = src.topics(), tgt.topics()
    topics = select_topics(req, src_topics)
    say(f"reading metadata of {len(topics)} topic(s)")
    tgt_name = {t: req.target_topic(t) for t in topics}
    src_meta = src.describe(topics)
    tgt_meta = tgt.describe([tgt_name[t] for t in topics if tgt_name[t] in tgt_topics])

    iso_level = req.isolation_level
    src_tps = [(t, p) for t in topics for p in range(src_topics[t])]
    tgt_tps = [(t, p) for t in topics if tgt_name[t] in tgt_topics for p in range(tgt_topics[tgt_name[t]])]

    src_latest = cm.offsets(src, src_tps, cm.latest(), iso_level)
    src_earliest = cm.offsets(src, src_tps, cm.earliest(), iso_level)
    tgt_latest = _unnamed(tgt_name, cm.offsets(tgt, _named(tgt_name, tgt_tps), cm.latest(), iso_level))
    tgt_earliest = _unnamed(tgt_name, cm.offsets(tgt, _named(tgt_name, tgt_tps), cm.earliest(), iso_level))

    plan = ValidationPlan(
        req, topics, src_topics, tgt_topics, src_meta, tgt_meta, tgt_name, src_tps, tgt_tps,
        source=None, target=None, window={},  # type: ignore[arg-type]
        _tgt=tgt, _tgt_offsets=(tgt_earliest, tgt_latest), _target_options=opts["target"],
        client_confs=client_confs,
        source_log={tp: (src_earliest[tp], src_latest[tp]) for tp in src_tps},
        source_newest_ms=cm.newest_timestamps(src, [tp for tp in src_tps if src_latest[tp] > src_earliest[tp]], iso_level),
        cluster_ids={"source": src.cluster_id(), "target": tgt.cluster_id()},
    )
    for t in topics:
        s_m, t_m = src_meta.get(t), tgt_meta.get(tgt_name[t])
        if (s_m and s_m.log_append_time) or (t_m and t_m.log_append_time):
            plan.no_ts.add(t)
            plan.warnings.append(
                f"{t}: message.timestamp.type=LogAppendTime on the "
                f"{'source' if s_m and s_m.log_append_time else 'target'}: timestamps are excluded from the "
                "fingerprint, and the window is applied to each cluster's own append times"
            )
        if req.compacted == "latest-per-key" and s_m and s_m.compacted:
            plan.latest_topics.add(t)

    common: dict[str, Any] = dict(no_ts_topics=plan.no_ts, latest_per_key_topics=plan.latest_topics, min_partitions=req.min_partitions)
    if snapshot:
        src_ranges = _snapshot_ranges(req, src_topics, src_earliest, src_latest)
        plan.src_tps = sorted(src_ranges)
        plan.tgt_tps = [tp for tp in tgt_tps if tp in src_ranges]
        plan.source = ReadPlan(opts["source"], src_ranges, {}, **common)
        plan.window = {"kind": "offsets", "partitions": len(src_ranges)}
    else:
        windows: Window = {tp: (frm, until) for tp in src_tps}
        src_ranges = _bounds(plan, src, windows, src_earliest, src_latest, rename=False)
        plan.source = ReadPlan(opts["source"], src_ranges, {}, window=(frm, until), **common)
        tgt_ranges = _bounds(plan, tgt, {tp: (frm, until) for tp in tgt_tps}, tgt_earliest, tgt_latest, rename=True)
        plan.target = ReadPlan(opts["target"], tgt_ranges, tgt_name, window=(frm, until), **common)
        plan.window = {"kind": "timestamps", "from_timestamp_ms": frm, "until_timestamp_ms": until,
                       "from": iso(frm), "until": iso(until)}
    for side, read in (("source", plan.source), ("target", plan.target)):
        for k, v in mark_fields(req, side).items():
            if read is not None:
                setattr(read, k, v)
    return plan


def mark_fields(req: ValidationRequest, side: str) -> dict[str, Any]:
    """The copy-mark settings of one side's :class:`ReadPlan` (docs/active-active-proof.md).

    records: the target's trailing ``copied-from.<source>`` is removed, source records copied from the target are
    left out. multiset: each side's records are its natives and the copies of the other side's (their trailing mark
    removed), ranked per origin."""
    m = req.marks
    if m is None:
        return {}
    if req.compare == "multiset":
        peer = m.target_alias if side == "source" else m.source_alias
        return {"strip_mark_of": peer, "skip_marked_by": None, "two_origin": True}
    if side == "source":
        return {"skip_marked_by": m.target_alias}
    return {"strip_mark_of": m.source_alias}
