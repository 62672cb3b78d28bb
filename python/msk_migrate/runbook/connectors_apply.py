"""``connectors apply`` as one operation: a short pipeline of named steps, each refusing before anything is
applied, then the apply and what it records (:func:`apply_flow`).

The steps, in order, each with its reason:

1. **identity** — a source topic recreated since replication started would be copied onto the old one's
   offsets (``identity_gate.guard_apply``); refused, nothing applied.
2. **replication factors** — the target must hold the flow's internal topics at their replication factor
   (``capacity.require_replication_factors``).
3. **target** — the environment's target is the cluster recorded on its first apply, and the worker is on it
   (``session.verify_clusters``); what was found is recorded in the flow (``Flow.found``).
4. **collisions** — another migration into the same target that this one would interleave with
   (``shared_target.refuse_collisions``); the other workers and clusters to ask are passed in by the caller.
5. **heap** — the worker's heap (or ECS task memory) against the memory model for the flow's partitions
   (``preflight_heap.require_heap``), unless forced.
6. **apply** — validate every config with the worker, create/update, wait for RUNNING (``connect_api.apply``).
7. **record** — the environment's first apply (its target's identity) and the topics whose replication starts
   now (``replicating``, in the ledger).

Steps 1 to 5 need a flow (configs applied without one skip them; 2 to 4 need its target too); every refusal is a UsageError (exit 2) with
nothing applied. The command (``commands/connectors.py``) builds the outcome from :class:`ApplyResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..access.admin import AdminSession
from ..config.flow import Flow
from ..connect_api.apply import ApplyResult as Applied
from ..connect_api.apply import apply, status_rows
from ..connect_api.rest import ConnectClient
from ..outcome import quiet


@dataclass(frozen=True)
class ApplyResult:
    """What ``connectors apply`` did: created/updated/unchanged connectors, their states after, the note of a
    forced heap (None when not forced) and what the flow was compared with on its target."""

    applied: Applied
    rows: list[dict[str, Any]]
    forced: str | None = None
    other_migrations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Neighbours:
    """Who else may be on the flow's target, to compare the flow with (step 4): other migrations' flows given
    on the command line, and the workers and clusters a local environment runs."""

    flows: list[Any] = field(default_factory=list)
    workers: list[ConnectClient] = field(default_factory=list)
    endpoints: list[Any] = field(default_factory=list)


def check_before_apply(flow: Flow, client: ConnectClient, neighbours: Neighbours, force: bool,
                       local_heap: str | None) -> tuple[Callable[[], str | None], list[str], str | None]:
    """Steps 1 to 5: every refusal before anything is applied. Returns what records the replicating topics after
    the apply, what the flow was compared with on its target, and the forced-heap note."""
    from .identity_gate import guard_apply

    record_identities = guard_apply(flow, client)
    if flow.migration is None:
        return record_identities, [], None
    from .preflight_heap import require_heap

    shared: list[str] = []
    if flow.target is not None:
        from .capacity import require_replication_factors
        from .session import verify_clusters
        from .shared_target import refuse_collisions

        require_replication_factors(flow.target, flow.migration, flow.worker)
        sid, tid = verify_clusters(flow, AdminSession.for_endpoint("source", flow.source),
                                   AdminSession.for_endpoint("target", flow.target), flow.found.worker)
        flow.found = flow.found.with_clusters(sid, tid)
        shared = refuse_collisions(flow, client, neighbours.flows, neighbours.workers, neighbours.endpoints)
    return record_identities, shared, require_heap(flow, force, local_heap=local_heap)


def apply_flow(flow: Flow, client: ConnectClient, configs: dict[str, dict[str, Any]], *, neighbours: Neighbours,
               wait: bool = True, timeout: float = 180.0, force: bool = False, local_heap: str | None = None,
               progress: Callable[[str], None] = quiet) -> ApplyResult:
    """The pipeline of the module docstring: checks (refusing before anything is applied), apply, record."""
    record_identities, shared, forced = check_before_apply(flow, client, neighbours, force, local_heap)
    applied = apply(client, configs, wait=wait, timeout=timeout, progress=progress)
    flow.record_first_apply()
    record_identities()
    return ApplyResult(applied, status_rows(client, list(configs)), forced, shared)
