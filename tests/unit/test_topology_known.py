"""The other migrations ``connectors apply`` knows of on a shared target, rebuilt from the MM2 connector configs a
worker holds (msk_migrate.topology.known): what the renderer wrote is read back, and the planner refuses a collision
with them as with a flow file (exit 2)."""

from __future__ import annotations

from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from msk_migrate.connectors.render import render_connectors
from msk_migrate.topology.known import flows_from_connectors, migration_of
from msk_migrate.topology.plan import ClusterRef, FlowRef, plan_topology

SRC, PEER, TGT = "dc1:9092", "dc2:9092", "msk:9098"


def _configs(name: str, bootstrap: str, alias: str, **migration) -> dict[str, dict[str, str]]:
    return render_connectors(ClusterEndpoint(alias=alias, bootstrap_servers=bootstrap),
                             ClusterEndpoint(alias="msk", bootstrap_servers=TGT), MigrationSpec(name=name, **migration))


def test_a_running_migration_is_read_back_as_the_renderer_wrote_it() -> None:
    cfgs = _configs("billing", PEER, "dc2", topics=[r"billing\..*", "shared.events"], groups=["billing-.*"],
                    topic_renames={"shared.events": "billing.shared.events"})
    (f,), unread = flows_from_connectors(cfgs, "http://w:8083")
    assert unread == [] and f.label == "migration billing (on http://w:8083)" and f.source_alias == "dc2"
    assert f.migration.topics == [r"billing\..*", "shared.events"] and f.migration.groups == ["billing-.*"]
    assert f.migration.topic_renames == {"shared.events": "billing.shared.events"} and f.migration.internal_namespace == "billing"
    assert f.target.same(ClusterRef.of(TGT)) and f.source.same(ClusterRef.of(PEER))


def test_the_flows_own_and_reverse_connectors_are_not_another_migration() -> None:
    cfgs = {**_configs("ops", SRC, "dc1"), "ops-reverse-source": {"connector.class": "x"}}
    assert flows_from_connectors(cfgs, "w", but="ops") == ([], [])
    assert migration_of("ops-reverse-source") is None and migration_of("ops-source") == ("ops", "source")


def test_a_flow_selecting_a_running_migrations_topic_is_refused_with_exit_2_naming_it() -> None:
    (other,), _ = flows_from_connectors(_configs("billing", PEER, "dc2", topics=["shared.events"], groups=["b"]), "w")
    me = FlowRef("ops.yaml", ClusterRef.of(SRC), ClusterRef.of(TGT), "dc1", "msk",
                 MigrationSpec(name="ops", topics=["shared.events"], groups=["o"]), WorkerSpec(group_id="ops-connect"))
    plan = plan_topology([me, other])
    (p,) = plan.problems
    assert plan.exit_code == 2 and p.field == "migration.topics" and "migration billing (on w)" in p.line
