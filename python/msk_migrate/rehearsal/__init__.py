"""The local migration rehearsal: the whole runbook, for real, in one command, one table row per step.

preflight -> apply -> lag until in sync -> validate -> cutover check -> move a consumer group (a consumer
on the target starts at the translated offset and sees every record after its source commit point) ->
move producers -> reverse replication -> roll a group back to the source (it sees every record the
producers wrote on the target) -> validate in reverse -> cleanup.

Every step calls the same functions as the operator commands (``msk-migrate preflight``, ``lag``,
``cutover check``, ``offsets sync``, ``rollback apply``, ``cleanup``) on the local clusters.

- :mod:`.demo`: the demo applications (topics, groups, records, the consumers that check a moved group);
- :mod:`.context`: what the steps share, typed;
- :mod:`.steps`: one function per step;
- :mod:`.run`: the step runner (:func:`rehearse`);
- :mod:`.result`: the rows and what the steps measured.
"""

from .demo import DEMO_GROUPS, DEMO_TOPICS, MOVED_GROUP, MOVED_PRODUCER_RECORDS, ROLLBACK_GROUP, ROLLBACK_TOPIC
from .result import RehearsalResult, Step, StepFailed
from .run import rehearse

__all__ = [
    "DEMO_GROUPS",
    "DEMO_TOPICS",
    "MOVED_GROUP",
    "MOVED_PRODUCER_RECORDS",
    "ROLLBACK_GROUP",
    "ROLLBACK_TOPIC",
    "RehearsalResult",
    "Step",
    "StepFailed",
    "rehearse",
]
