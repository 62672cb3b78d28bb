"""From digests and diffs to verdicts: per partition a status, counts and a human explanation; per
topic the metadata parity. The explanation sentences the console and the HTML page show live here."""

from __future__ import annotations

from . import cluster_meta as cm
from .checksum import Digest, explain_checksum
from .diff_result import DiffResult
from .plan import ValidationPlan
from .reading import TP
from .report import NO_EVIDENCE, PartitionResult, SideDigest, TopicResult
from .request import iso
from .schema_proof import SchemaRow


def explain_diff(dr: DiffResult) -> list[str]:
    out = []
    if dr.missing:
        out.append(f"{dr.missing} record(s) missing on the target")
    if dr.unexpected:
        out.append(f"{dr.unexpected} unexpected record(s) on the target")
    if dr.duplicates:
        out.append(f"{dr.duplicates} duplicate record(s) on the target")
    if dr.changed:
        kinds = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(dr.changes.items()))
        out.append(f"{dr.changed} of these are records changed in place ({kinds})")
    if dr.reordered:
        first = dr.samples.get("reordered") or []
        where = ""
        if first:
            s = first[0]
            where = (f"; first: source offset {s['source_offset']} (after {s['previous_source_offset']}) is at target "
                     f"offset {s['target_offset']}, before {s['previous_target_offset']}")
        out.append(f"records reordered: the target's order breaks the source's at {dr.reordered} place(s){where}")
    return out


def no_evidence_reason(plan: ValidationPlan, tp: TP, newest: int | None, records: int) -> str | None:
    """Why a partition whose source log holds ``records`` offsets compared none; None when that is
    expected (every record is older than the window's start: nothing of it belongs to the window)."""
    w = plan.window
    if w.get("kind") == "offsets":
        return f"the offsets snapshot's range of this partition holds no record (its log holds {records} offset(s))"
    frm, until = w.get("from_timestamp_ms"), w.get("until_timestamp_ms")
    if newest is not None and frm is not None and newest < frm:
        return None
    if newest is not None and until is not None and newest >= until:
        why = (f"the window ends at {iso(until)}, before the partition's records (newest {iso(newest)})")
        if plan.req.until_timestamp_ms is None:
            why += (f": the default end is now minus --grace-seconds {plan.req.grace_seconds}; run again once they are "
                    "older than that, or give --until-timestamp / a smaller --grace-seconds")
        return why
    return (f"the window [{iso(frm) or 'beginning'}, {iso(until) or 'end'}) compared none of the partition's "
            f"{records} offset(s)" + (f" (newest record {iso(newest)})" if newest is not None else ""))


def _evidence(plan: ValidationPlan, tp: TP, pr: PartitionResult) -> PartitionResult:
    """Record the source log and turn a 'match' on nothing into ``no-evidence``."""
    start, end = plan.source_log.get(tp, (None, None))
    pr.log_start_offset, pr.log_end_offset = start, end
    pr.newest_timestamp = plan.source_newest_ms.get(tp)
    if pr.status in ("match", "duplicates") and pr.compared == 0 and pr.records_in_log:
        why = no_evidence_reason(plan, tp, pr.newest_timestamp, (end or 0) - (start or 0))
        if why is not None:
            pr.status = NO_EVIDENCE
            pr.differences.append(why)
    return pr


def partition_result(plan: ValidationPlan, tp: TP, sd: Digest | None, td: Digest | None,
                     dr: DiffResult | None) -> PartitionResult:
    return _evidence(plan, tp, _marks(plan, sd, td, _compare(plan, tp, sd, td, dr)))


def _marks(plan: ValidationPlan, sd: Digest | None, td: Digest | None, pr: PartitionResult) -> PartitionResult:
    """Copy marks in the verdict (docs/active-active-proof.md). records: a target record without the flow's trailing
    mark (or with a wrong or misplaced one) fails the partition, named. multiset: a wrong or misplaced mark on either
    side fails it; a mismatch is explained per origin (its records on each side) and an order difference is one
    within an origin (the interleaving of the origins is not compared)."""
    m = plan.req.marks
    if m is None:
        return pr
    s_marks = (sd.marks if sd is not None else None) or {}
    t_marks = (td.marks if td is not None else None) or {}
    if plan.req.compare != "multiset":
        bad = t_marks.get("missing_or_wrong", 0)
        if bad:
            pr.status = "mismatch"
            pr.differences.insert(0, f"mark missing/wrong: {bad} target record(s) without the trailing copy mark "
                                     f"msk-migrate.copied-from.{m.source_alias} (value {m.source_alias})")
        back = s_marks.get("origin_target", 0)
        if back and pr.status not in ("match", "duplicates"):
            pr.differences.append(f"origin: target: {back} source record(s) came from the target, so this topic flows "
                                  "both ways (active/active): compare it with --compare multiset")
        return pr
    lines = [f"copy mark wrong or misplaced: {n} {side} record(s) carry copied-from.{peer} elsewhere than last or "
             "with another value" for side, peer, n in (("source", m.target_alias, s_marks.get("missing_or_wrong", 0)),
                                                       ("target", m.source_alias, t_marks.get("missing_or_wrong", 0))) if n]
    if pr.status not in ("match", "duplicates") or lines:
        pr.status = "mismatch"
        lines += [f"origin {alias}: {a} record(s) on the source, {b} on the target" for alias, a, b in (
            (m.source_alias, s_marks.get("natives", 0), t_marks.get("stripped", 0)),
            (m.target_alias, s_marks.get("stripped", 0), t_marks.get("natives", 0)))]
        pr.differences = lines + [
            "an origin's records are in a different order on the two sides (same multiset; the interleaving of the "
            "origins is not compared)" if d.startswith("records reordered") else d for d in pr.differences]
    return pr


def _compare(plan: ValidationPlan, tp: TP, sd: Digest | None, td: Digest | None,
             dr: DiffResult | None) -> PartitionResult:
    req = plan.req
    pr = PartitionResult(
        partition=tp[1],
        source=SideDigest.of(sd, plan.source.ranges.get(tp)) if sd is not None else None,
        target=SideDigest.of(td, plan.target.ranges.get(tp)) if td is not None and plan.target else None,
    )
    if sd is not None and td is None:
        pr.status, pr.method = "missing_on_target", "checksum"
        pr.missing, pr.unexpected, pr.duplicates = sd.count, 0, 0
        pr.differences.append("partition does not exist on the target")
        return pr
    if sd is None and td is not None:
        pr.status, pr.method = "extra_on_target", "checksum"
        pr.missing, pr.unexpected, pr.duplicates = 0, td.count, 0
        pr.differences.append("partition does not exist on the source")
        return pr
    assert sd is not None and td is not None
    ordered = plan.order_checked(tp)
    same = sd.same_records(td) and (not ordered or sd.same_order(td))
    if dr is not None:
        pr.method = "full"
        pr.missing, pr.unexpected, pr.duplicates = dr.missing, dr.unexpected, dr.duplicates
        pr.changed, pr.changes, pr.samples = dr.changed, dr.changes, dr.samples
        pr.reordered = dr.reordered if ordered else None
        if dr.missing or dr.unexpected or dr.duplicates or dr.reordered:
            pr.differences.extend(explain_diff(dr))
            only_dups = not dr.missing and not dr.unexpected and not dr.reordered
            pr.status = "duplicates" if (only_dups and req.allow_duplicates) else "mismatch"
        elif not same:
            pr.status = "mismatch"
            if sd.same_records(td):
                pr.differences.append(
                    "records reordered among identical copies: a record repeated with the same key, value, headers "
                    "and timestamp is at another place (order digests differ; first occurrences are in order)"
                )
            else:
                pr.differences.append("checksums differ but the diff found no difference (data changed between passes?)")
        else:
            pr.status = "match"
        return pr
    pr.method = "checksum"
    if same:
        pr.status = "match"
        pr.missing = pr.unexpected = pr.duplicates = pr.changed = 0
        pr.reordered = 0 if ordered else None
    else:
        pr.status = "mismatch"
        pr.differences.extend(explain_checksum(sd, td, ordered))
        if sd.same_records(td):  # only the order differs: the counts are known
            pr.missing = pr.unexpected = pr.duplicates = pr.changed = 0
    return pr


def topic_results(plan: ValidationPlan, src_dig: dict[TP, Digest], tgt_dig: dict[TP, Digest],
                  diffs: dict[TP, DiffResult], schema_rows: dict[str, SchemaRow] | None = None) -> list[TopicResult]:
    """Per topic its partitions' results, metadata parity and ``schema_rows`` (None: the ids were not read)."""
    req = plan.req
    out = []
    for t in plan.topics:
        s_m = plan.src_meta.get(t)
        t_name = plan.tgt_name[t]
        t_m = plan.tgt_meta.get(t_name)
        n_src, n_tgt = plan.src_topics[t], plan.tgt_topics.get(t_name)
        tr = TopicResult(
            topic=t,
            target_topic=t_name,
            source_partitions=n_src,
            target_partitions=n_tgt,
            compare="latest-per-key" if t in plan.latest_topics else req.compare,
            timestamps_in_fingerprint=t not in plan.no_ts,
            timestamp_type={
                "source": s_m.configs.get("message.timestamp.type") if s_m else None,
                "target": t_m.configs.get("message.timestamp.type") if t_m else None,
            },
            cleanup_policy=s_m.configs.get("cleanup.policy") if s_m else None,
            config_differences=cm.synced_config_differences(s_m, t_m, req.ignore_configs) if s_m else [],
        )
        if n_tgt is None:
            tr.problems.append(f"topic {t_name!r} does not exist on the target")
        elif n_tgt != n_src:
            tr.problems.append(f"partition count differs: source {n_src}, target {n_tgt}")
        for d in tr.config_differences:
            tr.problems.append(f"config {d['name']} differs: source {d['source']!r}, target {d['target']!r}")
        parts = sorted({p for (tt, p) in plan.src_tps if tt == t} | {p for (tt, p) in plan.tgt_tps if tt == t})
        for p in parts:
            tp = (t, p)
            sd = src_dig.get(tp) if tp in plan.source.ranges else None
            td = tgt_dig.get(tp) if plan.target is not None and tp in plan.target.ranges else None
            tr.partitions.append(partition_result(plan, tp, sd, td, diffs.get(tp)))
        tr.schemas = (schema_rows or {}).get(t)
        tr.finish()
        if tr.status != "match" and s_m is not None and s_m.compacted and t not in plan.latest_topics:
            tr.problems.append("compacted topic: the clusters compact independently; consider --compacted latest-per-key")
        out.append(tr)
    return out


def needs_diff(plan: ValidationPlan, src_dig: dict[TP, Digest], tgt_dig: dict[TP, Digest]) -> list[TP]:
    """Partitions on both sides whose records or (where checked) order differ."""
    return [
        tp for tp in plan.both
        if not src_dig[tp].same_records(tgt_dig[tp])
        or (plan.order_checked(tp) and not src_dig[tp].same_order(tgt_dig[tp]))
    ]
