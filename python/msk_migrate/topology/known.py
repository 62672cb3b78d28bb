"""The other migrations a command can know of on a shared target, read from what they left running.

API: :func:`flows_from_connectors` ``(configs, where, but) -> (flows, unread)`` rebuilds, from the MM2 source and
checkpoint connector configs a worker holds (``GET /connectors/NAME/config``, passed in), the planner's view
(:class:`~msk_migrate.topology.plan.FlowRef`) of each migration other than ``but``: its name, clusters and aliases,
topic and group selection, renames and MM2 internal topic names, exactly as :mod:`msk_migrate.connectors.render`
wrote them. Nothing here opens a connection.

Invariants: a migration is read from its ``<name>-source`` connector (its topics) and, when present, its
``<name>-checkpoint`` connector (its groups; none without one: such a flow checkpoints no group); reverse
connectors (``<name>-reverse-*``) write into the source, not the shared target, and are skipped. The worker
settings of a migration read this way are unknown: it is given a worker of its own (a Connect group named after
``where`` and the migration) so the planner never reports a shared Connect group for workers it cannot see;
a worker shared on purpose is the design (docs/design.md, "Which cluster an environment is"). A config the
models refuse is listed in ``unread`` (connector name and why), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from ..config.migration import MigrationSpec, WorkerSpec
from ..kafka import names
from .plan import ClusterRef, FlowRef

_ROLE_SUFFIXES = ("-source", "-checkpoint", "-heartbeat")


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def _renames(value: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in _split(value):
        old, _, new = pair.partition(":")
        if old and new:
            out[old] = new
    return out


def migration_of(connector: str) -> tuple[str, str] | None:
    """``(migration, role)`` of a forward MM2 connector name (``ops-source`` -> ``("ops", "source")``); None for a
    reverse connector or another name."""
    for suffix in _ROLE_SUFFIXES:
        if connector.endswith(suffix) and len(connector) > len(suffix):
            name = connector[: -len(suffix)]
            return (None if name.endswith("-reverse") else (name, suffix[1:]))
    return None


def flows_from_connectors(configs: Mapping[str, Mapping[str, str]], where: str,
                          but: str | None = None) -> tuple[list[FlowRef], list[str]]:
    """The migrations (other than ``but``) whose MM2 source connector is among ``configs`` (name -> config), as
    the planner sees them, labelled ``migration NAME (on WHERE)``; and the connectors that could not be read."""
    flows: list[FlowRef] = []
    unread: list[str] = []
    for cname, cfg in sorted(configs.items()):
        found = migration_of(cname)
        if found is None or found[1] != "source" or found[0] == but:
            continue
        if str(cfg.get("connector.class", "")) != names.SOURCE_CONNECTOR_CLASS:
            continue
        name = found[0]
        checkpoint = configs.get(f"{name}-checkpoint") or {}
        namespace = names.connector_namespace(dict(cfg))
        try:
            spec = MigrationSpec(name=name, topics=_split(cfg.get("topics")) or [".*"],
                                 topics_exclude=_split(cfg.get("topics.exclude")),
                                 groups=_split(checkpoint.get("groups")) if checkpoint else [],
                                 groups_exclude=_split(checkpoint.get("groups.exclude")),
                                 topic_renames=_renames(cfg.get("replication.policy.topic.renames")),
                                 internal_topic_names="per-migration" if namespace == name else "kafka-default")
            group = f"{name}-on-{where}"
            worker = WorkerSpec(group_id=group, config_storage_topic=f"{group}-configs",
                                offset_storage_topic=f"{group}-offsets", status_storage_topic=f"{group}-status")
        except (ValidationError, ValueError) as exc:
            unread.append(f"{cname} on {where}: {str(exc).splitlines()[0]}")
            continue
        flows.append(FlowRef(f"migration {name} (on {where})",
                             ClusterRef.of(cfg.get("source.cluster.bootstrap.servers")),
                             ClusterRef.of(cfg.get("target.cluster.bootstrap.servers")),
                             str(cfg.get("source.cluster.alias", "source")), str(cfg.get("target.cluster.alias", "target")),
                             spec, worker))
    return flows, unread
