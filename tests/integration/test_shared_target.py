"""Two migrations into one shared target (issue 47, part 3): the commands of one never read, count or delete the
other's topics, groups, MM2 internal topics, connectors or ledger, and ``connectors apply`` refuses a flow that
collides with a migration already running there (exit 2, one line naming both, nothing created).

Both migrations copy the session harness's source into its target on the session's worker (a shared worker, as
docs/design.md allows), with their own names, source aliases, topics and groups; so does the session's ``it``
migration when the ``mm2`` fixture ran. Each runs through the CLI as an operator runs it (in process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from msk_migrate.kafka import names
from tests.kafka_helpers import admin, commit_group, create_topic, end_offsets, produce

from .conftest import TEST_MIGRATION


def _flow_file(path: Path, local_env, name: str, alias: str, topics: list[str], groups: list[str]) -> Path:
    fast = {k: v for k, v in TEST_MIGRATION.model_dump().items() if k not in ("name", "topics", "groups")}
    doc = {"source": {"alias": alias, "bootstrap_servers": local_env.source().bootstrap_servers},
           "target": {"alias": "target", "bootstrap_servers": local_env.target().bootstrap_servers},
           "migration": {**fast, "name": name, "topics": topics, "groups": groups},
           "worker": {"replication_factor": 1}}
    path.write_text(yaml.safe_dump(doc))
    return path


def _target_state(tgt: str, topics: list[str], groups: list[str], topic: str) -> dict:
    """What the other migration owns on the target: its topics (end offsets), groups' commits, MM2 topics."""
    from tests.kafka_helpers import committed

    listed = set(admin(tgt).list_topics(timeout=10).topics)
    return {"topics": {t: (t in listed) for t in topics},
            "groups": {g: committed(tgt, g, topic, 1) for g in groups}}


def _wait(pred, timeout: float, every: float = 1.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(every)
    return pred()


def test_the_commands_of_one_migration_leave_the_other_untouched_and_a_colliding_flow_is_refused(
        tmp_path, local_env, msk_migrate_cli, unique):
    src, tgt = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    url = local_env.status()["connect"]["url"]
    worker = ["--connect-url", url]
    a_name, b_name = f"sa{unique}", f"sb{unique}"
    a_topic, b_topic = f"sa-{unique}-orders", f"sb-{unique}-orders"
    a_group, b_group = f"sag-{unique}-app", f"sbg-{unique}-app"
    for topic, group in ((a_topic, a_group), (b_topic, b_group)):
        create_topic(src, topic, partitions=1)
        produce(src, topic, ((None, b"v", None, 0) for _ in range(20)))
        commit_group(src, group, topic, {0: 10})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fa = _flow_file(tmp_path / "a" / "a.yaml", local_env, a_name, f"srca{unique}", [f"sa-{unique}-.*"], [f"sag-{unique}-.*"])
    fb = _flow_file(tmp_path / "b" / "b.yaml", local_env, b_name, f"srcb{unique}", [f"sb-{unique}-.*"], [f"sbg-{unique}-.*"])

    said = []
    for f in (fa, fb):
        code, out, err = msk_migrate_cli("connectors", "apply", "--config", str(f), *worker, "--output", "json")
        assert code == 0, err
        said.append(" ".join(json.loads(out)["other_migrations"]))
    # B was compared with A, found on the worker, and says so; A, first, with whatever the session left there
    assert f"migration {a_name} (on {url})" in said[1] and "no collision" in said[1], said
    assert said[0], "the first apply says nothing of the other migrations it compared with (or that none is known)"

    b_connectors = [f"{b_name}-{r}" for r in ("source", "checkpoint", "heartbeat")]
    b_mm2 = [names.offset_syncs_topic(f"srcb{unique}", "target", namespace=b_name), names.checkpoints_topic(f"srcb{unique}", b_name)]
    # B's copy, its MM2 bookkeeping and its group's translated commit, all in place before A's commands run
    ready = _wait(lambda: (end_offsets(tgt, b_topic) == {0: 20} if b_topic in admin(tgt).list_topics(timeout=10).topics
                           else False) and set(b_mm2) <= set(admin(tgt).list_topics(timeout=10).topics)
                  and _target_state(tgt, [], [b_group], b_topic)["groups"][b_group].get(0, -1) >= 0, 60)
    assert ready, "migration B did not copy its topic, write its MM2 topics and translate its group within 60 s"
    before = _target_state(tgt, [b_topic, *b_mm2], [b_group], b_topic)
    b_ledger = tmp_path / "b" / "b-ledger"
    ledger_before = sorted((p.name, p.read_bytes()) for p in b_ledger.rglob("*") if p.is_file()) if b_ledger.exists() else []
    assert ledger_before, f"B's apply recorded nothing in its ledger {b_ledger}: nothing to compare after A's commands"

    # A's read-only commands: only A's topics and groups in what they say
    outputs = {}
    for args in (("status", "--config", str(fa)), ("lag", "--config", str(fa), *worker),
                 ("offsets", "verify", "--config", str(fa)), ("offsets", "sync", "--config", str(fa), "--group", a_group,
                                                               "--dry-run"),
                 ("offsets", "snapshot", "--config", str(fa), "--out", str(tmp_path / "snap.json")),
                 ("cutover", "check", "--config", str(fa), *worker, "--group", a_group, "--quiet-seconds", "1",
                  "--timeout", "5")):
        code, out, err = msk_migrate_cli(*args, "--output", "json")
        assert code in (0, 1), (args, err)
        outputs[args[0] + " " + args[1]] = out
        assert b_topic not in out and b_group not in out and b_name not in out, (args, out)
    assert a_topic in outputs["lag --config"] and a_group in outputs["offsets verify"], outputs
    assert a_group in outputs["cutover check"], outputs["cutover check"]  # the gate looked at A's group, and only A's
    assert set(json.loads((tmp_path / "snap.json").read_text())) == {a_topic}

    # A retired: its connectors deleted, its leftovers cleaned up
    code, _, err = msk_migrate_cli("connectors", "delete", "--config", str(fa), *worker)
    assert code == 0, err
    code, out, err = msk_migrate_cli("cleanup", "--config", str(fa), *worker, "--yes", "--output", "json")
    assert code == 0, err
    doc = json.loads(out)
    deleted = [i["name"] for i in doc["items"] if i["kind"] != "kept"]
    assert doc["deleted"] and names.checkpoints_topic(f"srca{unique}", a_name) in deleted, doc  # A's own MM2 topics went
    assert not [n for n in deleted if b_name in n or f"srcb{unique}" in n or b_group in n], deleted

    after = _target_state(tgt, [b_topic, *b_mm2], [b_group], b_topic)
    assert after == before, (before, after)
    code, out, _ = msk_migrate_cli("connectors", "status", "--config", str(fb), *worker, "--output", "json")
    rows = {r["name"]: r["state"] for r in json.loads(out)["rows"]}
    assert code == 0 and {n: rows.get(n) for n in b_connectors} == dict.fromkeys(b_connectors, "RUNNING"), rows
    ledger_after = sorted((p.name, p.read_bytes()) for p in b_ledger.rglob("*") if p.is_file()) if b_ledger.exists() else []
    assert ledger_after == ledger_before

    # a third flow that selects B's topic by name: refused before any connector is created
    fc = _flow_file(tmp_path / "c.yaml", local_env, f"sc{unique}", f"srcc{unique}", [b_topic], [f"scg-{unique}-.*"])
    code, _, err = msk_migrate_cli("connectors", "apply", "--config", str(fc), *worker)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: migration.topics: topic ") and b_name in lines[0], err
    assert not [n for n in json.loads(msk_migrate_cli("connectors", "status", *worker, "--output", "json")[1])["rows"]
                if n["name"].startswith(f"sc{unique}-")]
    # another migration with the name of one into the same target (known from --with-config): refused
    d_again = _flow_file(tmp_path / "e.yaml", local_env, f"sc{unique}", f"srce{unique}", [f"se-{unique}-.*"], [f"seg-{unique}-.*"])
    code, _, err = msk_migrate_cli("connectors", "apply", "--config", str(d_again), *worker, "--with-config", str(fc))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: migration.name: ") and f"sc{unique}" in lines[0], err

    for n in b_connectors:  # leave the session's worker as found
        msk_migrate_cli("connectors", "delete", "--connect-url", url, n)
