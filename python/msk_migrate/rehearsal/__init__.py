"""The local migration rehearsal: the whole runbook, for real, in one command, one table row per step.

preflight -> apply -> schemas copy/verify -> lag until in sync -> validate (schema ids proven on both
registries) -> cutover check (schemas in sync) -> a late schema caught -> move a consumer group (a consumer
on the target starts at the translated offset and sees every record after its source commit point) ->
decode on the target with the target registry -> move producers -> reverse replication -> schemas copy to
source -> roll a group back to the source (it sees every record the producers wrote on the target) ->
decode on the source with the source registry -> validate in reverse -> cleanup.

Every step calls the same functions as the operator commands (``msk-migrate preflight``, ``lag``,
``cutover check``, ``offsets sync``, ``rollback apply``, ``cleanup``, ``schemas copy|verify``) on the local
clusters and their schema registries (one Apicurio Registry per side).

- :mod:`.demo`: the demo applications (topics, groups, records, the consumers that check a moved group);
- :mod:`.context`: what the steps share, typed;
- :mod:`.schema_demo`: the schema'd demo applications (subjects on the source registry, serialized records,
  the consumers that decode them; :mod:`.protobuf_demo`: the Protobuf one, the only module importing protobuf
  and protoc, the ``rehearsal`` extra; :mod:`.returns_demo`: the topic whose keys are Avro too, values under
  RecordNameStrategy);
- :mod:`.steps`: one function per step (:mod:`.schema_steps`: the schema steps);
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
