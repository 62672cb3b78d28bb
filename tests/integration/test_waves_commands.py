"""``--wave`` on the commands that look at topics or groups (issue 43, part 5): lag, offsets verify|sync|snapshot
and validate act on the wave's topics and groups only, as the real source holds them; a topic or group outside
the wave, or an unknown wave, is one line naming the option, exit 2."""

from __future__ import annotations

import json

from tests.kafka_helpers import admin, commit_group, create_topic, produce

from .test_cli import _migration_file, run


def _estate(tmp_path, local_env, unique, **migration):
    src = local_env.source().bootstrap_servers
    orders, payments = f"wc-{unique}-orders", f"wc-{unique}-payments"
    for t in (orders, payments):
        create_topic(src, t, partitions=1)
        produce(src, t, ((None, b"v", None, 0) for _ in range(10)))
    billing, shipping = f"wcg-{unique}-billing", f"wcg-{unique}-shipping"
    commit_group(src, billing, orders, {0: 5})
    commit_group(src, billing, payments, {0: 5})  # reads both waves: moves with the later one
    commit_group(src, shipping, orders, {0: 10})
    # the session's MM2 connectors (the mm2 fixture) are the flow's: lag reads their positions
    mf = _migration_file(tmp_path, local_env, topics=[f"wc-{unique}-.*"], groups=[f"wcg-{unique}-.*"],
                         waves={"first": [orders], "second": [f"wc-{unique}-pay.*"]}, **migration)
    return mf, orders, payments, billing, shipping


def test_each_command_acts_on_the_waves_topics_and_groups_only(tmp_path, local_env, mm2, unique):
    mf, orders, payments, billing, shipping = _estate(tmp_path, local_env, unique)
    worker = ["--connect-url", local_env.status()["connect"]["url"]]

    r = run("lag", "--config", str(mf), *worker, "--wave", "second", "--output", "json")
    assert r.returncode in (0, 1), r.stderr
    assert {row["topic"] for row in json.loads(r.stdout)["rows"]} == {payments}

    snap = tmp_path / "snapshot.json"
    r = run("offsets", "snapshot", "--config", str(mf), "--wave", "first", "--out", str(snap), "--output", "json")
    assert r.returncode == 0, r.stderr
    assert set(json.loads(snap.read_text())) == {orders}

    r = run("offsets", "verify", "--config", str(mf), "--wave", "first", "--output", "json")
    groups = {row["group"] for row in json.loads(r.stdout)["rows"]}
    assert groups == {shipping}, (groups, r.stderr)  # billing reads first too, but moves with second
    r = run("offsets", "--config", str(mf), "--wave", "second", "--output", "json")
    assert {row["group"] for row in json.loads(r.stdout)["rows"]} == {billing}, r.stderr

    r = run("validate", "--config", str(mf), "--wave", "first", "--no-report", "--output", "json")
    doc = json.loads(r.stdout)
    assert [t["topic"] for t in doc["topics"]] == [orders], doc.get("topics")


def test_a_topic_or_group_outside_the_wave_and_an_unknown_wave_are_refused_with_one_line(tmp_path, local_env, mm2, unique):
    mf, orders, payments, billing, _ = _estate(tmp_path, local_env, unique)
    worker = ["--connect-url", local_env.status()["connect"]["url"]]
    cases = [
        (("lag", "--config", str(mf), *worker, "--wave", "first", "--topic", payments), "--topic", f"{payments} is not a topic of wave first"),
        (("offsets", "verify", "--config", str(mf), "--wave", "first", "--group", billing), "--group",
         f"{billing} does not move with wave first"),
        (("offsets", "sync", "--config", str(mf), "--wave", "first", "--group", billing, "--dry-run"), "--group",
         f"{billing} does not move with wave first"),
        (("offsets", "snapshot", "--config", str(mf), "--wave", "third", "--out", str(tmp_path / "s.json")), "--wave", "no wave 'third'"),
        (("validate", "--config", str(mf), "--wave", "third"), "--wave", "no wave 'third'"),
        (("validate", "--config", str(mf), "--wave", "first", "--topic", orders), "--wave/--topic", "give one topic selection"),
    ]
    for args, option, says in cases:
        r = run(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: {option}:") and says in lines[0], (args, r.stderr)
    assert not (tmp_path / "s.json").exists()


def _one_line(r, option: str, says: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: {option}:") and says in lines[0], r.stderr


def test_cleanup_of_a_wave_waits_for_the_ledger_keeps_the_flows_bookkeeping_for_later_waves_and_records_the_last(
        tmp_path, local_env, unique):
    from msk_migrate.kafka.names import checkpoints_topic
    from msk_migrate.ledger import Change, open_ledger

    name = f"wc{unique}"
    mf, orders, payments, billing, shipping = _estate(tmp_path, local_env, unique, name=name)
    bookkeeping = checkpoints_topic("source", name)  # this migration's own (no connector of it runs)
    create_topic(local_env.target().bootstrap_servers, bookkeeping, partitions=1)
    connect = local_env.status()["connect"]["url"]
    ledger = open_ledger(str(tmp_path / "migration-ledger"), name)

    r = run("cleanup", "--config", str(mf), "--wave", "first", "--output", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["verdict"] == "wave-not-moved", r.stdout + r.stderr
    assert doc["unmoved"] == [f"topic {orders} (unrecorded)", f"group {shipping} (on the source)"]

    ledger.append(ledger.read(), [Change("topic", orders, "producers-moved", wave="first"),
                                  Change("group", shipping, "consumers-moved", wave="first")], "test")
    r = run("cleanup", "--config", str(mf), "--wave", "first", "--output", "json")
    assert r.returncode == 0, r.stderr
    items = {i["name"]: i for i in json.loads(r.stdout)["items"]}
    assert items[bookkeeping]["kind"] == "kept" and "wave(s) second have not moved yet" in items[bookkeeping]["why"], items
    r = run("cleanup", "--config", str(mf), "--wave", "first", "--connect-url", connect, "--yes")
    _one_line(r, "--yes", "wave(s) second of the migration have not moved")
    assert bookkeeping in admin(local_env.target().bootstrap_servers).list_topics(timeout=10).topics

    ledger.append(ledger.read(), [Change("topic", payments, "producers-moved", wave="second"),
                                  Change("group", billing, "consumers-moved", wave="second")], "test")
    r = run("cleanup", "--config", str(mf), "--wave", "second", "--connect-url", connect, "--yes", "--output", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["deleted"] and {i["name"]: i["kind"] for i in doc["items"]}[bookkeeping] == "topic"
    view = ledger.read()
    assert (view.state_of("topic", payments), view.state_of("group", billing)) == ("cleaned-up", "cleaned-up")
    assert (view.state_of("topic", orders), view.state_of("group", shipping)) == ("producers-moved", "consumers-moved")


def test_connectors_status_of_a_wave_names_the_running_tasks_that_copy_each_of_its_topics(tmp_path, local_env, mm2, unique):
    import time

    src = local_env.source().bootstrap_servers
    first, second = f"it-cw{unique}-a", f"it-cw{unique}-b"
    create_topic(src, first, partitions=3)
    create_topic(src, second, partitions=1)
    # the session's connectors copy it-.*: this flow is theirs, with two waves
    mf = _migration_file(tmp_path, local_env, topics=["it-.*"], waves={"first": [first], "second": [second]})
    worker = ["--connect-url", local_env.status()["connect"]["url"]]
    deadline = time.monotonic() + 90
    while True:  # the connector picks the new topics up at its next topic refresh (2 s in these tests)
        r = run("connectors", "status", "--config", str(mf), *worker, "--wave", "first", "--output", "json")
        doc = json.loads(r.stdout)
        if r.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert r.returncode == 0 and doc["wave"] == "first", r.stdout + r.stderr
    (row,) = doc["wave_topics"]
    assert row["topic"] == first and row["partitions"] == 3 and row["unassigned"] == [] and row["ok"]
    assert row["tasks"] and set(row["states"]) == {"RUNNING"}
    assert doc["talked_to"]["source"] == src

    # a wave whose topics the flow's source connector does not copy: named, exit 1
    mf2, _orders, payments, _billing, _shipping = _estate(tmp_path, local_env, unique)
    r = run("connectors", "status", "--config", str(mf2), *worker, "--wave", "second", "--output", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["verdict"] == "not-running", r.stdout + r.stderr
    assert [(t["topic"], t["unassigned"]) for t in doc["wave_topics"]] == [(payments, [0])]
    r = run("connectors", "status", "--config", str(mf2), *worker, "--wave", "third")
    _one_line(r, "--wave", "no wave 'third'")
