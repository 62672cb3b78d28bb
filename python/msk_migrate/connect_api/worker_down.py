"""Why a Connect worker that does not answer is down: a typed cause from the evidence it left behind.

A worker that ran short of memory used to be reported as "unreachable" and nothing more (issue 44: a
3,000-partition flow on the harness's -Xmx512m worker). The JVM of the image and of the local harness runs
with ``-XX:+ExitOnOutOfMemoryError`` (images/kafka-connect/entrypoint.sh): on its first OutOfMemoryError it
prints ``Terminating due to java.lang.OutOfMemoryError: <pool>`` and exits with code 3 rather than limp on.
What it leaves is read elsewhere and passed in: :func:`classify_local` takes a local worker's process state
and the tail of its log (gathered by :mod:`msk_migrate.local.worker_evidence`), :func:`classify_ecs` the
Connect service's stopped tasks as DescribeTasks returns them and the tail of the newest one's log (gathered
by :mod:`msk_migrate.aws.connect_tasks`). Both are pure: no clock, no file, no call (a log4j time, which has no
zone, is read in this machine's: where a local worker wrote it; a task's time is ECS's ``stoppedAt``).

The rules, most specific first (the first that matches decides):

1. the log of the worker's current run (after the entrypoint's last start line: a restarted local worker
   appends to the same file) names ``java.lang.OutOfMemoryError: <pool>``; the pool names the cause:
   ``Java heap space``, ``GC overhead limit exceeded``, ``Requested array size exceeds VM limit`` → heap;
   ``Metaspace``, ``Compressed class space`` → metaspace; ``unable to create (new) native thread`` →
   native threads; ``Direct buffer memory`` (Java 17: ``Cannot reserve N bytes of direct buffer memory``) →
   direct memory; any other pool → out of memory;
2. ECS: the container exited with code 3 (ExitOnOutOfMemoryError) and its log is not readable → out of
   memory, pool unknown;
3. ECS: the container's ``reason`` names ``OutOfMemoryError`` ("OutOfMemoryError: Container killed due to
   memory usage": the task's memory limit, exit 137) → container memory;
4. ECS: the task's ``stoppedReason`` names failed health checks → health check (a worker that limps);
5. ECS: the task failed to start (``stopCode`` TaskFailedToStart, or a ``...Error`` container reason such
   as CannotPullContainerError) → failed to start; exit 137 → killed; another exit code → exited;
6. local: the process is gone and its log names no OutOfMemoryError → exited (with its log's last ERROR line).

No cause (None): the process still runs without an OutOfMemoryError in its log, ECS stopped its tasks on
purpose (a deployment, a scale-in, a person), or there is nothing to read. A local process that still runs
after an OutOfMemoryError (a JVM without the flag) is reported as out of memory, not as dead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class Cause(StrEnum):
    """Why the worker is down (the JSON's ``worker_down.cause``)."""

    HEAP = "heap"
    METASPACE = "metaspace"
    NATIVE_THREAD = "native-thread"
    DIRECT_MEMORY = "direct-memory"
    OUT_OF_MEMORY = "out-of-memory"  #: an OutOfMemoryError whose pool is not known (exit code 3 alone, another pool)
    CONTAINER_MEMORY = "container-memory"  #: ECS killed the container at the task's memory limit
    HEALTH_CHECK = "health-check"
    FAILED_TO_START = "failed-to-start"
    KILLED = "killed"
    EXITED = "exited"


#: The causes that are an OutOfMemoryError of the JVM or of its container.
MEMORY_CAUSES = frozenset({Cause.HEAP, Cause.METASPACE, Cause.NATIVE_THREAD, Cause.DIRECT_MEMORY,
                           Cause.OUT_OF_MEMORY, Cause.CONTAINER_MEMORY})

#: The entrypoint's line at every start of a worker (images/kafka-connect/entrypoint.sh).
START_MARKER = "entrypoint: Kafka Connect worker for target cluster"
#: The JVM's exit code under -XX:+ExitOnOutOfMemoryError.
OOM_EXIT_CODE = 3

_OOM = re.compile(r"java\.lang\.OutOfMemoryError(?::\s*(?P<pool>[^\n\r]*))?")
#: log4j's ``[%d]`` (the entrypoint's ConversionPattern): local time of the worker's machine.
_LOG_TIME = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(\d{3})\]")
#: OutOfMemoryError pool (in the JVM's message, lower case) -> (cause, the pool as printed). Java 17 says of direct
#: memory "Cannot reserve N bytes of direct buffer memory (allocated: …, limit: …)", Java 8 "Direct buffer memory".
_POOLS: tuple[tuple[str, Cause, str], ...] = (
    ("java heap space", Cause.HEAP, "Java heap space"),
    ("gc overhead limit exceeded", Cause.HEAP, "GC overhead limit exceeded"),
    ("requested array size exceeds vm limit", Cause.HEAP, "Requested array size exceeds VM limit"),
    ("metaspace", Cause.METASPACE, "Metaspace"),
    ("compressed class space", Cause.METASPACE, "Compressed class space"),
    ("unable to create native thread", Cause.NATIVE_THREAD, "unable to create native thread"),
    ("unable to create new native thread", Cause.NATIVE_THREAD, "unable to create new native thread"),
    ("direct buffer memory", Cause.DIRECT_MEMORY, "Direct buffer memory"),
)


# ---- evidence (gathered by the callers) ------------------------------------------------------------------
@dataclass(frozen=True)
class LocalEvidence:
    """What is left of a worker the local harness started (its record in the harness's state file)."""

    name: str  #: the process's name in the state (``connect``, ``connect-2``, ``connect-flow-<m>``)
    pid: int
    alive: bool  #: the recorded process (pid and kernel start time) still runs
    log: str  #: its log file
    log_tail: tuple[str, ...]  #: the last lines of the log
    log_written: datetime | None = None  #: the log's last modification (the JVM's last words, when it is dead)
    heap: str | None = None  #: the -Xmx it was started with (its WorkerSpec's ``heap``)


@dataclass(frozen=True)
class EcsEvidence:
    """What ECS keeps of the Connect service's stopped tasks (about an hour after they stop)."""

    cluster: str
    service: str
    container: str  #: the worker's container in the task (``kafka-connect``)
    stopped_tasks: tuple[Mapping[str, Any], ...]  #: DescribeTasks ``tasks`` entries, as returned
    log_tail: tuple[str, ...] = ()  #: the last lines of one stopped task's container log (awslogs), if readable
    log: str | None = None  #: where those lines are (``<group> <stream>``)
    log_task: str | None = None  #: the ARN of the task whose log that is (the newest stopped one)
    heap: str | None = None  #: the environment's ``worker.heap``
    task_memory_mib: int | None = None  #: the environment's ``connect.memory``


# ---- the answer ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkerDown:
    """The cause of a worker's silence, with the evidence that shows it and what to do."""

    cause: Cause
    error: str  #: what killed it, as printed: ``OutOfMemoryError (Java heap space)``, ``exit code 137 (SIGKILL)``
    at: datetime | None  #: when (UTC), if the evidence says
    died: bool  #: False: the process still runs but does not answer (an OutOfMemoryError without the exit flag)
    where: str  #: ``process 1234 (connect)`` / ``ECS task 0a1b… of msk-migrate-dev-kafka-connect``
    evidence: str  #: the log line or ECS's words that show it
    fix: str
    exit_code: int | None = None
    log: str | None = None  #: where the worker's log is

    def headline(self) -> str:
        """``worker died: OutOfMemoryError (Java heap space) at 2026-11-28 03:33:27 UTC``."""
        when = f" at {self.at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC" if self.at else ""
        return f"worker died: {self.error}{when}" if self.died else f"worker out of memory: {self.error}{when}, still running"

    def line(self, url: str) -> str:
        """The one error line: the headline, the worker that does not answer, the evidence, the fix."""
        return (f"{self.headline()}; the Connect worker at {url} is unreachable ({self.where}: {self.evidence}) "
                f"(fix: {self.fix})")

    def to_dict(self, url: str | None = None) -> dict[str, Any]:
        """``worker_down`` of the command's JSON document."""
        return {"worker": url, "cause": self.cause.value, "error": self.error, "died": self.died,
                "at": self.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if self.at else None,
                "where": self.where, "evidence": self.evidence, "exit_code": self.exit_code, "log": self.log,
                "fix": self.fix}


# ---- the log ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OomLine:
    """An OutOfMemoryError the worker's log names."""

    cause: Cause
    pool: str
    line: str
    at: datetime | None  #: the line's own log4j time (local time of the worker's machine), if it has one
    logged: datetime | None = None  #: else the time of the log line before it (the event whose trace it is in)


def current_run(lines: Sequence[str]) -> list[str]:
    """The lines after the entrypoint's last start line (all of them when it is not in the tail)."""
    starts = [i for i, ln in enumerate(lines) if START_MARKER in ln]
    return list(lines[starts[-1] + 1:] if starts else lines)


def _pool(text: str | None) -> tuple[Cause, str]:
    low = (text or "").strip().lower()
    for words, cause, printed in _POOLS:
        if words in low:
            return cause, printed
    return Cause.OUT_OF_MEMORY, (text or "").strip()[:80] or "pool not named"


def _log_time(line: str) -> datetime | None:
    m = _LOG_TIME.match(line)
    if not m:
        return None
    local = datetime.strptime(f"{m.group(1)}.{m.group(2)}", "%Y-%m-%d %H:%M:%S.%f")
    return local.astimezone(UTC)  # naive = the local time of this machine, where the worker wrote it


def oom_in_log(lines: Sequence[str]) -> OomLine | None:
    """The last OutOfMemoryError of the worker's current run, or None. ``-XX:+ExitOnOutOfMemoryError``'s
    ``Terminating due to java.lang.OutOfMemoryError: Java heap space`` is the JVM's last line; without the flag a
    thread's OutOfMemoryError is logged (``Caused by: java.lang.OutOfMemoryError: ...`` in a trace)."""
    run = current_run(lines)
    for i in range(len(run) - 1, -1, -1):
        m = _OOM.search(run[i])
        if m:
            cause, pool = _pool(m.group("pool"))
            before = next((t for ln in reversed(run[:i]) if (t := _log_time(ln)) is not None), None)
            return OomLine(cause, pool, run[i].strip()[:300], _log_time(run[i]), before)
    return None


_ERROR_LINE = re.compile(r"^\[[^\]]+\] (ERROR|FATAL) ")


def last_words(lines: Sequence[str]) -> str:
    """What the current run said last of an error: its last ERROR line with the last ``Caused by:`` after it, else
    its last line."""
    run = [ln.strip() for ln in current_run(lines) if ln.strip()]
    errors = [i for i, ln in enumerate(run) if _ERROR_LINE.match(ln)]
    if not errors:
        return run[-1][:300] if run else "its log is empty"
    caused = [ln for ln in run[errors[-1]:] if ln.startswith("Caused by:")]
    return run[errors[-1]][:200] + (f" | {caused[-1][:200]}" if caused else "")


# ---- fixes -----------------------------------------------------------------------------------------------
_SIZING = "docs/sizing.md gives the heap per partition"


def _heap_fix(local: bool, heap: str | None) -> str:
    ran = f"it ran with -Xmx{heap}; " if heap else ""
    if local:  # plan_workers keeps a recorded worker's spec: the variable reaches workers planned anew
        return (f"raise the worker heap ({ran}{_SIZING}): `msk-migrate local down --wipe`, then "
                "`MSK_MIGRATE_LOCAL_WORKER_HEAP=2g msk-migrate local up` (a recorded worker keeps its heap)")
    return (f"raise worker.heap with connect.memory in the environment file ({ran}heap <= 75 % of the task's memory; "
            f"{_SIZING}) and deploy, or spread the partitions over more workers (connect.desired_count)")


def _fix(cause: Cause, local: bool, heap: str | None = None, task_memory: int | None = None, log: str | None = None) -> str:
    read = f"read its log ({log})" if log else "read the worker's log"
    if cause is Cause.HEAP:
        return _heap_fix(local, heap)
    if cause is Cause.METASPACE:
        return ("a metaspace that fills is a class loader leak (connectors restarted over and over) or a "
                "-XX:MaxMetaspaceSize in CONNECT_JVM_EXTRA_OPTS: raise or drop that limit and start the worker again")
    if cause is Cause.NATIVE_THREAD:
        more = "more local workers" if local else "more workers (connect.desired_count), or raise connect.memory"
        return f"the JVM could not start a thread (process limit, or no memory left beside the heap): spread the tasks over {more}"
    if cause is Cause.DIRECT_MEMORY:
        return ("raise -XX:MaxDirectMemorySize in CONNECT_JVM_EXTRA_OPTS" + ("" if local else ", and connect.memory beside it")
                + ", or lower the fetch and batch sizes")
    if cause is Cause.OUT_OF_MEMORY:
        return f"{read} for the pool; for 'Java heap space': {_heap_fix(local, heap)}"
    if cause is Cause.CONTAINER_MEMORY:
        limit = f" ({task_memory} MiB)" if task_memory else ""
        return (f"the heap plus the JVM's own memory (about 600 MiB beside a 2 GiB heap, docs/sizing.md) did not fit the "
                f"task's memory{limit}: raise connect.memory, or lower worker.heap, and deploy")
    if cause is Cause.HEALTH_CHECK:
        return (f"ECS replaced a worker that stopped answering its health check; a worker short of heap spends its time in GC "
                f"(alert KafkaConnectWorkerHeapHigh, docs/runbooks/alerts.md): {read}")
    if cause is Cause.FAILED_TO_START:
        return "fix what ECS names (image, secret, network); the service starts a new task by itself"
    if local:
        return f"{read}; `msk-migrate local up` starts it again"
    return f"{read}; the service starts a new task by itself"


# ---- local -----------------------------------------------------------------------------------------------
def classify_local(ev: LocalEvidence) -> WorkerDown | None:
    """The cause of a local worker's silence (rules 1 and 6 of the module), or None."""
    oom = oom_in_log(ev.log_tail)
    where = f"process {ev.pid} ({ev.name}) " + ("still runs" if ev.alive else "is gone")
    if oom is not None:
        at = oom.at or (ev.log_written if not ev.alive else oom.logged)  # a dead JVM's last line: its log's last write
        return WorkerDown(oom.cause, f"OutOfMemoryError ({oom.pool})", at, not ev.alive, where,
                          f"its log {ev.log}: {oom.line!r}", _fix(oom.cause, True, ev.heap, log=ev.log), log=ev.log)
    if ev.alive:
        return None
    return WorkerDown(Cause.EXITED, "its process exited (no OutOfMemoryError in its log)", ev.log_written, True, where,
                      f"its log {ev.log} ends: {last_words(ev.log_tail)!r}", _fix(Cause.EXITED, True, log=ev.log), log=ev.log)


# ---- ECS -------------------------------------------------------------------------------------------------
def stopped_at(task: Mapping[str, Any]) -> datetime | None:
    """When a DescribeTasks entry stopped (UTC), if it says."""
    for key in ("stoppedAt", "executionStoppedAt", "stoppingAt"):
        v = task.get(key)
        if isinstance(v, datetime):
            return v if v.tzinfo else v.replace(tzinfo=UTC)
        if isinstance(v, int | float):
            return datetime.fromtimestamp(v, UTC)
    return None


def _container(task: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    containers = list(task.get("containers") or [])
    for c in containers:
        if c.get("name") == name:
            return c
    return next((c for c in containers if c.get("exitCode") is not None or c.get("reason")), {})


#: ``stopCode``s of tasks ECS or a person stopped on purpose (unless their words say otherwise).
_ON_PURPOSE = ("UserInitiated", "ServiceSchedulerInitiated", "SpotInterruption", "TerminationNotice")


def _death(task: Mapping[str, Any], ev: EcsEvidence) -> WorkerDown | None:
    """The cause of one stopped task, or None when it was stopped on purpose."""
    own_log = ev.log_task is not None and task.get("taskArn") == ev.log_task
    c = _container(task, ev.container)
    code, reason = c.get("exitCode"), str(c.get("reason") or "")
    stopped, stop_code = str(task.get("stoppedReason") or ""), str(task.get("stopCode") or "")
    task_id = str(task.get("taskArn", "?")).rsplit("/", 1)[-1]
    where = f"ECS task {task_id} of service {ev.service}"
    said = "; ".join(p for p in (f"stoppedReason {stopped!r}" if stopped else "", f"container reason {reason!r}" if reason else "",
                                 f"exit code {code}" if code is not None else "") if p) or "no reason given"
    at, log = stopped_at(task), ev.log if own_log else None
    ends = f"; its log ends: {last_words(ev.log_tail)!r}" if own_log and ev.log_tail else ""

    def down(cause: Cause, error: str, evidence: str = said + ends) -> WorkerDown:
        return WorkerDown(cause, error, at, True, where, evidence, _fix(cause, False, ev.heap, ev.task_memory_mib, log), code, log)

    oom = oom_in_log(ev.log_tail) if own_log else None
    if oom is not None:
        return down(oom.cause, f"OutOfMemoryError ({oom.pool})", f"{said}; its log: {oom.line!r}")
    if code == OOM_EXIT_CODE:
        return down(Cause.OUT_OF_MEMORY, "OutOfMemoryError (the JVM exited with code 3: -XX:+ExitOnOutOfMemoryError)")
    if "outofmemory" in reason.lower().replace(" ", ""):
        return down(Cause.CONTAINER_MEMORY, "OutOfMemoryError (container killed at the task's memory limit)")
    if "health check" in stopped.lower():
        return down(Cause.HEALTH_CHECK, "failed health checks (stopped by ECS)")
    if stop_code == "TaskFailedToStart" or reason.endswith("Error") or "Error:" in reason:
        return down(Cause.FAILED_TO_START, f"the task failed to start ({(reason or stopped)[:160]})")
    if stop_code in _ON_PURPOSE:
        return None
    if code == 137:
        return down(Cause.KILLED, "exit code 137 (SIGKILL)")
    if code is not None and code != 0:
        return down(Cause.EXITED, f"exit code {code}")
    if stop_code == "EssentialContainerExited" and code is None:
        return down(Cause.EXITED, "its container exited")
    return None


def classify_ecs(ev: EcsEvidence) -> WorkerDown | None:
    """The cause of the newest stopped task of the Connect service that died (rules 1 to 5), or None when none
    did (none stopped, or only on purpose). The log in the evidence is that of :attr:`EcsEvidence.log_task`."""
    for task in sorted(ev.stopped_tasks, key=newest_first):
        found = _death(task, ev)
        if found is not None:
            return found
    return None


def newest_first(task: Mapping[str, Any]) -> float:
    """Sort key of DescribeTasks entries: the newest stopped first (those that do not say, last)."""
    at = stopped_at(task)
    return -at.timestamp() if at else float("inf")
