"""What every runbook operation acts on: ONE :class:`MigrationSession`, opened once per command.

:func:`open_session` turns a resolved :class:`~msk_migrate.config.flow.Flow` into a session: it checks
what the flow alone can refuse (no target, no worker) before any connection, opens one admin session
per cluster, then proves each is the flow's cluster (:func:`verify_clusters`: the environment's
recorded target) and the worker this migration's (``connect_api.rest.check_worker``). Operations take
the session and nothing loose; what was found on the way (cluster ids, the worker's connectors) is on
the session (:attr:`MigrationSession.found`) and in every outcome's ``talked_to``.

Invariants: a session never reaches a cluster or worker other than its flow's; a refused identity is
bad input (exit 2) raised before any operation writes anything; the flow is not changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..access.admin import AdminSession
from ..config.flow import Flow, Found, talked_to
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..config.recorded import load_record, record_path
from ..connect_api.rest import ConnectClient, FlowIdentity, check_worker, client_for
from ..errors import UsageError


@dataclass(frozen=True)
class MigrationSession:
    """One migration as a command reaches it: the flow's migration and worker settings, an admin session
    per cluster (``source``/``target`` as the flow names them, with their MM2 aliases), and the Connect
    worker when the command reaches one. ``target_session`` is None only before deploy (preflight of the
    source side, offsets snapshot); :attr:`target` refuses that as bad input."""

    migration: MigrationSpec
    worker: WorkerSpec
    source: AdminSession
    target_session: AdminSession | None
    source_alias: str
    target_alias: str
    client: ConnectClient | None = None
    #: The endpoints the sessions were opened on (their auth mode and MSK broker type are preflight rows).
    source_endpoint: ClusterEndpoint | None = None
    target_endpoint: ClusterEndpoint | None = None
    #: The flow the session was opened from (None for the rehearsal and tests, which open endpoints directly).
    flow: Flow | None = None
    found: Found = field(default_factory=Found)

    @property
    def target(self) -> AdminSession:
        """The target's session; an operation that needs it before the target exists is bad input."""
        if self.target_session is None:
            raise UsageError("--target-bootstrap", "this command needs the target cluster, whose bootstrap servers "
                             "the environment YAML does not hold (the stack creates the cluster)",
                             "pass --target-bootstrap with the stack output target_bootstrap_brokers_connect")
        return self.target_session

    def connect(self) -> ConnectClient:
        """The worker; a command that needs one and was given none is bad input."""
        if self.client is None:
            raise UsageError("--connect-url", "this step needs the Connect worker and none was given",
                             "pass --connect-url https://HOST:8083 (stack output connect_rest_url) or --local")
        return self.client

    def endpoints(self) -> tuple[ClusterEndpoint, ClusterEndpoint]:
        """The two clusters as the connectors name them (rendering needs the endpoints, not the sessions)."""
        if self.source_endpoint is None or self.target_endpoint is None:
            raise UsageError("--target-bootstrap", "this command renders connectors and needs both clusters' endpoints",
                             "pass --target-bootstrap with the stack output target_bootstrap_brokers_connect")
        return self.source_endpoint, self.target_endpoint

    def talked_to(self) -> dict[str, Any]:
        """The clusters and worker the command reached, with what it verified on them (``talked_to``)."""
        f = self.flow
        return talked_to(f, self.found, source=self.source.bootstrap,
                         target=self.target_session.bootstrap if self.target_session else None,
                         worker=self.client.url if self.client else (f.connect_url if f else None))


def session_of(source: ClusterEndpoint, target: ClusterEndpoint | None, migration: MigrationSpec,
               worker: WorkerSpec | None = None, client: ConnectClient | None = None) -> MigrationSession:
    """A session on two endpoints the caller started itself (the rehearsal, tests): no identity to prove."""
    return MigrationSession(migration, worker or WorkerSpec(), AdminSession.for_endpoint("source", source),
                            AdminSession.for_endpoint("target", target) if target is not None else None,
                            source.alias, target.alias if target is not None else "target", client, source, target)


#: Whether an operation needs the target cluster / the Connect worker: always, when the flow names one, never.
Needs = Literal["yes", "if given", "no"]


def open_session(flow: Flow, *, target: Needs = "yes", worker: Needs = "no", creating: bool = False,
                 why: str = "this command") -> MigrationSession:
    """The session of ``flow``: refusals the flow alone decides first (no target, no worker), then the
    clusters (reachable, each the flow's: :func:`verify_clusters`), then the worker (this migration's, on
    the target's cluster: ``check_worker``; ``creating``: a shared worker may hold none of ours yet)."""
    target_ep = flow.require_target(why) if target == "yes" else flow.target if target == "if given" else None
    if worker == "yes":
        flow.require_connect()
    src = AdminSession.for_endpoint("source", flow.source)
    tgt = AdminSession.for_endpoint("target", target_ep) if target_ep is not None else None
    sid, tid = verify_clusters(flow, src, tgt)
    client, seen = None, None
    if worker == "yes" or (worker == "if given" and flow.connect_url):
        client = client_for(flow)
        seen = check_worker(client, FlowIdentity(flow.migration.name, flow.source.bootstrap_servers,
                                                 target_ep.bootstrap_servers if target_ep else None, tid), creating)
    return MigrationSession(flow.migration, flow.worker, src, tgt, flow.source.alias,
                            target_ep.alias if target_ep is not None else "target", client, flow.source, target_ep, flow,
                            Found(sid, tid, seen))


def verify_clusters(flow: Flow, source: AdminSession | None, target: AdminSession | None = None,
                    worker: dict[str, Any] | None = None) -> tuple[str | None, str | None]:
    """(source cluster id, target cluster id) of the sessions a command opened; refuses (exit 2) a target
    that is not the cluster ``flow``'s environment was first applied to (:mod:`msk_migrate.config.recorded`)
    or not the Kafka cluster of an already checked ``worker`` (``check_worker``'s result)."""
    sid = source.cluster_id() if source is not None else None
    if target is None:
        return sid, None
    tid = target.cluster_id()
    env = flow.env_name
    rec = load_record(env) if env else None
    if env and rec and rec.get("target_cluster_id") and rec["target_cluster_id"] != tid:
        raise UsageError("--target-bootstrap", f"target {target.bootstrap} is Kafka cluster {tid}; "
                         f"environment {env} was applied to cluster {rec['target_cluster_id']} "
                         f"({rec.get('target_bootstrap')}) on {rec.get('recorded_at')}",
                         f"pass {env}'s target (stack output target_bootstrap_brokers_connect), "
                         f"or another --env; the record is {record_path(env)}")
    if worker and worker.get("kafka_cluster_id") and worker["kafka_cluster_id"] != tid:
        raise UsageError("--connect-url", f"worker {worker['url']} keeps its state on Kafka cluster "
                         f"{worker['kafka_cluster_id']}, not on this flow's target {tid} ({target.bootstrap})",
                         "point --connect-url (or MSK_MIGRATE_CONNECT_URL) at this environment's worker")
    return sid, tid
