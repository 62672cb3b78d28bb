"""Re-delivery counted by record identity, for ``offsets verify`` and the cutover gate.

Offset arithmetic (``(target end - target committed) - (source end - source committed)``) counts
transaction markers, aborted records and a restart's duplicates as re-delivery (or hides a gap behind
them). Here each partition's exact placement ``P`` (:mod:`.plan`) is located first; then a group
committed at ``c`` on the target re-reads the records in ``[c, P)`` (counted as records a
read_committed consumer gets, not offsets) plus the earlier identities the proof finds after ``P``.
A committed offset above ``P`` skips the records in ``[P, c)``: returned negative (a gap).
"""

from __future__ import annotations

from collections.abc import Callable

from ..access.admin import TP, AdminSession
from .plan import translate_group
from .windows import Window, read_windows

#: Ranges longer than this are not read (the offset arithmetic is kept for them).
MAX_COUNT = 1_000_000


def identity_redelivery(src: AdminSession, tgt: AdminSession, group: str, committed: dict[TP, int],
                        target_committed: dict[TP, int], to_name: Callable[[str], str]) -> dict[TP, int]:
    """(source topic, partition) -> records the group re-reads on the target (negative: records skipped),
    for every partition whose placement is proven; others are left out."""
    have = {tp: c for tp, c in committed.items() if (to_name(tp[0]), tp[1]) in target_committed}
    if not have:
        return {}
    proofs = translate_group(src, tgt, group, to_name, lambda t: True, {}, committed=have)
    ranges: dict[TP, Window] = {}
    sign: dict[TP, int] = {}
    extra: dict[TP, int] = {}
    for pr in proofs:
        if not pr.proven or pr.target_offset is None:
            continue
        tt = (pr.to_topic, pr.partition)
        c = target_committed[tt]
        lo, hi = sorted((c, pr.target_offset))
        if hi - lo > MAX_COUNT:
            continue
        ranges[tt] = Window(lo, hi)
        sign[tt] = 1 if c <= pr.target_offset else -1
        extra[tt] = (pr.redelivery or 0) if c <= pr.target_offset else 0
    read_windows(tgt, ranges)
    back = {(pr.to_topic, pr.partition): (pr.topic, pr.partition) for pr in proofs}
    return {back[tt]: sign[tt] * len(w.recs) + extra[tt] for tt, w in ranges.items()}
