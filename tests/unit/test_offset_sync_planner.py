"""The pure offset planner over constructed logs: the planner's own questions (:func:`assess`) answered
from lists by :func:`_complete`, the way the reader answers them from a cluster. The same planner over
windows recorded on real clusters: tests/unit/test_offset_sync_recorded.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from msk_migrate.offset_translation.evidence import (
    LIMITS,
    FindByTime,
    Limits,
    PartitionRead,
    ReadOlder,
    ReadSource,
    ReadTarget,
    Span,
    TimedRec,
)
from msk_migrate.offset_translation.locate import Rec
from msk_migrate.offset_translation.planner import (
    Action,
    Decision,
    Placement,
    Unproven,
    action_for,
    assess,
    translate_commits,
)

TS0 = 1_700_000_000_000


# ---- constructed logs ------------------------------------------------------------------------------------
Log = list[tuple[int, int, int]]  # (offset, fp, ts): what a read_committed consumer gets, in offset order


def log(fps: list[int], offsets: list[int] | None = None, ts: list[int] | None = None) -> Log:
    offsets = offsets if offsets is not None else list(range(len(fps)))
    return [(o, fp, ts[i] if ts else TS0 + fp) for i, (o, fp) in enumerate(zip(offsets, fps, strict=True))]


def _complete(commit: int, src: Log, tgt: Log, *, checkpoint: int | None = None, log_append: bool = False,
              src_span: Span | None = None, tgt_span: Span | None = None, limits: Limits = LIMITS,
              target_ts: list[int] | None = None) -> tuple[PartitionRead, list[type]]:
    """Answer the planner's reads from two in-memory logs until it decides (as the reader does, with
    :meth:`PartitionRead.answered`); returns the read and the kinds of reads it asked for, in order.
    ``target_ts``: the target's own timestamps (LogAppendTime)."""
    src_span = src_span or Span(src[0][0] if src else 0, src[-1][0] + 1 if src else 0)
    tgt_span = tgt_span or Span(tgt[0][0] if tgt else 0, tgt[-1][0] + 1 if tgt else 0)
    r = PartitionRead("t", 0, "t", commit, src_span, tgt_span, checkpoint, log_append, limits)
    asked: list[type] = []
    for _ in range(100):
        need = assess(r)
        if isinstance(need, Decision):
            return r, asked
        asked.append(type(need))
        if isinstance(need, ReadSource):
            recs, hits = [], 0
            for o, fp, ts in src:
                if need.start <= o < need.end and hits < need.want:
                    recs.append(TimedRec(o, fp, ts))
                    hits += o >= need.from_offset
            r = r.answered(window_start=need.start, source_recs=tuple(recs))
        elif isinstance(need, FindByTime):
            stamps = target_ts or [ts for _, _, ts in tgt]
            at = next((o for (o, _, _), ts in zip(tgt, stamps, strict=True) if ts >= need.timestamp), -1)
            r = r.answered(time_offset=at)
        elif isinstance(need, ReadTarget):
            more = [Rec(o, fp) for o, fp, _ in tgt if o >= need.start][:need.want]
            end = not more or more[-1].offset + 1 >= tgt_span.end or len(more) < need.want
            r = r.answered(target_recs=r.target_recs + tuple(more), target_end_reached=end)
        elif isinstance(need, ReadOlder):
            r = r.answered(older_fps=frozenset(fp for o, fp, _ in src if need.start <= o < need.end))
    raise AssertionError("the planner never decided")


def plan(commit: int, src: Log, tgt: Log, **kw):
    r, asked = _complete(commit, src, tgt, **kw)
    (p,) = translate_commits([r], {})
    return p, asked


# ---- constructed cases ------------------------------------------------------------------------------------
def test_exact_hit_places_the_group_on_the_copy_of_the_first_record_after_the_commit():
    src = log(list(range(1000, 2000)))
    tgt = log(list(range(990, 2000)))  # the target holds 10 older records first: offsets differ by 10
    p, asked = plan(40, src, tgt)
    assert p.placement is Placement.EXACT and p.target_offset == 50 and p.redelivery == 0
    assert asked == [ReadSource, FindByTime, ReadTarget, ReadTarget]  # the window, its lower bound, the run, its tail
    assert p.action is Action.WRITE and "16 record(s) before and 16 at/after" in p.reason


def test_replayed_duplicates_after_a_restart_are_declared_and_the_first_copy_wins():
    fps = list(range(1000, 1200))
    src = log(fps)
    tgt = log(fps[:120] + fps[80:])  # wrote 0..119, restarted from 80
    p, asked = plan(100, src, tgt)
    assert p.placement is Placement.EXACT and p.target_offset == 100
    assert p.redelivery == 20 and len(p.duplicates) == 20  # 80..99 again, 100..119 twice
    assert p.decision.proof and p.decision.proof.replay and p.decision.proof.replay.at == 140
    assert ReadOlder in asked  # older identities read only because a replay was seen


def test_a_replay_from_further_back_than_the_window_needs_the_older_identities():
    fps = list(range(1000, 1200))
    p, _ = plan(100, log(fps), log(fps[:120] + fps[50:]))
    assert p.target_offset == 100 and p.redelivery == 50 and len(p.duplicates) == 20


def test_aborted_transactions_leave_offset_holes_and_a_commit_on_a_marker_finds_the_next_record():
    # source: 8 committed records, a marker (8), 8 aborted records and their marker (9..17), 8 more records
    offsets = list(range(8)) + list(range(18, 26))
    src = log(list(range(1000, 1016)), offsets)
    tgt = log(list(range(1000, 1016)))  # MM2 copies committed records only, dense
    p, _ = plan(8, src, tgt)
    assert p.placement is Placement.EXACT and p.target_offset == 8


def test_a_compacted_gap_skips_the_stale_copy_as_an_extra():
    src_offsets = [o for o in range(60) if o != 29]  # offset 29 compacted away on the source
    src = log([1000 + o for o in src_offsets], src_offsets)
    tgt = log([1000 + o for o in range(60)])  # the target copied it before compaction
    p, _ = plan(30, src, tgt)
    assert p.placement is Placement.EXACT and p.target_offset == 30 and not p.redelivered


def test_an_empty_partition_resumes_at_the_other_cluster_end():
    p, asked = plan(0, [], log([7, 8]), src_span=Span(0, 0))
    assert p.placement is Placement.EMPTY and p.target_offset == 2 and p.proven and asked == [ReadSource]


def test_a_commit_at_the_end_resumes_after_the_copy_of_the_last_record():
    fps = list(range(1000, 1080))
    p, _ = plan(80, log(fps), log([1, 2, 3, *fps]))
    assert p.placement is Placement.AT_END and p.target_offset == 83


def test_a_commit_before_the_oldest_record_resumes_at_that_record():
    fps = list(range(1000, 1150))
    src = log(fps[60:], list(range(60, 150)))  # retention removed 0..59
    p, _ = plan(10, src, log(fps[60:]), src_span=Span(60, 150))
    assert p.effective_commit == 60 and p.placement is Placement.EXACT and p.target_offset == 0


def test_log_append_time_bounds_by_the_target_clock_with_the_allowance():
    fps = list(range(1000, 1120))
    src = log(fps, ts=[TS0 + i for i in range(120)])
    tgt = log([fps[0]] * 5 + fps)
    target_clock = [TS0 - 60_000 + i for i in range(125)]  # the target stamped its own time, its clock a minute behind
    r, _ = _complete(70, src, tgt, log_append=True, target_ts=target_clock)
    (p,) = translate_commits([r])
    assert p.placement is Placement.EXACT and p.target_offset == 75 and r.lower_bound == 0
    # without the clock allowance the lower bound would pass every copy: nothing placed, never a guess
    (q,) = translate_commits([_complete(70, src, tgt, log_append=False, target_ts=target_clock)[0]])
    assert q.placement is Placement.NOT_REPLICATED and q.target_offset is None


def test_replication_behind_the_commit_point_is_not_replicated_with_no_offset_even_with_a_checkpoint():
    fps = list(range(1000, 1100))
    p, _ = plan(80, log(fps), log(fps[:50]), checkpoint=40)
    assert p.placement is Placement.NOT_REPLICATED and p.target_offset is None
    assert p.decision.unproven is Unproven.LAST_BEFORE_MISSING and p.action is Action.NONE
    assert p.reason.startswith("replication has not reached the commit point")


def test_content_that_differs_falls_back_to_the_checkpoint_or_is_left():
    fps = list(range(1000, 1100))
    changed = fps[:80] + [f + 10_000 for f in fps[80:]]
    p, _ = plan(80, log(fps), log(changed), checkpoint=70)
    assert p.placement is Placement.CHECKPOINT_FALLBACK and p.target_offset == 70 and p.redelivery is None
    assert p.decision.unproven is Unproven.CONTENT_DIFFERS and "checkpoint is used" in p.reason
    q, _ = plan(80, log(fps), log(changed))
    assert q.placement is Placement.LEFT and q.target_offset is None and q.method == "none"


def test_a_partition_missing_on_the_other_cluster_is_unproven():
    r = PartitionRead("t", 3, "t", 5, Span(0, 10), None, checkpoint=4)
    (p,) = translate_commits([r])
    assert p.placement is Placement.CHECKPOINT_FALLBACK and p.decision.unproven is Unproven.NO_PARTITION


def test_a_run_not_found_within_max_scan_is_not_located():
    fps = list(range(1000, 1100))
    tgt = log([5] * 500 + fps)  # 500 records the source does not have before the copy
    p, _ = plan(50, log(fps), tgt, limits=Limits(max_scan=200), target_ts=[TS0 + 5000] * 600)
    assert p.placement is Placement.LEFT and p.decision.unproven is Unproven.NOT_LOCATED


def test_actions_never_move_backwards_unless_forced():
    assert action_for(50, 60, force=False) is Action.BACKWARDS_REFUSED and not Action.BACKWARDS_REFUSED.writes
    assert action_for(50, 60, force=True) is Action.BACKWARDS_FORCED
    assert action_for(50, 50, force=False) is Action.UNCHANGED
    assert action_for(50, None, force=False) is Action.WRITE
    assert action_for(None, 10, force=True) is Action.NONE


def test_an_incomplete_read_is_refused_not_decided():
    r = PartitionRead("t", 0, "t", 5, Span(0, 10), Span(0, 10))
    with pytest.raises(ValueError, match="incomplete"):
        translate_commits([r])


def test_a_decision_is_consistent_by_construction():
    with pytest.raises(ValueError):
        Decision(Placement.EXACT, None)
    with pytest.raises(ValueError):
        Decision(Placement.NOT_REPLICATED, 5, Unproven.LAST_BEFORE_MISSING)


def test_an_answer_carries_the_window_it_leaves_alone_and_rebuilds_one_it_changes():
    src = log(list(range(1, 41)))
    r = PartitionRead("t", 0, "t", 20, Span(0, 40), Span(0, 40)).answered(
        window_start=0, source_recs=tuple(TimedRec(*x) for x in src))
    before, after = r.before, r.after
    later = r.answered(time_offset=0).answered(target_recs=(Rec(0, 1),))
    assert later.before is before and later.after is after  # carried: the later rounds do not build them again
    moved = later.answered(commit=25)
    assert moved.before == replace(later, commit=25).before != before  # a changed commit: built afresh
    assert [x.offset for x in moved.after] == list(range(25, 40))
