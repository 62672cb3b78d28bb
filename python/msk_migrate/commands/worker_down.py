"""``lag`` and ``connectors status`` when the Connect worker does not answer: say why, when what it left says.

A worker that died of an OutOfMemoryError used to be reported as "unreachable" and nothing more. When the
client finds the worker unreachable (:class:`~msk_migrate.connect_api.rest.WorkerUnreachable`: refused, timed
out, or the stack's load balancer had no worker to forward to), the evidence is looked up where the worker runs:

- a worker of the local environment (``--local``, or a ``--connect-url`` on this machine whose port is a
  recorded worker's; the environment is ``--local-dir``/MSK_MIGRATE_LOCAL_ENV_DIR, else .local/env): its
  process and the tail of its log (:mod:`msk_migrate.local.worker_evidence`);
- else, with ``--env``: the Connect service of that environment's stack, its newest stopped tasks and the
  newest one's log (:mod:`msk_migrate.aws.connect_tasks`, with the caller's AWS credentials; bounded waits).

:func:`msk_migrate.connect_api.worker_down.classify_local` / ``classify_ecs`` decide. With a cause, the command's
outcome is that error: the one line ``error: worker died: OutOfMemoryError (Java heap space) at … (fix: …)``,
exit 2 as for any unreachable worker, and under ``--output json`` the error's document of the one shape
(``verdict`` ``bad-input``, ``exit_code`` 2, ``error`` the line) with ``worker_down`` beside it. Without one
(nothing recorded, the process still runs, ECS not readable) the worker's own error stands, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cliutil import ERROR_VERDICTS
from ..connect_api.rest import WorkerUnreachable
from ..connect_api.worker_down import EcsEvidence, WorkerDown, classify_ecs, classify_local
from ..outcome import Outcome

#: AWS calls of the look-up: short waits, one retry (the command is already failing; this only explains why).
_AWS_TIMEOUTS = {"connect_timeout": 5, "read_timeout": 10, "retries": {"max_attempts": 2, "mode": "standard"}}


@dataclass(frozen=True)
class WorkerPlace:
    """Where a command's worker runs, from its flow options (read before the flow consumes them)."""

    env: str | None  #: ``--env`` NAME or path: the stack whose Connect service it is
    local_dir: Path | None  #: ``--local-dir`` (MSK_MIGRATE_LOCAL_ENV_DIR)

    @classmethod
    def of(cls, kw: dict[str, Any]) -> WorkerPlace:
        return cls(kw.get("env"), kw.get("local_dir"))


def _ecs_cause(env: str) -> WorkerDown | None:
    import boto3
    from botocore.config import Config

    from ..aws.connect_tasks import CONNECT_CONTAINER, connect_service_names, stopped_connect_tasks
    from ..config.environment import load_environment
    from ..config.environment_files import environment_path

    cfg = load_environment(environment_path(env))
    cluster, service = connect_service_names(cfg.resource_prefix)
    config = Config(**_AWS_TIMEOUTS)
    ecs, logs = (boto3.client(name, region_name=cfg.region, config=config) for name in ("ecs", "logs"))
    read = stopped_connect_tasks(ecs, logs, cluster, service)
    return classify_ecs(EcsEvidence(cluster, service, CONNECT_CONTAINER, tuple(read.tasks), tuple(read.log_tail), read.log,
                                    read.log_task, cfg.worker.heap, cfg.connect.memory))


def why_down(place: WorkerPlace, url: str) -> WorkerDown | None:
    """The cause of the silence of the worker at ``url`` (see the module), or None."""
    from ..local.worker_evidence import local_worker_evidence
    from .flow import local_dir

    local = local_worker_evidence(local_dir(place.local_dir), url)
    if local is not None:
        return classify_local(local)
    return _ecs_cause(place.env) if place.env else None


def down_outcome(command: str, exc: WorkerUnreachable, down: WorkerDown) -> Outcome:
    """The error outcome of ``command``: what the error boundary prints for an unreachable worker, with the cause."""
    line = down.line(exc.url)
    return Outcome(command, ERROR_VERDICTS[exc.exit_code], exc.exit_code, error=line,
                   extra={"error": line, "worker_down": down.to_dict(exc.url)})


def _looked_up(place: WorkerPlace, url: str) -> WorkerDown | None:
    try:
        return why_down(place, url)
    except Exception:  # evidence that cannot be read explains nothing: the worker's own error stands
        return None


def explained(command: str, place: WorkerPlace, produce: Callable[[], Outcome]) -> Outcome:
    """``produce()``'s outcome; when it finds the worker unreachable and the evidence names why, the outcome of
    that error (:func:`down_outcome`); otherwise the error goes on to the boundary as it was."""
    try:
        return produce()
    except WorkerUnreachable as exc:
        down = _looked_up(place, exc.url)
        if down is None:
            raise
        return down_outcome(command, exc, down)
