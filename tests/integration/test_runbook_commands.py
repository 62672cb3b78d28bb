"""The runbook commands (lag, cutover check, offsets sync/snapshot, rollback, cleanup) against the real
local clusters and Connect worker of the session, through the real CLI."""

from __future__ import annotations

import datetime as dt
import json
import time

import yaml
from confluent_kafka import Consumer

from msk_migrate.access.admin import AdminSession
from msk_migrate.access.offsets import latest_checkpoints
from msk_migrate.cliutil import json_shape_problems
from msk_migrate.local.procs import free_port
from tests.kafka_helpers import admin, commit_group, committed, consume_all, create_topic, end_offsets, produce, wait_until

from .conftest import TEST_MIGRATION
from .test_cli import _migration_file, run


def _one_line_exit_2(r) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and "Traceback" not in r.stderr, r.stderr


def _replicated(local_env, topic: str, n: int) -> None:
    tgt = local_env.target().bootstrap_servers
    wait_until(lambda: topic in admin(tgt).list_topics(timeout=10).topics and sum(end_offsets(tgt, topic).values()) >= n,
               90, what=f"{topic} replicated")


def test_lag_is_in_sync_after_replication_and_behind_for_a_topic_the_worker_does_not_copy(tmp_path, local_env, mm2, connect, unique):
    src = local_env.source().bootstrap_servers
    topic, stray = f"it-{unique}-lag", f"lagonly-{unique}"
    create_topic(src, topic, partitions=2)
    create_topic(src, stray, partitions=1)
    produce(src, topic, ((f"k{i}".encode(), b"v", None, i % 2) for i in range(300)))
    produce(src, stray, ((None, b"v", None, 0) for i in range(40)))
    mf = _migration_file(tmp_path, local_env, topics=["it-.*", f"lagonly-{unique}"])

    def in_sync():
        r = run("lag", "--config", str(mf), "--connect-url", connect.url, "--topic", topic, "--output", "json")
        return r if r.returncode == 0 else None

    r = wait_until(in_sync, 90, interval=2, what="lag in sync")
    data = json.loads(r.stdout)
    assert data["in_sync"] and {p["partition"] for p in data["rows"]} == {0, 1}
    assert all(p["behind"] == 0 and p["replicated"] == p["source_lso"] for p in data["rows"])
    assert sum(p["source_lso"] for p in data["rows"]) == 300
    assert data["talked_to"]["worker"] == connect.url  # says what it talked to
    assert data["talked_to"]["source"] == local_env.source().bootstrap_servers

    r = run("lag", "--config", str(mf), "--connect-url", connect.url, "--topic", stray, "--output", "json")
    assert r.returncode == 1, r.stderr
    (row,) = json.loads(r.stdout)["rows"]
    assert row["behind"] == 40 and row["status"] == "behind"
    r = run("lag", "--config", str(mf), "--connect-url", connect.url, "--topic", stray, "--max-records", "40")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "40" in r.stdout  # the table keeps its numbers
    assert r.stdout.startswith("config: flow file") and f"worker: {connect.url}" in r.stdout.splitlines()[0]


def _report(tmp_path, verdict: str, age_minutes: float, local_env, topic: str, partitions: int):
    """A report as `validate` writes it for ``topic`` on the session's clusters (the gate's other
    conditions: covered topics, cluster ids, records compared per partition, window end), finished
    ``age_minutes`` ago (test_guards.py drives the gate with reports of real validate runs)."""
    now = dt.datetime.now(dt.UTC)
    finished = now - dt.timedelta(minutes=age_minutes)
    ids = {role: AdminSession.for_endpoint(role, getattr(local_env, role)()).cluster_id() for role in ("source", "target")}
    path = tmp_path / f"report-{verdict}-{age_minutes}.json"
    path.write_text(json.dumps({
        "verdict": verdict, "run": {"finished_at": finished.isoformat().replace("+00:00", "Z")},
        "window": {"kind": "timestamps", "until_timestamp_ms": int(now.timestamp() * 1000) + 1, "until": now.isoformat()},
        "source": {"cluster_id": ids["source"]}, "target": {"cluster_id": ids["target"]}, "topics_covered": [topic],
        "topics": [{"topic": topic, "partitions": [{"partition": p, "source_count": 1, "source_log": {"has_records": True}}
                                                   for p in range(partitions)]}],
    }))
    return path


def test_cutover_check_is_ready_only_when_every_condition_holds(tmp_path, local_env, mm2, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"it-{unique}-cut", f"it-{unique}-mover"
    create_topic(src, topic, partitions=2)
    produce(src, topic, ((f"k{i}".encode(), b"v", None, i % 2) for i in range(200)))
    commit_group(src, group, topic, {0: 60, 1: 40})
    mf = _migration_file(tmp_path, local_env)
    fresh = _report(tmp_path, "match", 5, local_env, topic, 2)
    args = ["cutover", "check", "--config", str(mf), "--connect-url", connect.url, "--group", group,
            "--validation-report", str(fresh), "--output", "json"]

    def ready():
        r = run(*args)
        return r if r.returncode == 0 else None

    r = wait_until(ready, 90, interval=2, what="cutover ready")
    conds = {c["name"]: c for c in json.loads(r.stdout)["conditions"]}
    assert json.loads(r.stdout)["ready"] and all(c["ok"] for c in conds.values())
    assert "RUNNING" in conds or "it-source" in conds["connectors and tasks RUNNING"]["evidence"]

    stale = _report(tmp_path, "match", 120, local_env, topic, 2)
    r = run(*args[:-4], "--validation-report", str(stale), "--output", "json")
    assert r.returncode == 1
    bad = [c for c in json.loads(r.stdout)["conditions"] if not c["ok"]]
    assert [c["name"] for c in bad] == ["validation report"] and "120 min old" in bad[0]["evidence"]

    # a consumer already running on the target: not ready (MM2 no longer syncs an active group)
    c = Consumer({"bootstrap.servers": tgt, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    try:
        wait_until(lambda: c.poll(0.5) is not None or c.assignment(), 30, what="member joined")
        r = run(*args)
        assert r.returncode == 1
        bad = [x["name"] for x in json.loads(r.stdout)["conditions"] if not x["ok"]]
        assert "group inactive on target" in bad
    finally:
        c.close()


def test_offsets_sync_moves_a_stopped_group_now_and_never_backwards_without_force(tmp_path, local_env, mm2, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"it-{unique}-sync", f"it-{unique}-syncer"
    create_topic(src, topic, partitions=1)
    produce(src, topic, ((None, f"v{i}".encode(), None, 0) for i in range(300)))
    commit_group(src, group, topic, {0: 120})
    mf = _migration_file(tmp_path, local_env)
    session = AdminSession.for_endpoint("target", local_env.target())
    cp = wait_until(lambda: latest_checkpoints(session, "source", group, TEST_MIGRATION.internal_namespace)
                    .get(group, {}).get((topic, 0)), 90,
                    what="checkpoint")
    _replicated(local_env, topic, 300)
    # the group moved on on the target (ahead of the checkpoint): a sync would move it backwards
    commit_group(tgt, group, topic, {0: 290})
    r = run("offsets", "sync", "--config", str(mf), "--group", group, "--output", "json")
    assert r.returncode == 0, r.stderr
    assert not json_shape_problems(json.loads(r.stdout)), r.stdout
    (row,) = json.loads(r.stdout)["rows"]
    # placed exactly: the first record after the commit point (no transactions: the same offset), at or above MM2's checkpoint
    assert row["action"] == "backwards-refused" and row["method"] == "exact" and row["translated"] == 120
    assert cp.downstream_offset <= row["translated"]
    assert committed(tgt, group, topic, 1) == {0: 290}
    r = run("offsets", "sync", "--config", str(mf), "--group", group, "--force", "--dry-run", "--output", "json")
    assert json.loads(r.stdout)["rows"][0]["action"] == "backwards-forced" and committed(tgt, group, topic, 1) == {0: 290}
    r = run("offsets", "sync", "--config", str(mf), "--group", group, "--force")
    assert r.returncode == 0, r.stderr
    assert committed(tgt, group, topic, 1) == {0: 120}
    assert cp.downstream_offset <= 120  # MM2's checkpoint is never ahead of the source commit point

    r = run("offsets", "sync", "--config", str(mf), "--group", f"it-{unique}-nobody")
    _one_line_exit_2(r)
    assert "--group" in r.stderr and "nobody" in r.stderr

    c = Consumer({"bootstrap.servers": tgt, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    try:
        wait_until(lambda: c.poll(0.5) is not None or c.assignment(), 30, what="member joined")
        before = committed(tgt, group, topic, 1)
        r = run("offsets", "sync", "--config", str(mf), "--group", group, "--force")
        _one_line_exit_2(r)
        assert "active member" in r.stderr and committed(tgt, group, topic, 1) == before
    finally:
        c.close()


def test_offsets_snapshot_writes_the_source_end_offsets_validate_reads(tmp_path, local_env, unique):
    src = local_env.source().bootstrap_servers
    topic = f"it-{unique}-snap"
    create_topic(src, topic, partitions=2)
    produce(src, topic, ((None, b"v", None, i % 2) for i in range(30)))
    mf = _migration_file(tmp_path, local_env)
    out = tmp_path / "snapshot.json"
    r = run("offsets", "snapshot", "--config", str(mf), "--topic", topic, "--out", str(out), "--output", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert not json_shape_problems(doc) and doc["verdict"] == "written", r.stdout
    assert [(x["partition"], x["end_offset"]) for x in doc["rows"]] == [(0, 15), (1, 15)] and doc["out"] == str(out)
    assert json.loads(out.read_text()) == {topic: {"0": 15, "1": 15}}
    from msk_migrate.validation.request import load_snapshot

    assert {p: r.end for p, r in load_snapshot(out)[topic].items()} == {0: 15, 1: 15}


def _producers_moved(flow_file, topic: str) -> None:
    """What `cutover confirm` records before a rollback is possible: the topic's producers moved (the ledger)."""
    from msk_migrate.config.flow import read_flow
    from msk_migrate.ledger import Change, ledger_for

    ledger = ledger_for(read_flow(None, flow_file))
    ledger.append(ledger.read(), [Change("topic", topic, "producers-moved", detail="producers write to the target")], "test")


def test_rollback_replicates_only_what_producers_wrote_on_the_target_back_to_the_source(tmp_path, local_env, mm2, connect, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"it-{unique}-rb"
    create_topic(src, topic, partitions=2)
    produce(src, topic, ((f"k{i}".encode(), f"old{i}".encode(), None, i % 2) for i in range(200)))
    _replicated(local_env, topic, 200)
    mf = _migration_file(tmp_path, local_env)
    _producers_moved(mf, topic)
    r = run("rollback", "plan", "--config", str(mf), "--topic", topic, "--output", "json")
    assert r.returncode == 0, r.stderr
    planned = json.loads(r.stdout)
    assert sorted(planned["reverse_connectors"]) == ["it-reverse-checkpoint", "it-reverse-source"]
    rev = planned["reverse_connectors"]["it-reverse-source"]
    assert rev["source.cluster.alias"] == "target" and rev["target.cluster.alias"] == "source"
    assert "it-reverse-source" not in connect.connectors()  # plan changes nothing

    # producers moved: they write on the target
    produce(tgt, topic, ((f"k{i}".encode(), f"new{i}".encode(), None, i % 2) for i in range(100)))
    try:
        r = run("rollback", "apply", "--config", str(mf), "--connect-url", connect.url, "--topic", topic, "--output", "json")
        assert r.returncode == 0, r.stdout + r.stderr
        assert not json_shape_problems(json.loads(r.stdout)) and json.loads(r.stdout)["verdict"] == "applied", r.stdout
        wait_until(lambda: sum(end_offsets(src, topic).values()) >= 300, 90, what="reverse copy on the source")
        time.sleep(3)
        assert sum(end_offsets(src, topic).values()) == 300  # the forward-copied past is not copied back
        values = [m.value() for m in consume_all(src, topic, 300)]
        assert sorted(v for v in values if v.startswith(b"new")) == sorted(f"new{i}".encode() for i in range(100))
        live = connect.config("it-source")
        assert topic.replace(".", "\\.").replace("-", "\\-") in live["topics.exclude"] or topic in live["topics.exclude"]

        # the original forward flow (which selects the topic) would now loop: refused, nothing applied
        before = connect.config("it-source")
        r = run("connectors", "apply", "--config", str(mf), "--connect-url", connect.url)
        _one_line_exit_2(r)
        assert "both ways" in r.stderr and connect.config("it-source") == before

        r = run("rollback", "apply", "--config", str(mf), "--connect-url", connect.url, "--topic", f"other-{unique}")
        _one_line_exit_2(r)
        assert "--topic" in r.stderr
    finally:
        for name in ("it-reverse-source", "it-reverse-checkpoint"):
            if name in connect.connectors():
                connect.delete(name)
        from msk_migrate.connect_api.apply import apply
        from msk_migrate.connectors.render import render_connectors

        apply(connect, render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION), wait=True, timeout=120)


def test_cleanup_of_one_migration_never_touches_another_migrations_bookkeeping_on_a_shared_target(
        tmp_path, local_env, mm2, connect, unique):
    # a second migration into the worker's (shared) target with the SAME aliases as the session's live flow
    # (prod.yaml's case): MM2's checkpoints and offset syncs are named per migration, so its bookkeeping is
    # its own; `heartbeats` (one per cluster) is shared with the live flow and must survive
    a = local_env.source().alias
    gone = f"gone{unique}"
    data = {"source": {"alias": a, "bootstrap_servers": local_env.source().bootstrap_servers},
            "target": {"alias": local_env.target().alias, "bootstrap_servers": local_env.target().bootstrap_servers},
            "migration": {**TEST_MIGRATION.model_dump(), "name": gone}, "worker": {"replication_factor": 1}}
    mf = tmp_path / "flow.yaml"
    mf.write_text(yaml.safe_dump(data))
    host = local_env.target().bootstrap_servers
    left = [f"mm2-offset-syncs.{gone}.{a}.internal", f"{gone}.{a}.checkpoints.internal"]
    live = [f"mm2-offset-syncs.{TEST_MIGRATION.name}.{a}.internal", f"{TEST_MIGRATION.name}.{a}.checkpoints.internal"]
    for t in left:
        create_topic(host, t, partitions=1)
    wait_until(lambda: set(live) | {"heartbeats"} <= set(admin(host).list_topics(timeout=10).topics), 60,
               what="the live flow's heartbeats, offset syncs and checkpoints")
    r = run("cleanup", "--config", str(mf), "--connect-url", connect.url, "--output", "json")
    assert r.returncode == 0, r.stderr
    items = {i["name"]: i for i in json.loads(r.stdout)["items"]}
    assert set(left) <= set(items) and not json.loads(r.stdout)["deleted"]
    assert not set(live) & set(items)  # the live migration's bookkeeping is not even listed
    assert items["heartbeats"]["kind"] == "kept" and items["heartbeats"]["why"].startswith("shared: connector it-")
    assert set(left) <= set(admin(host).list_topics(timeout=10).topics)  # nothing deleted without --yes
    r = run("cleanup", "--config", str(mf), "--connect-url", connect.url, "--yes")
    assert r.returncode == 0, r.stderr
    wait_until(lambda: not set(left) & set(admin(host).list_topics(timeout=10).topics), 30, what="topics deleted")
    assert {"heartbeats", *live} <= set(admin(host).list_topics(timeout=10).topics)  # the live flow's: kept

    # a flow whose connectors still run is refused
    live_flow = _migration_file(tmp_path, local_env)
    r = run("cleanup", "--config", str(live_flow), "--connect-url", connect.url, "--yes")
    _one_line_exit_2(r)
    assert "it-source" in r.stderr


def test_operator_commands_never_pick_a_worker_silently(tmp_path, local_env):
    mf = _migration_file(tmp_path, local_env)
    env = {k: v for k, v in __import__("os").environ.items() if k != "MSK_MIGRATE_CONNECT_URL"}
    for args in (["connectors", "status"], ["connectors", "pause", "--config", str(mf)],
                 ["lag", "--config", str(mf)], ["cutover", "check", "--config", str(mf), "--group", "g"]):
        r = run(*args, env=env)
        _one_line_exit_2(r)
        assert "--connect-url" in r.stderr and "--local" in r.stderr, args
    for bad in ("ftp://127.0.0.1:8083", "127.0.0.1:8083", "http://", "http://host:notaport"):
        r = run("connectors", "status", "--connect-url", bad, env=env)
        _one_line_exit_2(r)
        assert "--connect-url" in r.stderr, bad
    r = run("connectors", "status", "--connect-url", f"http://127.0.0.1:{free_port()}", env=env)
    _one_line_exit_2(r)
    assert "unreachable" in r.stderr


def test_preflight_of_an_environment_runs_before_deploy_and_checks_the_target_after(tmp_path, local_env, unique):
    """--env: the stack's environment YAML is the config; before deploy (no target bootstrap) only the source."""
    src = local_env.source().bootstrap_servers
    topic = f"it-{unique}-envpf"
    create_topic(src, topic, partitions=3)
    env = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "infra/environments/dev.yaml").read_text())
    env["name"] = "lab"
    env["source"] = {"alias": "source", "bootstrap_servers": src, "auth": {"mode": "plaintext"}, "allow_plaintext": True,
                     "network": {"cidrs": ["10.20.0.0/16"]}}
    # The created MSK target's replication factors (>= min.insync.replicas + 1): checked only after deploy.
    env["migration"] = {"name": "lab", "topics": [f"it-{unique}-.*"], "tasks_max": 4}
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(env))
    r = run("preflight", "--env", str(path), "--output", "json", env={**__import__("os").environ, "MSK_MIGRATE_TARGET_BOOTSTRAP": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["target checks"]["status"] == "skip" and "after deploy" in checks["target checks"]["detail"]
    assert checks["topics selected"]["status"] == "ok" and "target reachable" not in checks
    # after deploy the target part runs: the environment's target speaks IAM, which a local broker is not
    # (one line naming the target field, exit 2)
    r = run("preflight", "--env", str(path), "--target-bootstrap", local_env.target().bootstrap_servers, "--output", "json",
            env={k: v for k, v in __import__("os").environ.items() if k not in ("AWS_REGION", "AWS_DEFAULT_REGION")})
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stdout + r.stderr
    assert r.stderr.startswith("error: target.") and "Traceback" not in r.stderr
