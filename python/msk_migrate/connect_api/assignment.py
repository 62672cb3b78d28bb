"""Which task of a MirrorSourceConnector copies which source partition, and whether that task runs.

MirrorSourceConnector spreads the replicated partitions over its tasks and writes each task's share into the
task's configuration (``task.assigned.partitions``: ``topic-partition`` entries, comma-separated; Kafka's
MirrorSourceConfig). ``connectors status --wave W`` answers with it: every partition of the wave's topics is
held by a RUNNING task, or the row says which is not. A partition held by no task is not replicated (the
connector has not seen the topic yet: its topic refresh runs every ``refresh.topics.interval.seconds``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: The task configuration key MirrorSourceConnector lists a task's partitions under.
TASK_PARTITIONS = "task.assigned.partitions"


def parse_partitions(value: str) -> list[tuple[str, int]]:
    """``"a.b-0,a.b-1"`` -> ``[("a.b", 0), ("a.b", 1)]`` (a topic name may hold '-': the last one splits)."""
    out = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        topic, _, part = item.rpartition("-")
        if not topic or not part.isdigit():
            raise ValueError(f"{TASK_PARTITIONS} entry {item!r} is not topic-partition")
        out.append((topic, int(part)))
    return out


def assignment(task_configs: dict[int, dict[str, str]]) -> dict[tuple[str, int], int]:
    """(source topic, partition) -> the id of the task that copies it."""
    return {tp: task for task, cfg in sorted(task_configs.items()) for tp in parse_partitions(cfg.get(TASK_PARTITIONS, ""))}


@dataclass(frozen=True)
class TopicCopy:
    """One topic of a wave: its partitions, the tasks copying them and those tasks' states."""

    topic: str
    partitions: int
    tasks: list[int]
    states: list[str]  #: one per task of ``tasks``
    unassigned: list[int]  #: partitions no task copies

    @property
    def ok(self) -> bool:
        return not self.unassigned and all(s == "RUNNING" for s in self.states)

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def topic_copies(partitions: dict[str, int], held: dict[tuple[str, int], int], task_states: dict[int, str]) -> list[TopicCopy]:
    """Each topic of ``partitions`` (name -> count) with the tasks that copy it (``held``, :func:`assignment`)
    and their states (``task_states``: task id -> state; a task missing there is ``UNASSIGNED``)."""
    rows = []
    for topic, count in sorted(partitions.items()):
        tasks = sorted({held[(topic, p)] for p in range(count) if (topic, p) in held})
        rows.append(TopicCopy(topic, count, tasks, [task_states.get(t, "UNASSIGNED") for t in tasks],
                              [p for p in range(count) if (topic, p) not in held]))
    return rows
