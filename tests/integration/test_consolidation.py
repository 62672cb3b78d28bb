"""Consolidation on real clusters: two source clusters into one target, each its own migration.

Three single-broker KRaft clusters of this module's own (two sources at the local source's Kafka line, the
target at MSK's), on 127.0.0.1, stopped at teardown. `topology check` lists both sources' actual topics and
groups: a topic or group both hold under the flows' regexes is refused (exit 1) naming both sources; disjoint
selections are clean. Then each migration's MM2 bookkeeping is put on the shared target under the names its
connectors would use, and cleanup's deletion set for one migration (runbook.cleanup.leftovers told of the other
migration, deleted as cleanup deletes it) leaves the other migration's topics, the shared heartbeats among them; and preflight of one
migration given the other (`--with-config`) fails its row "no collision with other migrations into the target".
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest
import yaml

from msk_migrate import versions
from msk_migrate.cliutil import json_shape_problems, run_cli
from msk_migrate.commands.root import cli
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from msk_migrate.kafka import names
from msk_migrate.local.broker import BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.runbook.cleanup import delete, leftovers
from msk_migrate.runbook.session import session_of
from msk_migrate.topology.plan import ClusterRef, FlowRef, kept_on_shared_target
from tests.kafka_helpers import admin, commit_group, create_topic

RUN = uuid.uuid4().hex[:6]


@pytest.fixture(scope="module")
def clusters3():
    """Source A, source B and the shared target: ``{"a": bootstrap, "b": ..., "target": ...}``. The three are
    launched before any is awaited (their JVMs start together)."""
    base = LOCAL_DIR / "test-env" / f"consolidation-{os.getpid()}-{RUN}"
    started = []
    try:
        for role, line in (("a", "kafka-source"), ("b", "kafka-source"), ("target", "kafka-target")):
            version = versions.kafka_version() if line == "kafka-source" else versions.kafka_target_version()
            spec = BrokerSpec("source" if role != "target" else "target", version, classpath(line), base / role,
                              auto_create_topics=False, name=f"consolidation-{role}-{RUN}")
            rec, port = start_broker(spec)
            started.append((role, rec, port))
        for _, rec, port in started:
            wait_broker_ready(rec, port)
        yield {role: f"127.0.0.1:{port}" for role, _, port in started}
    finally:
        for _, rec, _ in started:
            stop(rec)
        shutil.rmtree(base, ignore_errors=True)


def _flow_file(tmp: Path, label: str, source: str, target: str, **migration) -> str:
    doc = {"source": {"alias": f"src-{label}", "bootstrap_servers": source},
           "target": {"alias": "msk", "bootstrap_servers": target},
           "migration": {"name": f"mig-{label}", "replication_factor": 1, "internal_replication_factor": 1, **migration},
           "worker": {"group_id": f"connect-{label}", "config_storage_topic": f"connect-{label}-configs",
                      "offset_storage_topic": f"connect-{label}-offsets", "status_storage_topic": f"connect-{label}-status",
                      "replication_factor": 1}}
    path = tmp / f"{label}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _check(capfd, *configs: str) -> tuple[int, dict, str]:
    capfd.readouterr()
    argv = ["topology", "check", "--output", "json"]
    for c in configs:
        argv += ["--config", c]
    code = run_cli(cli, argv, "msk-migrate")
    out, err = capfd.readouterr()
    return code, json.loads(out), err


def test_topology_check_refuses_a_topic_and_a_group_both_sources_hold_naming_both_sources(clusters3, tmp_path, capfd) -> None:
    u = uuid.uuid4().hex[:6]
    shared, group = f"orders.shared-{u}", f"billing-{u}"
    for role in ("a", "b"):
        create_topic(clusters3[role], shared, partitions=1)
        create_topic(clusters3[role], f"orders.{role}-{u}", partitions=1)
        commit_group(clusters3[role], group, shared, {0: 0})
    # regexes on both sides: the overlap is on the clusters (exact names in both would be bad input, exit 2)
    a = _flow_file(tmp_path, "a", clusters3["a"], clusters3["target"], topics=[rf"orders\..*-{u}"], groups=[rf"billing-{u}.*"])
    b = _flow_file(tmp_path, "b", clusters3["b"], clusters3["target"], topics=[rf"orders\..*-{u}"], groups=[rf"billing-{u}.*"])
    code, doc, err = _check(capfd, a, b)
    assert json_shape_problems(doc) == []
    problems = {(r["kind"], r["subject"]): r for r in doc["rows"] if r["row"] == "problem"}
    assert code == 1 and doc["verdict"] == "collisions", doc
    assert "error:" not in err  # a state of the clusters, not bad input: the document says it, stderr stays quiet
    assert set(problems) == {("topic collision", shared), ("group collision", group)}, problems
    for r in problems.values():
        assert r["stage"] == "cluster" and clusters3["a"] in r["line"] and clusters3["b"] in r["line"]
    assert [r["kind"] for r in doc["rows"] if r["row"] == "relation"] == ["consolidation"]
    reached = {c["bootstrap"]: c["cluster_id"] for c in doc["talked_to"]["clusters"]}
    assert set(reached) == set(clusters3.values()) and all(reached.values()) and len(set(reached.values())) == 3
    # the same flows offline cannot decide a regex overlap: said so, never clean
    capfd.readouterr()
    assert run_cli(cli, ["topology", "check", "--config", a, "--config", b, "--offline"], "msk-migrate") == 1
    assert "not decided offline" in capfd.readouterr().out


def test_topology_check_is_clean_for_disjoint_topics_and_groups_of_two_sources(clusters3, tmp_path, capfd) -> None:
    u = uuid.uuid4().hex[:6]
    for role in ("a", "b"):
        create_topic(clusters3[role], f"{role}.orders-{u}", partitions=1)
        create_topic(clusters3[role], f"common-{u}", partitions=1)  # held by both, selected by neither
        commit_group(clusters3[role], f"{role}-billing-{u}", f"{role}.orders-{u}", {0: 0})
    a = _flow_file(tmp_path, "a", clusters3["a"], clusters3["target"], topics=[rf"a\..*-{u}"], groups=[rf"a-.*-{u}"])
    b = _flow_file(tmp_path, "b", clusters3["b"], clusters3["target"], topics=[rf"b\..*-{u}"], groups=[rf"b-.*-{u}"])
    code, doc, _ = _check(capfd, a, b)
    assert code == 0 and doc["verdict"] == "clean", doc
    assert [r["row"] for r in doc["rows"]] == ["relation"] and doc["rows"][0]["kind"] == "consolidation"


def test_cleanup_of_one_migration_leaves_the_other_migrations_bookkeeping_on_the_shared_target(clusters3) -> None:
    """Each migration's MM2 topics as its connectors name them on the target (per-migration names, each source's
    alias, and the ``heartbeats`` every flow into the cluster writes); cleanup's deletion set for migration a,
    told of migration b (topology.plan.kept_on_shared_target), deleted, takes a's own and none of b's."""
    u = uuid.uuid4().hex[:6]
    spec = {"replication_factor": 1, "internal_replication_factor": 1}
    mig = {x: MigrationSpec(name=f"mig-{x}-{u}", **spec) for x in ("a", "b")}
    refs = {x: FlowRef(x, ClusterRef.of(clusters3[x]), ClusterRef.of(clusters3["target"]), f"src-{x}", "msk", mig[x], WorkerSpec())
            for x in ("a", "b")}
    mm2 = {x: set(names.flow_internal_topics(f"src-{x}", "msk", mig[x].internal_namespace)) for x in ("a", "b")}
    assert mm2["a"] & mm2["b"] == {names.HEARTBEATS_TOPIC}
    for t in sorted(mm2["a"] | mm2["b"]):
        create_topic(clusters3["target"], t, partitions=1)
    session = session_of(ClusterEndpoint(alias="src-a", bootstrap_servers=clusters3["a"]),
                         ClusterEndpoint(alias="msk", bootstrap_servers=clusters3["target"]), mig["a"],
                         WorkerSpec(group_id=f"connect-a-{u}", replication_factor=1))
    items = leftovers(session, include_worker=False, shared=kept_on_shared_target(refs["a"], [refs["b"]]))
    own = mm2["a"] - {names.HEARTBEATS_TOPIC}
    assert {i.name for i in items if i.kind == "topic"} == own
    assert [(i.kind, i.name) for i in items if i.name == names.HEARTBEATS_TOPIC] == [("kept", names.HEARTBEATS_TOPIC)]
    delete(session.target, items)
    deadline = time.monotonic() + 30
    while True:  # topic deletion is asynchronous: metadata drops the names within seconds
        on_target = set(admin(clusters3["target"]).list_topics(timeout=10).topics)
        if not own & on_target or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not own & on_target, sorted(own & on_target)
    assert mm2["b"] <= on_target, sorted(mm2["b"] - on_target)


def test_preflight_with_the_other_migration_fails_its_collision_row_naming_both_sources(clusters3, tmp_path, capfd) -> None:
    from msk_migrate.runbook.preflight import OTHER_MIGRATIONS

    u = uuid.uuid4().hex[:6]
    shared = f"pf.shared-{u}"
    for role in ("a", "b"):
        create_topic(clusters3[role], shared, partitions=1)
        create_topic(clusters3[role], f"pf.{role}-{u}", partitions=1)
    a = _flow_file(tmp_path, "a", clusters3["a"], clusters3["target"], topics=[rf"pf\..*-{u}"], groups=[rf"pf-a-{u}.*"])
    b = _flow_file(tmp_path, "b", clusters3["b"], clusters3["target"], topics=[rf"pf\..*-{u}"], groups=[rf"pf-b-{u}.*"])
    disjoint = _flow_file(tmp_path, "c", clusters3["b"], clusters3["target"], topics=[rf"pf\.b-{u}"], groups=[rf"pf-b-{u}.*"])

    def row(*argv: str) -> dict:
        capfd.readouterr()
        run_cli(cli, ["preflight", "--output", "json", "--config", a, *argv], "msk-migrate")
        doc = json.loads(capfd.readouterr().out)
        assert json_shape_problems(doc) == []
        return next(c for c in doc["checks"] if c["name"] == OTHER_MIGRATIONS)

    hit = row("--with-config", b)
    assert hit["status"] == "fail" and f"topic {shared} comes from both" in hit["detail"], hit
    assert clusters3["a"] in hit["detail"] and clusters3["b"] in hit["detail"]
    clean = row("--with-config", disjoint)
    assert clean["status"] == "ok" and disjoint in clean["detail"], clean  # the other migration, by its flow file
    assert row()["status"] == "skip"


def test_fan_out_is_accepted_and_a_target_that_is_its_own_source_by_cluster_id_is_refused(clusters3, tmp_path, capfd) -> None:
    """One source into two clusters (the target and source b standing in for a second target) is a fan-out; a
    target written as another bootstrap string of the source itself (localhost vs 127.0.0.1) is caught by the
    cluster ids the check reads, and refused as bad input naming target.bootstrap_servers."""
    u = uuid.uuid4().hex[:6]
    create_topic(clusters3["a"], f"fan.{u}", partitions=1)
    one = _flow_file(tmp_path, "one", clusters3["a"], clusters3["target"], topics=[rf"fan\.{u}"], groups=[rf"fan-{u}.*"])
    two = _flow_file(tmp_path, "two", clusters3["a"], clusters3["b"], topics=[rf"fan\.{u}"], groups=[rf"fan-{u}.*"])
    code, doc, _ = _check(capfd, one, two)
    assert code == 0 and [r["kind"] for r in doc["rows"]] == ["fan-out"], doc
    itself = _flow_file(tmp_path, "itself", clusters3["a"], clusters3["a"].replace("127.0.0.1", "localhost"), topics=[rf"fan\.{u}"])
    code, doc, err = _check(capfd, one, itself)
    assert code == 2 and doc["verdict"] == "refused", doc
    assert err.startswith("error: target.bootstrap_servers: flow ") and "is its own source" in err and "cluster id" in err
