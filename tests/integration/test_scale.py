"""The scale tier at CI size: 2,000 partitions (200 topics x 10) and 100 consumer groups on the session's
local clusters, the operator commands run through the real CLI. Asserts outcomes (exact numbers, the
JSON shape, readable summaries), not times: bench/scale_bench.py measures 10,000 partitions.

The load (bench/scale_bench.py builds the same at any size): RECORDS records in every partition on the
source and the target (the same records with the same timestamps, as MM2 copies them, so `offsets verify`
proves every placement by content); group i commits offset COMMITTED on topics i and i+1 on both clusters, except
group AHEAD_GROUP, committed further on the target (translated ahead: every one of its rows must say so);
the flow's source connector exists STOPPED with Connect offsets: copied to the end except the first
BEHIND_TOPICS topics, BEHIND records short.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.connect_api.rest import ConnectClient

from .test_cli import run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_bench as sb

TOPICS, PARTITIONS, GROUPS, RECORDS, COMMITTED = 200, 10, 100, 5, 2
BEHIND_TOPICS, BEHIND = 20, 3
AHEAD_GROUP = 7


@pytest.fixture(scope="module")
def scale(local_env, connect: ConnectClient, tmp_path_factory):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    ts0 = int(time.time() * 1000) - 600_000  # the same records on both clusters: the target holds MM2-like copies
    for bootstrap in (src, tgt):
        sb.create_topics(bootstrap, TOPICS, PARTITIONS)
        sb.produce(bootstrap, TOPICS, PARTITIONS, RECORDS, ts0)
        sb.commit_groups(bootstrap, GROUPS, TOPICS, PARTITIONS, COMMITTED)
    ahead = [TopicPartition(sb.topic_name(t), p, COMMITTED + 2) for t in (AHEAD_GROUP, AHEAD_GROUP + 1) for p in range(PARTITIONS)]
    admin = AdminClient({"bootstrap.servers": tgt})  # held: a client collected mid-request never answers its futures
    admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(sb.group_name(AHEAD_GROUP), ahead)])[sb.group_name(AHEAD_GROUP)].result(timeout=120)
    m = sb.migration()
    sb.stop_source_connector_with_offsets(local_env, m, TOPICS, PARTITIONS, RECORDS, BEHIND_TOPICS, BEHIND)
    flow = sb.flow_file(local_env, tmp_path_factory.mktemp("scale"))
    _producers_moved(flow, [sb.topic_name(1), sb.topic_name(2)])  # rollback plan acts on topics whose producers moved
    yield flow
    for name in m.connector_names().values():
        with contextlib.suppress(Exception):
            connect.delete(name)
    for bootstrap in (src, tgt):  # the session's clusters stay light for the suites after this one
        admin = AdminClient({"bootstrap.servers": bootstrap})
        with contextlib.suppress(Exception):
            for f in admin.delete_consumer_groups([sb.group_name(g) for g in range(GROUPS)]).values():
                f.result()
        with contextlib.suppress(Exception):
            for f in admin.delete_topics([sb.topic_name(t) for t in range(TOPICS)], operation_timeout=60).values():
                f.result()


def _producers_moved(flow_file, topics: list[str]) -> None:
    """What `cutover confirm` records before a rollback is possible: the topics' producers moved (the ledger)."""
    from msk_migrate.config.flow import read_flow
    from msk_migrate.ledger import Change, ledger_for

    ledger = ledger_for(read_flow(None, flow_file))
    ledger.append(ledger.read(), [Change("topic", t, "producers-moved", detail="producers write to the target") for t in topics], "test")


def _json(r) -> dict:
    doc = json.loads(r.stdout)
    assert not json_shape_problems(doc), json_shape_problems(doc)
    assert doc["exit_code"] == r.returncode, (doc["exit_code"], r.returncode, r.stderr)
    return doc


def test_lag_at_2000_partitions_counts_exactly_what_the_connector_has_not_copied(scale, connect):
    r = run("lag", "--config", str(scale), "--connect-url", connect.url, "--output", "json")
    doc = _json(r)
    rows = doc["rows"]
    assert len(rows) == TOPICS * PARTITIONS and r.returncode == 1 and doc["verdict"] == "behind"
    behind = {sb.topic_name(t) for t in range(BEHIND_TOPICS)}
    for row in rows:
        want = BEHIND if row["topic"] in behind else 0
        assert (row["behind"], row["exact"], row["source_lso"]) == (want, True, RECORDS), row
        assert row["status"] == ("behind" if want else "in-sync"), row
    assert sum(row["behind"] for row in rows) == BEHIND_TOPICS * PARTITIONS * BEHIND


def test_lag_table_at_scale_summarises_per_topic_with_the_topics_behind_first(scale, connect):
    r = run("lag", "--config", str(scale), "--connect-url", connect.url)
    assert r.returncode == 1, r.stderr
    assert f"{TOPICS * PARTITIONS} partitions of {TOPICS} topics, {BEHIND_TOPICS} topic(s) behind" in r.stdout
    body = [ln for ln in r.stdout.splitlines() if ln.startswith("│") and "scale-" in ln]  # table rows, not the banner
    first = [ln.split()[1] for ln in body[:BEHIND_TOPICS]]  # rows: "│ topic │ ..." -> the topic
    assert sorted(first) == sorted(sb.topic_name(t) for t in range(BEHIND_TOPICS)), body[:BEHIND_TOPICS + 1]
    assert len(r.stdout.splitlines()) < 120  # a summary, not 2,000 rows


def test_offsets_verify_at_100_groups_flags_exactly_the_group_translated_ahead(scale):
    r = run("offsets", "verify", "--config", str(scale), "--output", "json")
    doc = _json(r)
    rows = doc["rows"]
    assert len(rows) == GROUPS * 2 * PARTITIONS and r.returncode == 1 and doc["verdict"] == "not-ok"
    ahead = [row for row in rows if row["status"] == "ahead"]
    assert {row["group"] for row in ahead} == {sb.group_name(AHEAD_GROUP)} and len(ahead) == 2 * PARTITIONS
    assert all(row["redelivery"] == -2 for row in ahead)
    ok = [row for row in rows if row["status"] == "ok"]
    assert len(ok) == len(rows) - len(ahead) and all(row["redelivery"] == 0 for row in ok)
    assert all(row["redelivery_by"] == "identity" for row in rows)  # every placement proven by content
    assert len({row["group"] for row in rows}) == GROUPS

    r = run("offsets", "verify", "--config", str(scale))
    assert r.returncode == 1
    table = [ln for ln in r.stdout.splitlines() if ln.startswith("│") and "scale-" in ln]
    assert sb.topic_name(AHEAD_GROUP) in table[0] or sb.topic_name(AHEAD_GROUP + 1) in table[0], table[:3]
    assert f"{GROUPS * 2 * PARTITIONS} group-partition(s) of {GROUPS} group(s): not-ok" in r.stdout


def test_cutover_check_preflight_cleanup_and_rollback_plan_answer_at_scale(scale, connect):
    r = run("cutover", "check", "--config", str(scale), "--connect-url", connect.url, "--group", sb.group_name(1), "--output", "json")
    conds = {c["name"]: c for c in _json(r)["rows"]}
    assert conds["translated offsets"]["ok"] and conds["translated offsets"]["evidence"].startswith(f"{2 * PARTITIONS} partition(s)")
    assert not conds["connectors and tasks RUNNING"]["ok"] and r.returncode == 1  # the connector is STOPPED

    r = run("preflight", "--config", str(scale), "--output", "json")
    rep = _json(r)
    assert sum(t["partitions"] for t in rep["topics"]) == TOPICS * PARTITIONS and len(rep["topics"]) == TOPICS

    r = run("cleanup", "--config", str(scale), "--output", "json")
    assert r.returncode == 0 and _json(r)["deleted"] is False

    r = run("rollback", "plan", "--config", str(scale), "--topic", sb.topic_name(1), "--output", "json")
    plan = _json(r)
    assert r.returncode == 0 and plan["topics"] == [sb.topic_name(1)] and plan["rows"]



def test_every_json_command_prints_the_one_shape(scale, local_env, connect, tmp_path):
    """The tour of tests/unit/test_json_shape.py's RUN_AT_SCALE: each command with --output json, one
    document of the shape whose exit_code is the process's exit code (the failing command is named)."""
    from msk_migrate.connectors.render import render_connectors
    from msk_migrate.kafka.names import HEARTBEAT_CONNECTOR_CLASS

    from ..unit.test_json_shape import RUN_AT_SCALE

    hb_name, hb = next((n, c) for n, c in render_connectors(local_env.source(), local_env.target(), sb.migration()).items()
                       if c["connector.class"] == HEARTBEAT_CONNECTOR_CLASS)
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / f"{hb_name}.json").write_text(json.dumps({"name": hb_name, "config": hb}))
    flow, base, url = ["--config", str(scale)], ["--dir", str(local_env.base_dir)], ["--connect-url", connect.url]
    cases = {  # in this order: the heartbeat connector is applied, paused, resumed, restarted, then deleted
        "local up": ["local", "up", *base],
        "local status": ["local", "status", *base],
        "local down": ["local", "down", "--dir", str(tmp_path / "nothing-runs-here")],
        "connectors apply": ["connectors", "apply", "--dir", str(configs), *url],
        "connectors status": ["connectors", "status", *url, hb_name],
        "connectors pause": ["connectors", "pause", *url, hb_name],
        "connectors resume": ["connectors", "resume", *url, hb_name],
        "connectors restart": ["connectors", "restart", *url, hb_name],
        "connectors delete": ["connectors", "delete", *url, hb_name],
        "preflight": ["preflight", *flow],
        "offsets": ["offsets", *flow, "--group", sb.group_name(1)],
        "offsets verify": ["offsets", "verify", *flow, "--group", sb.group_name(AHEAD_GROUP)],
        "lag": ["lag", *flow, *url, "--topic", sb.topic_name(BEHIND_TOPICS)],
        "cutover check": ["cutover", "check", *flow, *url, "--group", sb.group_name(2)],
        "rollback plan": ["rollback", "plan", *flow, "--topic", sb.topic_name(2)],
        "cleanup": ["cleanup", *flow],
    }
    assert set(cases) == RUN_AT_SCALE
    bad = {}
    for name, args in cases.items():
        r = run(*args, "--output", "json")
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            bad[name] = f"exit {r.returncode}, no JSON document: {r.stderr.strip()[-300:]}"
            continue
        problems = json_shape_problems(doc)
        if not problems and doc["exit_code"] != r.returncode:
            problems = [f"exit_code {doc['exit_code']} but the command exited {r.returncode}"]
        if problems:
            bad[name] = "; ".join(problems)
    assert not bad, "commands whose --output json is not the one shape (outcome.json_document): " + "; ".join(
        f"`msk-migrate {k}`: {v}" for k, v in bad.items())
    assert hb_name not in connect.connectors()
