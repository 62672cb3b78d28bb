"""The step runner: the runbook's steps in order, one row each, stopping at the first that fails."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from ..local.harness import DEFAULT_DIR, LocalEnvironment
from ..local.shape import EnvironmentShape, default_shape
from ..outcome import quiet
from . import producer_steps, proof_steps, protobuf_demo, schema_steps, steps
from .context import RehearsalContext
from .demo import REHEARSAL_MIGRATION
from .result import RehearsalResult, Step, StepFailed

StepFn = Callable[[RehearsalContext], str]


def plan(validate: bool) -> list[tuple[str, StepFn]]:
    """The steps of a rehearsal (the validation steps only with ``validate``)."""
    out: list[tuple[str, StepFn]] = [
        ("environment up", steps.environment_up), ("produce demo data", steps.produce_demo_data),
        ("preflight", steps.preflight), ("apply connectors", steps.apply_connectors),
        *([("proof follower started", proof_steps.start_follower)] if validate else []),
        ("schemas copy", schema_steps.schemas_copy), ("schemas verify", schema_steps.schemas_verify),
        ("lag until in sync", steps.lag_until_in_sync), ("offsets translated", steps.offsets_translated),
    ]
    if validate:
        out.append(("validate", steps.validate))
    out += [("cutover check", steps.cutover_ready), ("late schema caught", schema_steps.late_schema_caught),
            ("move consumer groups", steps.move_consumer_groups),
            ("decode on target", schema_steps.decode_on_target),
            ("fence wave first", producer_steps.fence_wave), ("producer gate", producer_steps.gate_wave),
            *([("producer gate on the proof mark", proof_steps.producer_gate_on_mark)] if validate else []),
            ("move producers", steps.move_producers), ("confirm producers moved", producer_steps.confirm_moved),
            ("reverse replication", steps.reverse_replication),
            ("schemas copy to source", schema_steps.schemas_copy_to_source),
            ("roll a group back", steps.roll_a_group_back), ("decode on source", schema_steps.decode_on_source)]
    if validate:
        out.append(("validate in reverse", steps.validate_in_reverse))
    if validate:  # the follower ran from the connectors' apply; it stops before they go
        out.append(("proof follower stopped", proof_steps.stop_follower))
    out += [("cleanup", steps.cleanup), ("status", producer_steps.status)]
    return out


class StepContext(Protocol):
    """What :func:`run_step` needs of a rehearsal's context (the default one and the topology rehearsals')."""

    @property
    def say(self) -> Callable[[str], None]: ...
    @property
    def result(self) -> RehearsalResult: ...


C = TypeVar("C", bound=StepContext)


def run_step(ctx: C, name: str, fn: Callable[[C], str]) -> None:
    """One step: its row in the result; a failed step raises :class:`StepFailed` to stop the rehearsal."""
    t = time.time()
    ctx.say(name)
    try:
        result, ok = fn(ctx), True
    except StepFailed as exc:
        result, ok = str(exc), False
    except Exception as exc:
        result, ok = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", False
    ctx.result.steps.append(Step(name, ok, round(time.time() - t, 1), result))
    if not ok:
        raise StepFailed(f"{name}: {result}")


def rehearse(say: Callable[[str], None] = quiet, with_monitoring: bool = True,
             validate: bool = True, base_dir=DEFAULT_DIR, timeout: float = 300.0, worker: str = "local",
             shape: EnvironmentShape | None = None, through: str | None = None) -> RehearsalResult:
    """The whole runbook on local clusters. ``shape``: the clusters (:func:`msk_migrate.local.shape.make_shape`);
    None = the fast default pair, one 3.9 KRaft broker -> one 4.1 broker. ``worker="image"``: the Connect worker
    runs from the built kafka-connect image. On a secured source (SCRAM/TLS, ACLs) MirrorMaker 2 and the
    operator steps act as the MM2 user, which holds only its read-only ACLs until the rollback step grants the
    reverse flow's (what an operator does before `rollback apply`); the demo applications are the harness admin.
    ``through``: the name of the last step to walk (a test of one part, such as the image's worker, stops once that
    part is proven); None walks every step."""
    steps_to_walk = plan(validate)
    if through is not None:
        names = [name for name, _ in steps_to_walk]
        if through not in names:
            raise ValueError(f"rehearse(through={through!r}): no such step; the steps are {', '.join(names)}")
        steps_to_walk = steps_to_walk[:names.index(through) + 1]
    protobuf_demo.require()  # the Protobuf demo's extra, before anything starts
    t0 = time.time()
    # Always an explicit shape: the environment is brought to it, whatever a previous run left recorded.
    shape = shape or default_shape()
    env = LocalEnvironment(Path(base_dir), with_monitoring=with_monitoring, progress=say, shape=shape,
                           worker_from_image=worker == "image")
    rf = shape.target.replication_factor  # 3 on a 3-broker target (min.insync.replicas 2, like MSK)
    migration = REHEARSAL_MIGRATION.model_copy(update={"replication_factor": rf, "internal_replication_factor": rf})
    ctx = RehearsalContext(env=env, migration=migration, say=say, result=RehearsalResult(status={}), timeout=timeout,
                           validate=validate)
    try:
        for name, fn in steps_to_walk:
            run_step(ctx, name, fn)
    except StepFailed:
        pass
    finally:
        proof_steps.stop_quietly(ctx)  # a step failed (or Ctrl-C) while the follower ran
    res = ctx.result
    res.seconds = {s.name: s.seconds for s in res.steps}
    res.seconds["total"] = round(time.time() - t0, 1)
    return res
