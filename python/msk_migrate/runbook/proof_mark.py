"""The cutover gates' reading of a verified-up-to mark (``msk-migrate validate --follow``).

A mark is evidence equivalent to a batch validation report when, for every partition the gate needs
(a consumer group's commit points, or a producer cutover's fenced end offsets, as source offsets), the
mark's source offset is at or past it, the partition is still ``following`` (no mismatch, not truncated),
the mark was made on the flow's clusters (cluster ids) and it was persisted within the age limit. The
condition says which evidence it used (the mark, its location, its age, the records proven), so the gate's
row shows it; the batch report remains the audit document.

Invariants: nothing to prove (no partition required) is never a pass; a partition the mark does not hold
fails; a mismatch on a target partition of a required topic that the source does not have fails; the first
failing partitions are named, with a mismatch's first differing record.
"""

from __future__ import annotations

import json
import time

from .. import store
from ..errors import UsageError
from ..validation.follow.mark import Mark, sourceless
from ..validation.follow.store import DEFAULT_NAME, MarkStore
from .evidence import Condition, GateEvidence, check_validation

NAME = "proof mark"
TP = tuple[str, int]


def _age_text(seconds: float) -> str:
    return f"{seconds:.0f} s old" if seconds < 120 else f"{seconds / 60:.0f} min old"


def check_proof_mark(location: str, required: dict[TP, int], what: str, max_age_s: float,
                     source_cluster_id: str | None = None, target_cluster_id: str | None = None,
                     field: str = "--validation-report", now_ms: int | None = None) -> Condition:
    """Passes when the mark at ``location`` is at or past ``required`` (source offsets; ``what`` names
    them, e.g. "the groups' commit points" or "the fenced end offsets") on every partition."""
    mark = MarkStore(location, field).load()
    if mark is None:
        return Condition(NAME, False, f"no proof mark at {location} (run `msk-migrate validate --follow --mark {location}`)")
    return mark_condition(mark, str(MarkStore(location, field)), required, what, max_age_s, source_cluster_id,
                          target_cluster_id, now_ms)


def mark_condition(mark: Mark, where: str, required: dict[TP, int], what: str, max_age_s: float,
                   source_cluster_id: str | None = None, target_cluster_id: str | None = None,
                   now_ms: int | None = None) -> Condition:
    """The condition of an already loaded mark (see :func:`check_proof_mark`)."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    problems: list[str] = []
    for role, have, want in (("source", mark.source_cluster_id, source_cluster_id),
                             ("target", mark.target_cluster_id, target_cluster_id)):
        if want is not None and have != want:
            problems.append(f"made on another {role} cluster (mark {have}, flow {want})")
    if not required:
        problems.append(f"nothing to prove: no partition in {what}")
    behind, stopped, absent = [], [], []
    for (t, p), need in sorted(required.items()):
        tm = mark.topics.get(t)
        pm = tm.partitions.get(p) if tm else None
        if pm is None:
            absent.append(f"{t}[{p}]")
        elif pm.state == "mismatch":
            m = pm.mismatch or {}
            stopped.append(f"{t}[{p}] mismatch: {m.get('category')} at source offset {m.get('source_offset')}, "
                           f"target offset {m.get('target_offset')}")
        elif pm.state == "truncated":
            stopped.append(f"{t}[{p}] truncated: retention passed the mark (log start {pm.source_log_start})")
        elif pm.source_next < need:
            behind.append(f"{t}[{p}] verified up to {pm.source_next} < {need}")
    # A target partition the source does not have is in no required set (those name source partitions), yet a
    # record on it is one only on the target: its mismatch fails the gate of its topic.
    for t in sorted({t for t, _ in required}):
        tm = mark.topics.get(t)
        for p, pm in sorted(tm.partitions.items()) if tm else ():
            if sourceless(mark, t, p) and pm.state == "mismatch":
                m = pm.mismatch or {}
                stopped.append(f"{t}[{p}] (on the target only) mismatch: {m.get('category')} at target offset "
                               f"{m.get('target_offset')}")
    if absent:
        problems.append(f"the mark does not cover {len(absent)} partition(s): {', '.join(absent[:5])}" + (" ..." if len(absent) > 5 else ""))
    if stopped:
        problems.append("; ".join(stopped[:3]) + (f" (+{len(stopped) - 3} more)" if len(stopped) > 3 else ""))
    if behind:
        problems.append(f"behind {what} on {len(behind)} partition(s): " + "; ".join(behind[:3]) + (" ..." if len(behind) > 3 else ""))
    age = (now_ms - mark.updated_ms) / 1000 if mark.updated_ms else None
    if age is None or age > max_age_s:
        problems.append(f"persisted {_age_text(age) if age is not None else 'never'} (limit {max_age_s / 60:.0f} min): "
                        "is the follower running?")
    age_text = _age_text(age) if age is not None else "no persist time"
    if problems:
        return Condition(NAME, False, f"{'; '.join(problems)}; {age_text}, {where}")
    proven = sum(mark.partition(t, p).compared for t, p in required)
    how = ""
    if mark.copy_marks is not None:  # copies are marked: the follower proved the source's origin, counted the target's
        counted = sum(sum((mark.partition(t, p).origin_target or {}).values()) for t, p in required)
        how = (f" compared per origin ({mark.copy_marks['source_alias']} in order; {counted:,} record(s) of "
               f"{mark.copy_marks['target_alias']} counted, not compared)")
    return Condition(NAME, True, f"evidence: proof mark at or past {what} on {len(required)} partition(s), "
                     f"{proven:,} record(s) proven{how}, {age_text} (limit {max_age_s / 60:.0f} min), {where}")


def is_proof_mark(location: str, field: str = "--validation-report") -> bool:
    """Whether ``location`` names a proof mark (a mark document, or a directory/prefix holding one and no report)."""
    place = store.document(location, field, "report.json")
    try:
        body = place.read_bytes("")
    except UsageError:
        try:
            body = store.document(location, field, DEFAULT_NAME).read_bytes("")
        except UsageError:
            return False
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("kind") == "msk-migrate proof mark"


def validation_evidence(location: str, max_age_s: float, evidence: GateEvidence) -> Condition:
    """The gate's validation condition from whichever evidence ``location`` holds: a proof mark (at or past
    the groups' commit points) or a batch report (:func:`.evidence.check_validation`)."""
    if is_proof_mark(location):
        return check_proof_mark(location, evidence.committed, "the groups' commit points", max_age_s,
                                evidence.source_cluster_id, evidence.target_cluster_id)
    return check_validation(location, max_age_s, evidence)
