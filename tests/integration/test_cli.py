"""The operator-facing commands against the real local environment."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.procs import ProcRecord, free_port, start_time
from tests.kafka_helpers import commit_group, create_topic, end_offsets, produce, wait_until

from .conftest import TEST_MIGRATION

CLI = [sys.executable, "-m", "msk_migrate.commands"]


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=env)


def _migration_file(tmp_path: Path, local_env, **migration) -> Path:
    data = {
        "source": {"alias": "source", "bootstrap_servers": local_env.source().bootstrap_servers},
        "target": {"alias": "target", "bootstrap_servers": local_env.target().bootstrap_servers},
        "migration": {**TEST_MIGRATION.model_dump(), **migration},
        "worker": {"replication_factor": 1},
    }
    path = tmp_path / "migration.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_local_up_is_idempotent_and_status_prints_endpoints_as_json(local_env):
    first = local_env.status()
    r = run("local", "up", "--dir", str(local_env.base_dir), "--output", "json")
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    for part in ("source", "target", "connect"):
        assert again[part]["pid"] == first[part]["pid"], f"{part} was restarted by a second `up`"
    r = run("local", "status", "--dir", str(local_env.base_dir), "--output", "json")
    st = json.loads(r.stdout)
    assert r.returncode == 0 and st["running"]
    assert st["source"]["bootstrap_servers"].startswith("127.0.0.1:")
    assert st["connect"]["url"].startswith("http://127.0.0.1:") and st["connect"]["metrics_url"].endswith("/metrics")


def test_local_down_stops_only_what_up_started(tmp_path):
    env = LocalEnvironment(tmp_path / "env", with_connect=False)
    env.up()
    state = json.loads(env.state_file.read_text())
    pids = [p["pid"] for p in state["procs"].values()]
    # A process `up` did not start, recorded under a reused pid: down must leave it alone.
    bystander = subprocess.Popen(["sleep", "60"])
    state["procs"]["prometheus"] = ProcRecord("prometheus", bystander.pid, (start_time(bystander.pid) or 0) + 1, "x").to_dict()
    env.state_file.write_text(json.dumps(state))
    stopped = env.down(wipe=True)
    assert sorted(stopped) == ["source-broker", "target-broker"]
    for pid in pids:
        assert start_time(pid) is None or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert bystander.poll() is None, "down killed a process it did not start"
    bystander.kill()


def test_worker_rejected_config_is_one_line_exit_2_and_nothing_applied(local_env, connect, tmp_path, unique):
    good = {"name": f"ok-{unique}", "config": {"connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
            "source.cluster.alias": "source", "target.cluster.alias": "target",
            "source.cluster.bootstrap.servers": local_env.source().bootstrap_servers,
            "target.cluster.bootstrap.servers": local_env.target().bootstrap_servers, "tasks.max": "1"}}
    bad = json.loads(json.dumps(good))
    bad["name"] = f"bad-{unique}"
    bad["config"]["tasks.max"] = "zero"
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.json").write_text(json.dumps(bad))
    before = set(connect.connectors())
    r = run("connectors", "apply", "--dir", str(tmp_path), "--connect-url", connect.url)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "tasks.max" in r.stderr and "nothing was applied" in r.stderr
    assert set(connect.connectors()) == before


def test_plaintext_password_is_refused_before_the_worker_is_asked(tmp_path, connect):
    cfg = {"name": "leaky", "config": {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
           "source.cluster.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p4ss";'}}
    (tmp_path / "leaky.json").write_text(json.dumps(cfg))
    r = run("connectors", "apply", "--dir", str(tmp_path), "--connect-url", connect.url)
    assert r.returncode == 2 and "plaintext password" in r.stderr and "p4ss" not in r.stderr
    assert "leaky" not in connect.connectors()


def test_unreachable_connect_worker_is_exit_2_with_the_reason(tmp_path, local_env):
    port = free_port()
    r = run("connectors", "status", "--connect-url", f"http://127.0.0.1:{port}")
    assert r.returncode == 2 and "unreachable" in r.stderr and str(port) in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_connectors_status_json_lists_running_mm2_connectors(mm2, connect):
    r = run("connectors", "status", "--connect-url", connect.url, "--output", "json", *mm2)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)["rows"]}
    assert set(rows) == set(mm2) and all(row["state"] == "RUNNING" for row in rows.values())


def test_rendered_configs_equal_what_apply_sends(tmp_path, local_env):
    mf = _migration_file(tmp_path, local_env)
    r = run("connectors", "render", "--config", str(mf))
    assert r.returncode == 0, r.stderr
    from msk_migrate.connectors.render import render_connectors

    assert json.loads(r.stdout) == render_connectors(local_env.source(), local_env.target(), TEST_MIGRATION)


def test_preflight_reports_selected_topics_and_groups(tmp_path, local_env, unique):
    src = local_env.source().bootstrap_servers
    topic = f"it-{unique}-preflight"
    create_topic(src, topic, partitions=4)
    commit_group(src, f"it-{unique}-pf", topic, {0: 0})
    mf = _migration_file(tmp_path, local_env, topics=[f"it-{unique}-.*"], groups=[f"it-{unique}-.*"])
    r = run("preflight", "--config", str(mf), "--output", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert [t["topic"] for t in rep["topics"]] == [topic] and rep["topics"][0]["partitions"] == 4
    assert rep["groups"] == [f"it-{unique}-pf"]
    checks = {c["name"]: c["status"] for c in rep["checks"]}
    assert checks["target auto.create.topics.enable"] == "ok"  # the local target is configured like MSK


def test_preflight_against_an_unreachable_cluster_is_exit_2(tmp_path, local_env):
    data = {"source": {"alias": "source", "bootstrap_servers": f"127.0.0.1:{free_port()}"},
            "target": {"alias": "target", "bootstrap_servers": local_env.target().bootstrap_servers}}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data))
    t0 = time.time()
    r = run("preflight", "--config", str(tmp_path / "m.yaml"))
    assert r.returncode == 2 and "source cluster" in r.stderr and "unreachable" in r.stderr
    assert time.time() - t0 < 60


def test_offsets_command_verifies_translated_groups(tmp_path, local_env, mm2, unique):
    src, _tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic = f"it-{unique}-offs"
    create_topic(src, topic, partitions=2)
    produce(src, topic, ((f"k{i}".encode(), b"v", None, i % 2) for i in range(400)))
    ends = end_offsets(src, topic)
    group = f"it-{unique}-reader"
    commit_group(src, group, topic, ends)
    mf = _migration_file(tmp_path, local_env)

    def verified():
        r = run("offsets", "--config", str(mf), "--group", group, "--output", "json")
        return r if r.returncode == 0 else None

    r = wait_until(verified, 90, interval=2, what="offsets verified on target")
    doc = json.loads(r.stdout)
    assert doc["in_sync"] is True and doc["talked_to"]["target_cluster_id"]
    rows = doc["rows"]
    assert {(row["topic"], row["partition"]) for row in rows} == {(topic, 0), (topic, 1)}
    assert all(row["status"] == "ok" and row["redelivery"] >= 0 for row in rows)


def test_connectors_are_applied_from_the_s3_objects_the_stack_uploads(local_env, connect, unique):
    """The stack uploads connectors/<name>.json (flat configs from the renderer); apply reads them back."""
    import boto3
    from moto.server import ThreadedMotoServer

    from msk_migrate.connectors.render import render_connectors

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket="configs")
        create_topic(local_env.source().bootstrap_servers, f"it-{unique}-s3-a", partitions=1)  # tasks need a topic
        spec = TEST_MIGRATION.model_copy(update={"name": f"s3{unique}", "topics": [f"it-{unique}-s3-.*"]})
        configs = render_connectors(local_env.source(), local_env.target(), spec)
        for name, cfg in configs.items():
            s3.put_object(Bucket="configs", Key=f"connectors/{name}.json", Body=json.dumps(cfg).encode())
        s3.put_object(Bucket="configs", Key="worker/worker.env", Body=b"CONNECT_GROUP_ID=x\n")
        env = {**__import__("os").environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}
        r = run("connectors", "apply", "--from-s3", "s3://configs/connectors/", "--s3-endpoint-url", endpoint,
                "--connect-url", connect.url, "--output", "json", env=env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert sorted(out["created"]) == sorted(configs)
        for name, cfg in configs.items():
            live = connect.config(name)
            assert {k: v for k, v in live.items() if k != "name"} == {k: v for k, v in cfg.items() if k != "name"}
        r = run("connectors", "apply", "--from-s3", "s3://configs/missing/", "--s3-endpoint-url", endpoint,
                "--connect-url", connect.url, env=env)
        assert r.returncode == 2 and "no *.json objects" in r.stderr
    finally:
        for name in list(connect.connectors()):
            if name.startswith(f"s3{unique}"):
                connect.delete(name)
        server.stop()


def test_replication_factor_above_the_target_brokers_is_refused_before_apply(tmp_path, local_env, connect):
    mf = _migration_file(tmp_path, local_env, name="rf", replication_factor=3)
    before = set(connect.connectors())
    r = run("connectors", "apply", "--config", str(mf), "--connect-url", connect.url)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "migration.replication_factor" in r.stderr and "1 broker" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert set(connect.connectors()) == before


def test_apply_refuses_to_rename_a_running_flows_mm2_bookkeeping_topics(tmp_path, local_env, connect, mm2):
    # the session's flow runs with per-migration names; the same flow rendered with Kafka's names would move
    # its checkpoints and offset syncs to other topics (translation history lost): refused, nothing applied
    mf = _migration_file(tmp_path, local_env, internal_topic_names="kafka-default")
    before = {n: connect.config(n) for n in mm2}
    r = run("connectors", "apply", "--config", str(mf), "--connect-url", connect.url)
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "migration.internal_topic_names" in r.stderr and "it.source.checkpoints.internal" in r.stderr
    assert "source.checkpoints.internal" in r.stderr and "per-migration" in r.stderr
    assert {n: connect.config(n) for n in mm2} == before
