"""The topology planner (msk_migrate.topology.plan) and `topology check --offline`: every rule, no server."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from msk_migrate.cliutil import json_shape_problems, run_cli
from msk_migrate.commands.root import cli
from msk_migrate.config.migration import MigrationSpec, WorkerSpec
from msk_migrate.topology.plan import ClusterRef, FlowRef, SourceInventory, literal_name, plan_topology

A, B, C, T, T2 = "a1:9092,a2:9092", "b1:9092", "c1:9092", "msk1:9098,msk2:9098", "msk-eu:9098"


def flow(label: str, source: str, target: str, *, alias: str | None = None, worker: dict | None = None, **migration) -> FlowRef:
    """A flow with its own migration name, Connect group and topics unless told otherwise."""
    migration.setdefault("name", f"mm2-{label}")
    w = {"group_id": f"connect-{label}", "config_storage_topic": f"{label}-configs", "offset_storage_topic": f"{label}-offsets",
         "status_storage_topic": f"{label}-status", **(worker or {})}
    return FlowRef(label, ClusterRef.of(source), ClusterRef.of(target), alias or f"src-{label}", "msk",
                   MigrationSpec(**migration), WorkerSpec(**w))


def inv(topics=(), groups=()) -> SourceInventory:
    return SourceInventory(frozenset(topics), frozenset(groups))


def kinds(plan) -> list[str]:
    return sorted(p.kind for p in plan.problems)


# ---- identity and relations ---------------------------------------------------------------------
def test_a_cluster_is_the_same_when_a_bootstrap_server_is_shared_whatever_the_case_or_order() -> None:
    assert ClusterRef.of("MSK2:9098, msk1:9098").same(ClusterRef.of("msk1:9098"))
    assert not ClusterRef.of("msk1:9098").same(ClusterRef.of("msk3:9098"))


def test_cluster_ids_win_over_bootstrap_strings_when_both_are_known() -> None:
    assert ClusterRef.of("nlb:9098", "id-1").same(ClusterRef.of("b-1.msk:9098", "id-1"))
    assert not ClusterRef.of("x:1", "id-1").same(ClusterRef.of("x:1", "id-2"))


def test_literal_names_are_told_from_regexes() -> None:
    assert literal_name(r"orders\.created") == "orders.created"
    assert literal_name("orders.created") == "orders.created"
    assert literal_name("orders.*") is None and literal_name(".*") is None and literal_name("a|b") is None


def test_two_sources_into_one_target_with_disjoint_exact_topics_are_a_clean_consolidation() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders"], groups=["billing"]),
                          flow("b", B, T, topics=["payments"], groups=["ledger"])])
    assert [r.kind for r in plan.relations] == ["consolidation"]
    assert plan.problems == [] and plan.undecided == [] and plan.exit_code == 0


def test_one_source_into_two_targets_is_a_fan_out_and_clean() -> None:
    plan = plan_topology([flow("eu", A, T), flow("us", A, T2)])
    assert [r.kind for r in plan.relations] == ["fan-out"]
    assert plan.exit_code == 0


def test_a_chain_is_forwarding() -> None:
    plan = plan_topology([flow("ab", A, B, topics=["orders"]), flow("bc", B, C, topics=["orders"])])
    assert [r.kind for r in plan.relations] == ["forwarding"]
    assert plan.relations[0].flows == ("ab", "bc") and plan.exit_code == 0


# ---- bad input: found in the configuration (exit 2) -----------------------------------------------
def test_a_target_equal_to_its_source_is_bad_input_naming_target_bootstrap_servers() -> None:
    plan = plan_topology([flow("a", A, "A2:9092,a1:9092"), flow("b", B, T)])
    (p,) = plan.problems
    assert p.kind == "fan-out to itself" and p.field == "target.bootstrap_servers" and p.stage == "config"
    assert plan.exit_code == 2 and p.line.startswith("target.bootstrap_servers: flow a's target")


def test_one_exact_topic_from_two_sources_into_one_target_names_both_sources_and_the_fix() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders", "x"]), flow("b", B, T, topics=["orders"])])
    (p,) = [p for p in plan.problems if p.kind == "topic collision"]
    assert p.subject == "orders" and p.stage == "config" and plan.exit_code == 2
    assert A.split(",")[0] in p.line and B in p.line and "(a)" in p.line and "(b)" in p.line
    assert "migration.topics_exclude" in p.fix and "migration.topic_renames" in p.fix


def test_renaming_one_side_resolves_the_topic_collision() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders"], groups=["g1"], topic_renames={"orders": "a.orders"}),
                          flow("b", B, T, topics=["orders"], groups=["g2"])])
    assert plan.exit_code == 0, [p.line for p in plan.problems]


def test_renames_of_two_flows_onto_one_target_name_are_refused() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders"], topic_renames={"orders": "all.orders"}),
                          flow("b", B, T, topics=["orders-b"], topic_renames={"orders-b": "all.orders"})])
    (p,) = plan.problems
    assert p.kind == "rename collision" and p.subject == "all.orders" and p.field == "migration.topic_renames"
    assert "orders of a and orders-b of b" in p.detail and plan.exit_code == 2


def test_a_rename_onto_a_topic_the_same_flow_copies_is_refused() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders", "legacy"], topic_renames={"legacy": "orders"}), flow("b", B, T2)])
    (p,) = plan.problems
    assert p.kind == "rename onto a copied topic" and p.subject == "orders" and plan.exit_code == 2


def test_one_exact_group_checkpointed_from_two_sources_names_both_and_groups_exclude() -> None:
    plan = plan_topology([flow("a", A, T, topics=["o1"], groups=["billing"]), flow("b", B, T, topics=["o2"], groups=["billing"])])
    (p,) = plan.problems
    assert p.kind == "group collision" and p.subject == "billing" and "groups_exclude" in p.fix and plan.exit_code == 2


@pytest.mark.parametrize(("field", "a_kw", "b_kw", "kind"), [
    ("migration.name", {"name": "mm2"}, {"name": "mm2"}, "shared connector names"),
    ("worker.group_id", {"worker": {"group_id": "mm2-connect"}}, {"worker": {"group_id": "mm2-connect"}}, "shared Connect group"),
    ("worker.status_storage_topic", {"worker": {"status_storage_topic": "st"}}, {"worker": {"status_storage_topic": "st"}}, "shared Connect topic"),
    ("worker.offset_storage_topic", {"worker": {"config_storage_topic": "st"}}, {"worker": {"offset_storage_topic": "st"}}, "shared Connect topic"),
    ("migration.internal_topic_names", {"internal_topic_names": "kafka-default", "alias": "src"},
     {"internal_topic_names": "kafka-default", "alias": "src"}, "shared MM2 topic"),
    ("source.alias", {"alias": "src"}, {"alias": "src"}, "shared MM2 topic"),
])
def test_two_flows_into_one_target_sharing_a_connect_or_mm2_resource_are_refused(field, a_kw, b_kw, kind) -> None:
    plan = plan_topology([flow("a", A, T, topics=["o1"], groups=["g1"], **a_kw), flow("b", B, T, topics=["o2"], groups=["g2"], **b_kw)])
    assert kind in kinds(plan) and field in {p.field for p in plan.problems}
    assert all(p.stage == "config" for p in plan.problems) and plan.exit_code == 2


def test_the_same_shared_names_are_fine_for_flows_into_different_targets() -> None:
    plan = plan_topology([flow("a", A, T, name="mm2", alias="src", worker={"group_id": "g"}),
                          flow("b", B, T2, name="mm2", alias="src", worker={"group_id": "g"})])
    assert plan.problems == [] and plan.relations == []


def test_a_topic_flowing_both_ways_without_marks_is_a_loop_naming_both_flows_and_mark_copies() -> None:
    plan = plan_topology([flow("ab", A, B, topics=["orders"]), flow("ba", B, A, topics=["orders"])])
    (p,) = plan.problems
    assert p.kind == "loop" and p.field == "migration.mark_copies" and p.subject == "orders" and p.stage == "config"
    assert "ab" in p.detail and "ba" in p.detail and "docs/active-active.md" in p.fix and plan.exit_code == 2
    assert [r.kind for r in plan.relations] == ["active/active"]


def test_a_regex_flow_back_over_an_exact_topic_is_a_loop_offline() -> None:
    """The forward flow creates `orders` on B, and the reverse flow's `.*` selects it there: decided offline."""
    plan = plan_topology([flow("ab", A, B, topics=["orders"]), flow("ba", B, A)])
    assert kinds(plan) == ["loop"] and plan.exit_code == 2


def _aliased(f: FlowRef, source_alias: str, target_alias: str) -> FlowRef:
    return replace(f, source_alias=source_alias, target_alias=target_alias)


def test_a_topic_both_ways_where_both_flows_mark_their_copies_is_accepted() -> None:
    a = _aliased(flow("ab", A, B, topics=["orders"], mark_copies=True), "dc-a", "dc-b")
    b = _aliased(flow("ba", B, A, topics=["orders"], mark_copies=True), "dc-b", "dc-a")
    plan = plan_topology([a, b])
    assert plan.problems == [] and "loop-free" in plan.relations[0].detail and plan.exit_code == 0


def test_one_flow_marking_its_copies_is_not_enough() -> None:
    a = _aliased(flow("ab", A, B, topics=["orders"], mark_copies=True), "dc-a", "dc-b")
    b = _aliased(flow("ba", B, A, topics=["orders"]), "dc-b", "dc-a")
    (p,) = plan_topology([a, b]).problems
    assert p.kind == "loop" and "ba does not mark its copies" in p.detail


def test_marked_flows_that_call_one_cluster_by_two_aliases_still_loop() -> None:
    """A marked flow S -> T skips what is marked as copied from T's alias: the aliases must agree across flows."""
    a = _aliased(flow("ab", A, B, topics=["orders"], mark_copies=True), "dc-a", "msk")
    b = _aliased(flow("ba", B, A, topics=["orders"], mark_copies=True), "dc-b", "dc-a")
    (p,) = plan_topology([a, b]).problems
    assert p.kind == "loop" and p.field == "source.alias" and p.stage == "config"


def test_opposite_flows_over_disjoint_exact_topics_are_a_reverse_pair_not_a_loop() -> None:
    plan = plan_topology([flow("ab", A, B, topics=["orders"]), flow("ba", B, A, topics=["payments"])])
    assert [r.kind for r in plan.relations] == ["reverse pair"] and plan.exit_code == 0


# ---- on the clusters' actual topics and groups (refused: exit 2), and what offline cannot decide (exit 1)
def test_regex_selections_offline_are_undecided_never_clean() -> None:
    plan = plan_topology([flow("a", A, T, topics=["orders.*"]), flow("b", B, T, topics=["pay.*"])])
    assert plan.problems == [] and plan.undecided and plan.exit_code == 1


def test_a_topic_both_sources_hold_under_regex_selections_is_a_collision_on_the_clusters() -> None:
    a, b = flow("a", A, T, topics=["orders.*"], groups=["b.*"]), flow("b", B, T, topics=["orders.*"], groups=["b.*"])
    plan = plan_topology([a, b], {"a": inv(["orders.eu", "orders.a"], ["billing"]), "b": inv(["orders.eu", "orders.b"], ["bi"])})
    (p,) = plan.problems
    assert p.kind == "topic collision" and p.subject == "orders.eu" and p.stage == "cluster" and plan.exit_code == 2
    assert plan.undecided == [] and p.line.startswith("migration.topics: ") and "(a)" in p.line and "(b)" in p.line


def test_a_group_both_sources_hold_is_a_collision_on_the_clusters_unless_excluded() -> None:
    a, b = flow("a", A, T, topics=["o1"]), flow("b", B, T, topics=["o2"])
    invs = {"a": inv(["o1"], ["billing", "a-only"]), "b": inv(["o2"], ["billing"])}
    (p,) = plan_topology([a, b], invs).problems
    assert p.kind == "group collision" and p.subject == "billing" and p.stage == "cluster"
    assert plan_topology([a, b], invs).exit_code == 2 and "migration.groups_exclude" in p.line
    fixed = flow("b", B, T, topics=["o2"], groups_exclude=["billing", "connect-.*"])
    assert plan_topology([a, fixed], invs).exit_code == 0


def test_listed_topics_of_one_source_split_between_two_flows_into_one_target_are_clean() -> None:
    """Two migrations of one source into one target with disjoint selections (the integration test's fallback)."""
    a, b = flow("a", A, T, topics=["orders.*"]), flow("b", A, T, topics=["pay.*"])
    plan = plan_topology([a, b], {"a": inv(["orders.1", "pay.1"]), "b": inv(["orders.1", "pay.1"])})
    assert [r.kind for r in plan.relations] == ["parallel"] and plan.exit_code == 0


def test_a_rename_onto_a_listed_topic_of_the_same_flow_is_found_on_the_cluster() -> None:
    a = flow("a", A, T, topic_renames={"legacy": "orders"})
    plan = plan_topology([a, flow("b", B, T2)], {"a": inv(["legacy", "orders"]), "b": inv(["x"])})
    assert kinds(plan) == ["rename onto a copied topic"] and plan.problems[0].stage == "cluster"
    assert plan.exit_code == 2  # the configuration is wrong, whatever found it


def test_a_loop_of_regex_selections_found_on_the_clusters_is_bad_input() -> None:
    ab, ba = flow("ab", A, B, topics=["orders.*"], groups=["g1"]), flow("ba", B, A, topics=["orders.*"], groups=["g2"])
    offline = plan_topology([ab, ba])
    assert offline.problems == [] and offline.undecided and offline.exit_code == 1
    online = plan_topology([ab, ba], {"ab": inv(["orders.eu"]), "ba": inv([])})
    (p,) = online.problems
    assert p.kind == "loop" and p.stage == "cluster" and p.subject == "orders.eu" and online.exit_code == 2


def test_cluster_ids_make_two_bootstrap_strings_one_target() -> None:
    a = flow("a", A, "nlb:9098", topics=["orders"]).with_ids(None, "msk-id")
    b = flow("b", B, "b-1.msk:9098", topics=["orders"]).with_ids(None, "msk-id")
    assert kinds(plan_topology([a, b])) == ["topic collision"]


# ---- the command, offline (no network: flow files only) --------------------------------------------
def _flow_file(tmp: Path, label: str, source: str, target: str, **migration) -> str:
    doc = {"source": {"alias": f"src-{label}", "bootstrap_servers": source},
           "target": {"alias": "msk", "bootstrap_servers": target},
           "migration": {"name": f"mm2-{label}", **migration},
           "worker": {"group_id": f"connect-{label}", "config_storage_topic": f"{label}-c", "offset_storage_topic": f"{label}-o",
                      "status_storage_topic": f"{label}-s"}}
    path = tmp / f"{label}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _run(capfd, *argv: str) -> tuple[int, str, str]:
    capfd.readouterr()
    code = run_cli(cli, ["topology", "check", *argv], "msk-migrate")
    out, err = capfd.readouterr()
    return code, out, err


def test_check_offline_refuses_a_collision_with_one_line_and_exit_2(tmp_path, capfd) -> None:
    a = _flow_file(tmp_path, "a", A, T, topics=["orders"], groups=["g1"])
    b = _flow_file(tmp_path, "b", B, T, topics=["orders"], groups=["g2"])
    code, out, err = _run(capfd, "--config", a, "--config", b, "--offline", "--output", "json")
    doc = json.loads(out)
    assert code == 2 and json_shape_problems(doc) == [] and doc["verdict"] == "refused"
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: migration.topics: topic orders comes from both")
    assert {r["row"] for r in doc["rows"]} == {"relation", "problem"} and doc["talked_to"]["clusters"] == []


def test_check_offline_accepts_a_fan_out_and_says_so(tmp_path, capfd) -> None:
    a = _flow_file(tmp_path, "eu", A, T, topics=["orders"], groups=["g1"])
    b = _flow_file(tmp_path, "us", A, T2, topics=["orders"], groups=["g1"])
    code, out, _ = _run(capfd, "--config", a, "--config", b, "--offline", "--output", "json")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "clean" and [r["kind"] for r in doc["rows"]] == ["fan-out"]


def test_check_refuses_a_fan_out_to_itself_before_any_connection(tmp_path, capfd) -> None:
    """Without --offline too: bad input in the configuration is refused before a cluster is reached
    (the bootstrap servers are unroutable: reaching them would take the client's timeout and exit 2 for another reason)."""
    a = _flow_file(tmp_path, "a", "10.255.255.1:9092", "10.255.255.1:9092")
    b = _flow_file(tmp_path, "b", B, T2)
    code, _, err = _run(capfd, "--config", a, "--config", b)
    assert code == 2 and err.startswith("error: target.bootstrap_servers: flow ") and "its own source" in err


def test_check_needs_two_flows_each_named_once(tmp_path, capfd) -> None:
    a = _flow_file(tmp_path, "a", A, T)
    code, _, err = _run(capfd, "--config", a, "--offline")
    assert code == 2 and "at least 2" in err
    code, _, err = _run(capfd, "--config", a, "--config", a, "--offline")
    assert code == 2 and "given twice" in err


class _Reached(BaseException):
    """A cluster was reached (a BaseException: no command's ``except Exception`` swallows it)."""


def test_preflight_with_another_migration_refuses_shared_names_before_any_connection(tmp_path, capfd, monkeypatch) -> None:
    from msk_migrate.access.admin import AdminSession

    def refuse(*a, **k):
        raise _Reached("a cluster was reached")

    monkeypatch.setattr(AdminSession, "for_endpoint", classmethod(refuse))
    a = _flow_file(tmp_path, "a", A, T, topics=["o1"], groups=["g1"])
    b = _flow_file(tmp_path, "b", B, T, topics=["o1"], groups=["g2"])
    capfd.readouterr()
    code = run_cli(cli, ["preflight", "--config", a, "--with-config", b], "msk-migrate")
    err = capfd.readouterr().err
    assert code == 2 and err.startswith("error: migration.topics: topic o1 comes from both sources") and f"({b})" in err


def test_preflight_refuses_the_flow_under_preflight_given_again_as_another(tmp_path, capfd) -> None:
    a = _flow_file(tmp_path, "a", A, T)
    capfd.readouterr()
    code = run_cli(cli, ["preflight", "--config", a, "--with-config", a], "msk-migrate")
    assert code == 2 and "is the one under preflight" in capfd.readouterr().err


def test_cleanup_of_a_consolidated_migration_keeps_the_heartbeats_the_others_write() -> None:
    from msk_migrate.topology.plan import kept_on_shared_target

    a, b, elsewhere = flow("a", A, T), flow("b", B, T), flow("c", C, T2)
    assert kept_on_shared_target(a, [a, b, elsewhere]) == {"heartbeats": "mm2-b-heartbeat"}
    assert kept_on_shared_target(a, [elsewhere]) == {}


def test_a_ring_of_three_flows_round_which_a_topic_travels_is_a_loop_naming_the_ring() -> None:
    ring = [flow("ab", A, B, topics=["orders"]), flow("bc", B, C), flow("ca", C, A)]
    plan = plan_topology(ring)
    (p,) = plan.problems
    assert p.kind == "loop" and p.subject == "orders" and p.stage == "config" and plan.exit_code == 2
    assert set(p.flows) == {"ab", "bc", "ca"} and "travels round" in p.detail
    assert sorted(r.kind for r in plan.relations) == ["forwarding", "forwarding", "forwarding"]


def test_a_ring_whose_flows_all_mark_their_copies_under_one_alias_per_cluster_is_loop_free() -> None:
    al = {A: "dc-a", B: "dc-b", C: "dc-c"}
    ring = [_aliased(flow(n, s, t, topics=["orders"], mark_copies=True), al[s], al[t]) for n, s, t in (("ab", A, B), ("bc", B, C), ("ca", C, A))]
    plan = plan_topology(ring)
    assert plan.problems == [] and "ring" in [r.kind for r in plan.relations] and plan.exit_code == 0
    ring[2] = _aliased(ring[2], "dc-c", "a-again")
    (p,) = plan_topology(ring).problems
    assert p.kind == "loop" and p.field == "source.alias"


def test_a_chain_that_does_not_come_back_is_no_ring() -> None:
    plan = plan_topology([flow("ab", A, B, topics=["orders"]), flow("bc", B, C), flow("cd", C, T)])
    assert plan.problems == [] and plan.exit_code == 0


def test_a_ring_broken_by_a_rename_is_no_loop() -> None:
    """The topic comes back under another name: it is not copied onto itself."""
    ring = [flow("ab", A, B, topics=["orders"]), flow("bc", B, C, topic_renames={"orders": "orders-c"}), flow("ca", C, A)]
    assert plan_topology(ring).problems == []


def test_a_ring_of_clusters_with_regex_selections_is_undecided_offline_and_found_on_the_clusters() -> None:
    ring = [flow("ab", A, B, topics=["orders.*"]), flow("bc", B, C), flow("ca", C, A)]
    offline = plan_topology(ring)
    assert offline.problems == [] and any("ring of clusters" in u.what for u in offline.undecided) and offline.exit_code == 1
    online = plan_topology(ring, {"ab": inv(["orders.eu"]), "bc": inv([]), "ca": inv([])})
    assert [(p.kind, p.subject, p.stage) for p in online.problems] == [("loop", "orders.eu", "cluster")] and online.exit_code == 2


def test_the_check_refuses_a_collision_found_only_on_the_clusters_with_exit_2_and_one_line() -> None:
    """Issue 47: a collision the clusters showed is refused like any other (exit 2, both sources, the setting)."""
    from msk_migrate.runbook.topology_check import Reached, plan_outcome

    a, b = flow("a", A, T, topics=["orders.*"], groups=["ga"]), flow("b", B, T, topics=["orders.*"], groups=["gb"])
    plan = plan_topology([a, b], {"a": inv(["orders.eu"]), "b": inv(["orders.eu"])})
    o = plan_outcome(plan, Reached(ids={A: "ida", B: "idb"}), {"a": "a.yaml", "b": "b.yaml"})
    assert o.exit_code == 2 and o.verdict == "collisions" and o.error is not None and "\n" not in o.error
    assert o.error.startswith("migration.topics: topic orders.eu comes from both sources") and A in o.error and B in o.error
