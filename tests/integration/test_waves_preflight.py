"""Waves on the session's real source: preflight lists each wave's topics and groups (from committed offsets),
a group that reads two waves moves with the later one, and `status --wave` shows that wave only."""

from __future__ import annotations

import json

from tests.kafka_helpers import commit_group, create_topic, produce

from .test_cli import _migration_file, run


def test_preflight_lists_waves_and_a_group_reading_two_waves_moves_with_the_later(tmp_path, local_env, unique):
    src = local_env.source().bootstrap_servers
    orders, payments = f"wv-{unique}-orders", f"wv-{unique}-payments"
    for t in (orders, payments):
        create_topic(src, t, partitions=1)
        produce(src, t, ((None, b"v", None, 0) for _ in range(10)))
    commit_group(src, f"wvg-{unique}-billing", orders, {0: 5})
    commit_group(src, f"wvg-{unique}-billing", payments, {0: 5})
    commit_group(src, f"wvg-{unique}-shipping", orders, {0: 10})
    mf = _migration_file(tmp_path, local_env, name=f"wv{unique}", topics=[f"wv-{unique}-.*"], groups=[f"wvg-{unique}-.*"],
                         waves={"first": [orders], "second": [f"wv-{unique}-pay.*"]})

    r = run("preflight", "--config", str(mf), "--output", "json")
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    first, second = checks["wave first"], checks["wave second"]
    assert first["status"] == "ok" and second["status"] == "ok", (first, second)
    assert f"1 topic(s): {orders}; 1 group(s) move with it: wvg-{unique}-shipping" in first["detail"]
    assert f"read here but moving with a later wave: wvg-{unique}-billing (with second)" in first["detail"]
    assert f"wvg-{unique}-billing also reads wave(s) first and moves with second, the later" in second["detail"]

    # --wave: that wave's topics and the groups moving with it, and its own row only
    r = run("preflight", "--config", str(mf), "--wave", "second", "--output", "json")
    doc = json.loads(r.stdout)
    checks = {c["name"]: c for c in doc["checks"]}
    assert [t["topic"] for t in doc["topics"]] == [payments] and doc["groups"] == [f"wvg-{unique}-billing"], doc
    assert doc["wave"] == "second" and "wave first" not in checks and checks["wave second"]["status"] == "ok"
    assert checks["topics selected"]["detail"] == "1 topic(s), 1 partition(s) of wave second"
    assert checks["consumer groups"]["detail"] == "1 group(s) move with wave second"
    r = run("preflight", "--config", str(mf), "--wave", "third")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: --wave:") and "no wave 'third'" in lines[0], r.stderr

    r = run("status", "--config", str(mf), "--wave", "second", "--output", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {(x["kind"], x["name"], x["state"]) for x in doc["rows"]} == {
        ("topic", payments, "unrecorded"), ("group", f"wvg-{unique}-billing", "on-source")}
    assert doc["talked_to"]["source"] == src and doc["waves"] == ["first", "second"]
