"""Exact offset translation of stopped consumer groups: the reader (:mod:`.reader`) and the pure planner
(:mod:`.planner`) put together, plus the two things that touch a group — the check that it is stopped
and the one commit of its placements.

Per partition, in batches over every partition (docs/design.md, *Exact offset translation*):

1. the commit point ``C`` on the cluster the group leaves (``frm``); below the oldest retained record
   the group resumes at that record (:attr:`.evidence.PartitionRead.effective_commit`);
2. up to ``window`` records either side of it (read_committed);
3. a lower bound on the other cluster (``to``): ListOffsets by the oldest timestamp of those records (MM2
   keeps record timestamps; on a LogAppendTime topic the broker's clock, with a clock allowance), and
   MM2's checkpoint as the lowest offset the first record after ``C`` may be placed at;
4. windows of ``to`` read from the lower bound, growing until the alignment is decided, then past the
   matched run for a restart's replay of ``C``.

The decision per partition is a :class:`.planner.Placement` with its proof; its invariants are in
:mod:`.planner`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..access.admin import TP, AdminSession
from ..access.offsets import Checkpoint
from ..errors import UsageError
from .evidence import LIMITS, Limits
from .planner import PartitionPlan, plan_decided
from .reader import read_commit_points


def require_group_stopped(frm: AdminSession, to: AdminSession, group: str) -> None:
    """A group with members on either cluster would commit over the translation: refuse (exit 2)."""
    for session in (frm, to):
        members = session.group_members(group)
        if members:
            raise UsageError("--group", f"group {group!r} has {len(members)} active member(s) on the {session.role} "
                             f"cluster ({', '.join(members[:3])})", f"stop its consumers on the {session.role} first")


def group_commits(frm: AdminSession, group: str, keep: Callable[[str], bool]) -> dict[TP, int]:
    """``group``'s commits on ``frm`` for the topics ``keep`` selects; an unknown group, or one without a commit
    on them, is bad input naming ``--group`` (before anything is planned or written)."""
    committed = {tp: o for tp, o in frm.committed(group).items() if keep(tp[0])}
    if not committed:
        if group not in frm.groups():
            raise UsageError("--group", f"unknown consumer group {group!r} on the {frm.role} cluster",
                             "check the name with `kafka-consumer-groups --list` (names are case-sensitive)")
        raise UsageError("--group", f"group {group!r} has no committed offset for a topic of this migration on the "
                         f"{frm.role} cluster", "name a group that consumed the migrated topics")
    return committed


def place_commits(frm: AdminSession, to: AdminSession, committed: dict[TP, int], to_name: Callable[[str], str],
                  checkpoints: dict[TP, Checkpoint], current: dict[TP, int], *, force: bool = False,
                  limits: Limits = LIMITS, to_topics: Mapping[str, int] | None = None) -> list[PartitionPlan]:
    """Commit points on ``frm`` (one per partition, of one group or of many sharing them) placed on ``to``
    (nothing is written). ``current``: the commits on ``to`` the actions compare with; ``to_topics``: see
    :func:`.reader.read_commit_points`."""
    return plan_decided(read_commit_points(frm, to, committed, to_name, checkpoints, limits, to_topics), current, force=force)


def translate_group(frm: AdminSession, to: AdminSession, group: str, to_name: Callable[[str], str],
                    topic_ok: Callable[[str], bool], checkpoints: dict[TP, Checkpoint], *, force: bool = False,
                    committed: dict[TP, int] | None = None, limits: Limits = LIMITS) -> list[PartitionPlan]:
    """Every partition of ``group``'s commits on ``frm`` (``topic_ok`` ones) placed on ``to``; nothing is written.
    ``checkpoints``: MM2's newest checkpoints of this flow, keyed by (topic on ``to``, partition)."""
    if committed is None:
        committed = {tp: o for tp, o in frm.committed(group).items() if topic_ok(tp[0])}
    if not committed:
        return []
    return place_commits(frm, to, committed, to_name, checkpoints, to.committed(group), force=force, limits=limits)


def apply_plans(to: AdminSession, group: str, plans: list[PartitionPlan]) -> int:
    """Commit the planned offsets that move (write, or backwards with ``force``) on ``to`` in one request;
    returns how many partitions were written."""
    todo = {(p.to_topic, p.partition): p.target_offset for p in plans if p.action.writes and p.target_offset is not None}
    if todo:
        to.alter_committed(group, todo)
    return len(todo)
