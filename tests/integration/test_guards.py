"""Verdicts that cannot pass on nothing, and commands that cannot act on the wrong cluster (issue 21),
on the session's real local clusters and Connect worker, through the real CLI."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pytest
import yaml

from msk_migrate.access.admin import AdminSession
from msk_migrate.config.flow import Flow, check_variables
from msk_migrate.config.recorded import RECORD_DIR_ENV
from msk_migrate.errors import UsageError
from msk_migrate.runbook.session import verify_clusters
from tests.kafka_helpers import admin, commit_group, create_topic, end_offsets, produce, wait_until

from .conftest import TEST_MIGRATION
from .test_cli import _migration_file
from .test_runbook_commands import _one_line_exit_2


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capfd):
    """The CLI in this process (its one error boundary, stdout/stderr captured): no interpreter start per call."""
    from msk_migrate.cliutil import run_cli
    from msk_migrate.commands.root import cli

    def _run(*args: str) -> Ran:
        capfd.readouterr()
        code = run_cli(cli, list(args), "msk-migrate")
        out, err = capfd.readouterr()
        return Ran(code, out, err)

    return _run


def _validate(run, local_env, tmp_path, name: str, *args: str, source: str | None = None):
    out = tmp_path / name
    r = run("validate", "--engine", "native", "--source-bootstrap", source or local_env.source().bootstrap_servers,
            "--target-bootstrap", local_env.target().bootstrap_servers, "--validation-report", str(out), *args)
    return r, (json.loads((out / "report.json").read_text()) if (out / "report.json").is_file() else None)


def _replicated(local_env, topic: str, n: int) -> None:
    tgt = local_env.target().bootstrap_servers
    wait_until(lambda: topic in admin(tgt).list_topics(timeout=10).topics and sum(end_offsets(tgt, topic).values()) >= n,
               90, what=f"{topic} replicated")


def test_validation_that_compares_nothing_is_no_evidence_and_the_gate_checks_its_evidence(run, tmp_path, local_env, mm2, connect, unique):
    src = local_env.source().bootstrap_servers
    topic, other, group = f"it-{unique}-gate", f"it-{unique}-else", f"it-{unique}-gater"
    create_topic(src, topic, partitions=2)
    create_topic(src, other, partitions=1)
    produce(src, topic, ((f"k{i}".encode(), b"v", None, i % 2) for i in range(60)))
    produce(src, other, ((None, b"v", None, 0) for _ in range(5)))
    commit_group(src, group, topic, {0: 30, 1: 30})
    _replicated(local_env, topic, 60)
    _replicated(local_env, other, 5)

    # 1. the default window ends now minus --grace-seconds (300 s): the records are newer, nothing compared
    r, rep = _validate(run, local_env, tmp_path, "recent", "--topic", topic)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["verdict"] == "no-evidence" and rep["summary"]["source_records"] == 0
    assert "--grace-seconds 300" in rep["verdict_reason"] and "NO EVIDENCE" in r.stdout
    assert rep["summary"]["partitions_without_evidence"] == 2
    # 2. an explicit window that holds none of the records
    r, empty = _validate(run, local_env, tmp_path, "empty", "--topic", topic,
                         "--from-timestamp", "2020-01-01T00:00:00Z", "--until-timestamp", "2020-01-02T00:00:00Z")
    assert r.returncode == 1 and empty["verdict"] == "no-evidence", r.stdout + r.stderr
    assert "window ends at 2020-01-02" in empty["verdict_reason"]
    # 3. a window that holds them: match, with the clusters it read (ids) and the topics it covered
    r, good = _validate(run, local_env, tmp_path, "good", "--topic", topic, "--grace-seconds", "0", "--output", "json")
    assert r.returncode == 0 and good["verdict"] == "match", r.stdout + r.stderr
    ids = {role: AdminSession.for_endpoint(role, getattr(local_env, role)()).cluster_id() for role in ("source", "target")}
    assert json.loads(r.stdout)["talked_to"]["target_cluster_id"] == ids["target"]
    assert good["source"]["cluster_id"] == ids["source"] and good["target"]["cluster_id"] == ids["target"]
    assert good["topics_covered"] == [topic] and good["run"]["engine"] == "native"
    # 4. a report of other topics, and one read from other clusters (the target compared with itself)
    _, others = _validate(run, local_env, tmp_path, "others", "--topic", other, "--grace-seconds", "0")
    _, elsewhere = _validate(run, local_env, tmp_path, "elsewhere", "--topic", topic, "--grace-seconds", "0",
                             source=local_env.target().bootstrap_servers)
    assert others["verdict"] == "match" and elsewhere["verdict"] == "match"

    mf = _migration_file(tmp_path, local_env)
    gate = ["cutover", "check", "--config", str(mf), "--connect-url", connect.url, "--group", group, "--output", "json"]

    def validation_row(report: str):
        res = run(*gate, "--validation-report", str(tmp_path / report))
        doc = json.loads(res.stdout)
        assert doc["talked_to"]["target_cluster_id"] == ids["target"]
        return res, next(c for c in doc["conditions"] if c["name"] == "validation report")

    def ready():
        res, _row = validation_row("good")
        return res if res.returncode == 0 else None

    wait_until(ready, 90, interval=2, what="cutover ready with the matching report")
    for report, expects in (("recent", ["verdict no-evidence", "compared no record in 2 partition(s) that hold records"]),
                            ("others", [f"does not cover topic(s) the group consumes: {topic}"]),
                            ("elsewhere", [f"comes from another source cluster: report {ids['target']}"])):
        res, row = validation_row(report)
        assert res.returncode == 1 and not row["ok"] and all(e in row["evidence"] for e in expects), (report, row)
    # the group commits past the good report's window end: the report no longer covers what it consumed
    time.sleep(1.1)
    produce(src, topic, ((b"late", b"v", None, 0) for _ in range(3)))
    commit_group(src, group, topic, {0: 33, 1: 30})
    res, row = validation_row("good")
    assert res.returncode == 1 and "window ends" in row["evidence"] and "before the group's last commit" in row["evidence"]


def test_cleanup_yes_needs_the_worker_and_refuses_while_a_reverse_connector_exists(run, tmp_path, local_env, mm2, connect, unique):
    from msk_migrate.connectors.render import render_reverse_connectors

    name = f"rv{unique}"
    mf = _migration_file(tmp_path, local_env, name=name, topics=[f"rv{unique}-.*"], groups=[f"rv{unique}-.*"])
    before = set(admin(local_env.target().bootstrap_servers).list_topics(timeout=10).topics)
    r = run("cleanup", "--config", str(mf), "--yes")
    _one_line_exit_2(r)
    assert "--connect-url" in r.stderr and "cleanup --yes" in r.stderr

    spec = TEST_MIGRATION.model_copy(update={"name": name, "topics": [f"rv{unique}-.*"], "topics_exclude": [f"rv{unique}-a"]})
    reverse = render_reverse_connectors(local_env.source(), local_env.target(), spec, [f"rv{unique}-a"])
    rev_name = f"{name}-reverse-source"
    connect.create_stopped(rev_name, {k: v for k, v in reverse[rev_name].items() if k != "name"})
    try:
        r = run("cleanup", "--config", str(mf), "--connect-url", connect.url, "--yes")
        _one_line_exit_2(r)
        assert f"connector {rev_name} still exists" in r.stderr
    finally:
        connect.delete(rev_name)
    assert before <= set(admin(local_env.target().bootstrap_servers).list_topics(timeout=10).topics)  # nothing deleted


def test_commands_refuse_a_worker_of_another_migration_or_other_clusters(run, tmp_path, local_env, mm2, connect, unique):
    other = _migration_file(tmp_path, local_env, name=f"other{unique}")
    before = {n: connect.config(n) for n in connect.connectors()}
    for args in (["lag"], ["connectors", "pause"], ["cutover", "check", "--group", "g"]):
        r = run(*args, "--config", str(other), "--connect-url", connect.url)
        _one_line_exit_2(r)
        assert "runs another migration's connectors" in r.stderr and f"other{unique}" in r.stderr, args
    # this migration's name, but the flow's target is another cluster than the one its connectors write to
    data = yaml.safe_load(_migration_file(tmp_path, local_env).read_text())
    data["target"]["bootstrap_servers"] = local_env.source().bootstrap_servers
    swapped = tmp_path / "swapped.yaml"
    swapped.write_text(yaml.safe_dump(data))
    r = run("lag", "--config", str(swapped), "--connect-url", connect.url)
    _one_line_exit_2(r)
    assert f"runs it-checkpoint with target {local_env.target().bootstrap_servers}" in r.stderr
    assert f"this flow's target is {local_env.source().bootstrap_servers}" in r.stderr
    assert {n: connect.config(n) for n in connect.connectors()} == before  # nothing changed on the worker


def test_an_exported_variable_that_contradicts_env_is_refused(run, tmp_path, local_env, monkeypatch):
    records = tmp_path / "recorded"
    records.mkdir()
    (records / "prod.json").write_text(json.dumps({"environment": "prod", "connect_url": "https://connect.prod.example:8083",
                                                   "target_bootstrap": "b-1.prod.kafka.eu-west-1.amazonaws.com:9098"}))
    (records / "dev.json").write_text(json.dumps({"environment": "dev", "connect_url": "https://connect.dev.example:8083"}))
    monkeypatch.setenv(RECORD_DIR_ENV, str(records))
    monkeypatch.delenv("MSK_MIGRATE_TARGET_BOOTSTRAP", raising=False)
    monkeypatch.setenv("MSK_MIGRATE_CONNECT_URL", "https://connect.prod.example:8083")
    r = run("lag", "--env", "dev")
    _one_line_exit_2(r)
    assert "MSK_MIGRATE_CONNECT_URL" in r.stderr and "environment prod's connect url, not dev's" in r.stderr
    monkeypatch.setenv("MSK_MIGRATE_CONNECT_URL", "https://connect.qa.example:8083")
    r = run("lag", "--env", "dev")
    _one_line_exit_2(r)
    assert "contradicts --env dev, whose recorded connect url is https://connect.dev.example:8083" in r.stderr
    monkeypatch.delenv("MSK_MIGRATE_CONNECT_URL")
    monkeypatch.setenv("MSK_MIGRATE_TARGET_BOOTSTRAP", "b-1.x.c2.kafka.us-east-1.amazonaws.com:9098")
    r = run("offsets", "--env", "dev")
    _one_line_exit_2(r)
    assert "MSK_MIGRATE_TARGET_BOOTSTRAP" in r.stderr and "us-east-1; --env dev is in eu-west-1" in r.stderr
    # the same value given as an option is the operator's explicit choice for this command, not a leftover
    check_variables("dev", "eu-west-1", {"connect_url": "https://connect.prod.example:8083"}, set())
    try:
        check_variables("dev", "eu-west-1", {"connect_url": "https://connect.prod.example:8083"}, {"connect_url"})
        raise AssertionError("a variable holding prod's worker was accepted for dev")
    except UsageError as exc:
        assert exc.field == "MSK_MIGRATE_CONNECT_URL"

    # the environment's recorded target is another cluster than the one a command reaches
    (records / "lab.json").write_text(json.dumps({"environment": "lab", "target_cluster_id": "AAAAAAAAAAAAAAAAAAAAAA",
                                                  "target_bootstrap": "b-1.lab:9098", "recorded_at": "2026-11-01"}))
    flow = Flow("environment lab", local_env.source(), local_env.target(), TEST_MIGRATION, None, env_name="lab")  # type: ignore[arg-type]
    target = AdminSession.for_endpoint("target", local_env.target())
    try:
        verify_clusters(flow, AdminSession.for_endpoint("source", local_env.source()), target)
        raise AssertionError("a target other than the recorded one was accepted")
    except UsageError as exc:
        assert exc.field == "--target-bootstrap" and "was applied to cluster AAAAAAAAAAAAAAAAAAAAAA" in str(exc)
        assert str(target.cluster_id()) in str(exc)


def test_preflight_names_a_topic_the_excludes_drop_and_a_group_left_out(run, tmp_path, local_env, unique):
    src = local_env.source().bootstrap_servers
    kept, dropped, group = f"it-{unique}-kept", f"it-{unique}.ledger-internal", f"billing-{unique}"
    create_topic(src, kept, partitions=1)
    create_topic(src, dropped, partitions=1)
    produce(src, kept, ((None, b"v", None, 0) for _ in range(3)))
    commit_group(src, group, kept, {0: 3})
    mf = _migration_file(tmp_path, local_env)
    r = run("preflight", "--config", str(mf), "--output", "json")
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    checks = {c["name"]: c for c in doc["checks"]}
    assert dropped in doc["dropped_topics"] and kept not in doc["dropped_topics"]
    assert checks["topics dropped by excludes"]["status"] == "warn"
    assert dropped in checks["topics dropped by excludes"]["detail"] and r"(by exclude .*[\-\.]internal)" in checks["topics dropped by excludes"]["detail"]
    assert group in doc["dropped_groups"] and checks["groups not checkpointed"]["status"] == "warn"
    assert f"{group} (reads {kept})" in checks["groups not checkpointed"]["detail"]
    assert doc["talked_to"]["source"] == src
