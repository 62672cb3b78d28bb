"""The windowed two-origin translation against its oracle, the whole-log translation (pure: partitions as lists).

Each side is a list of records behind Kafka's read contract (:class:`ListSide`: records of an offset range, and
ListOffsets for a timestamp = the earliest offset whose timestamp is >= it). Logs are built as active/active
leaves them: each origin's natives with producer timestamps (now and then a late one, now and then a record
identical to the previous), their copies by MM2 with restart re-runs and replication lag, the two interleaved by
arrival, transaction-marker holes in the offsets.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msk_migrate.offset_translation.two_origin import OriginRec, place_copies, translate_position
from msk_migrate.offset_translation.two_origin_window import WindowTooLarge, translate_windowed

pytestmark = pytest.mark.unit


@dataclass
class ListSide:
    """A partition held in a list, read as a read_committed consumer and ListOffsets read it."""

    recs: list[OriginRec]
    end: int
    start: int = 0
    timestamps: bool = True
    reads: list[tuple[int, int]] = field(default_factory=list)  #: the ranges read, in order

    def read(self, lo: int, hi: int) -> Sequence[OriginRec]:
        self.reads.append((lo, hi))
        return [r for r in self.recs if lo <= r.offset < hi]

    def offset_for_time(self, ts: int) -> int:
        return next((r.offset for r in self.recs if r.ts >= ts), self.end)


def _natives(origin: str, n: int, rnd: random.Random, late: float, same: float) -> list[OriginRec]:
    out: list[OriginRec] = []
    clock = 1_000
    for i in range(n):
        if len(out) > 2 and rnd.random() < same:  # a producer wrote an identical record (key, value, timestamp)
            twin = out[-rnd.randint(2, min(6, len(out)))]
            out.append(OriginRec(i, origin, twin.fp, twin.ts))
            continue
        clock += rnd.randint(0, 3)
        ts = clock - (rnd.randint(1, 6) if rnd.random() < late else 0)
        out.append(OriginRec(i, origin, hash((origin, i, ts)) & (2**63 - 1), ts))
    return out


def _copies(natives: list[OriginRec], rnd: random.Random, restarts: float) -> list[OriginRec]:
    """MM2's copies under at-least-once: now and then it resumes from an earlier committed offset, re-running."""
    out, i = [], 0
    while i < len(natives):
        if i and rnd.random() < restarts:
            out.extend(natives[rnd.randint(max(0, i - 5), i - 1):i])
        out.append(natives[i])
        i += 1
    return out


def _side(natives: list[OriginRec], copies: list[OriginRec], rnd: random.Random, lag: int) -> ListSide:
    """One side's log: natives as produced, copies arriving ``lag``-ish later, each stream in its order; holes."""
    events, t = [], 0
    for r in natives:
        t = max(t, r.ts)
        events.append((t, 0, len(events), r))
    t = 0
    for r in copies:
        t = max(t, r.ts + rnd.randint(0, lag))
        events.append((t, 1, len(events), r))
    out, off = [], 0
    for _t, _k, _n, r in sorted(events, key=lambda e: e[:3]):
        off += 1 if rnd.random() < 0.05 else 0  # a transaction marker
        out.append(OriginRec(off, r.origin, r.fp, r.ts))
        off += 1
    return ListSide(out, off + rnd.randint(0, 1))


def _pair(rnd: random.Random, n: int, late: float = 0.08, same: float = 0.02, restarts: float = 0.1,
          lag: int = 8) -> tuple[ListSide, ListSide]:
    """(F, T): F's natives are origin b, T's origin a; now and then an origin writes nothing or little."""
    def count() -> int:
        return rnd.choice([0, rnd.randint(0, n), rnd.randint(n // 2, n), rnd.randint(n // 2, n)])
    b, a = _natives("b", count(), rnd, late, same), _natives("a", count(), rnd, late, same)
    return _side(b, _copies(a, rnd, restarts), rnd, lag), _side(a, _copies(b, rnd, restarts), rnd, lag)


def _duplicates_from(copies: list[OriginRec], natives: list[OriginRec], start: int) -> int:
    p = place_copies(copies, natives)
    return sum(1 for c, f in zip(copies, p.first, strict=False) if c.offset >= start and not f)


def _same_answer(f: ListSide, t: ListSide, position: int, window: int) -> None:
    oracle = translate_position(f.recs, position, t.recs, t.end, frm_alias="b", to_alias="a")
    got, read = translate_windowed(f, position, t, frm_alias="b", to_alias="a", window=window)
    assert got.window is not None
    at_start = got.window["source_start"] == f.start and got.window["target_start"] == t.start
    if not oracle.proven:
        assert got.proven or at_start  # refused only where the oracle is
        if got.proven:  # then every copy the oracle could not place lies before the aligned copies: never read
            assert isinstance(got.window["duplicates_from"], dict)
            for problem in oracle.problems:
                side, at = re.match(r"origin \w+ on the (\w+) side: copy #\d+ \(offset (\d+)\)", problem).groups()  # type: ignore[union-attr]
                assert int(at) < got.window["duplicates_from"][side], (problem, got.window)
        return
    assert got.proven, got.reason
    assert (got.offset, got.exact, got.redelivered, got.duplicates_ahead) == \
        (oracle.offset, oracle.exact, oracle.redelivered, oracle.duplicates_ahead), (got.reason, oracle.reason)
    for o in ("a", "b"):  # counts from the window starts: the same gap between consumed and covered
        assert got.consumed.get(o, 0) - got.covered.get(o, 0) == oracle.consumed.get(o, 0) - oracle.covered.get(o, 0)
    frm_by, to_by = ([r for r in log if r.origin == o] for log, o in ((f.recs, "a"), (t.recs, "b")))
    nat_a, nat_b = [r for r in t.recs if r.origin == "a"], [r for r in f.recs if r.origin == "b"]
    starts = got.window["duplicates_from"]
    assert isinstance(starts, dict)
    want = {s: n for s, n in (("source", _duplicates_from(frm_by, nat_a, starts["source"])),
                              ("target", _duplicates_from(to_by, nat_b, starts["target"]))) if n}
    assert got.duplicates == want
    if at_start:
        assert got.duplicates == oracle.duplicates and got.consumed == oracle.consumed and got.covered == oracle.covered
    assert read["source"] <= len(f.recs) and read["target"] <= len(t.recs)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), window=st.integers(1, 40), n=st.integers(0, 80))
def test_the_windowed_answer_is_the_whole_logs_answer(seed, window, n):
    rnd = random.Random(seed)
    f, t = _pair(rnd, n)
    position = rnd.choice([r.offset for r in f.recs] + [f.end])
    _same_answer(f, t, position, window)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), window=st.integers(1, 30))
def test_restart_re_runs_and_identical_records_everywhere_never_change_the_answer(seed, window):
    rnd = random.Random(seed)
    f, t = _pair(rnd, 60, late=0.3, same=0.15, restarts=0.3, lag=20)
    position = rnd.choice([r.offset for r in f.recs] + [f.end])
    _same_answer(f, t, position, window)


def _long(n: int, seed: int = 7) -> tuple[ListSide, ListSide]:
    rnd = random.Random(seed)
    b, a = _natives("b", n, rnd, 0.0, 0.0), _natives("a", n, rnd, 0.0, 0.0)
    return _side(b, _copies(a, rnd, 0.01), rnd, 4), _side(a, _copies(b, rnd, 0.01), rnd, 4)


def test_a_group_near_the_end_reads_a_window_not_the_partition():
    f, t = _long(3000)
    position = f.recs[-50].offset
    got, read = translate_windowed(f, position, t, frm_alias="b", to_alias="a", window=64)
    oracle = translate_position(f.recs, position, t.recs, t.end, frm_alias="b", to_alias="a")
    assert got.proven and (got.offset, got.redelivered) == (oracle.offset, oracle.redelivered)
    assert read["source"] < 300 and read["target"] < 300, read  # of 6000+ records per side
    assert got.window is not None and got.window["source_start"] > 5000


def test_a_partition_longer_than_the_bound_translates_when_its_window_is_small():
    f, t = _long(3000)
    got, _read = translate_windowed(f, f.recs[-10].offset, t, frm_alias="b", to_alias="a", window=64, max_records=1000)
    assert got.proven and len(f.recs) > 1000


def test_a_window_over_the_bound_is_refused_before_it_is_read():
    f, t = _long(3000)
    with pytest.raises(WindowTooLarge, match=r"^the source side's window spans 2,010 offsets, more than the 1,000 "):
        translate_windowed(f, f.end - 10, t, frm_alias="b", to_alias="a", window=2000, max_records=1000)
    assert f.reads == [] and t.reads == []


def test_without_timestamps_log_append_time_both_partitions_are_read_whole():
    f, t = _long(200)
    t.timestamps = False
    got, read = translate_windowed(f, f.recs[-5].offset, t, frm_alias="b", to_alias="a", window=8)
    oracle = translate_position(f.recs, f.recs[-5].offset, t.recs, t.end, frm_alias="b", to_alias="a")
    assert read == {"source": len(f.recs), "target": len(t.recs)}
    assert got.consumed == oracle.consumed and got.covered == oracle.covered and got.offset == oracle.offset


def test_a_late_copy_identical_to_a_record_before_the_window_is_not_guessed():
    # origin a: X (ts 50) before the window, the anchor N (ts 100), then Y identical to X (late). On F the copy of Y
    # is the last copy of a: the next native (Y) or a re-run from X alike; the whole logs refuse, so must the windows
    x, n = OriginRec(0, "a", 7, 50), OriginRec(1, "a", 8, 100)
    bs = [OriginRec(3 + i, "b", 20 + i, 100 + i) for i in range(5)]
    f = ListSide([x, n._replace(offset=1), x._replace(offset=2), *bs], 8)
    t = ListSide([x, n, x._replace(offset=2), *(r._replace(offset=r.offset) for r in bs)], 8)
    assert not translate_position(f.recs, 8, t.recs, t.end, frm_alias="b", to_alias="a").proven
    got, read = translate_windowed(f, 8, t, frm_alias="b", to_alias="a", window=5)
    assert not got.proven and "cannot be placed by identity" in got.reason
    assert f.reads[0] == (3, 8) and read == {"source": 8, "target": 8}  # it grew from [3, 8) to the start
