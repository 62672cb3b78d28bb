"""`make rehearse` end to end with the default (local) Connect worker: every runbook step, forward and back,
on a KRaft source with an authorizer (SCRAM over TLS, StandardAuthorizer): the first wave's forgotten producer is
fenced and named there (the 2.8 ZooKeeper source's AclAuthorizer: test_rehearsal_zk_source.py).

The image tier runs the same rehearsal with the worker from the built image; this one guards the default path,
which is the first command a new user runs.
"""

from __future__ import annotations

import os
import re
from types import SimpleNamespace

import pytest

from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal import DEMO_TOPICS, MOVED_PRODUCER_RECORDS, ROLLBACK_TOPIC, protobuf_demo, rehearse
from msk_migrate.rehearsal.demo import AVRO_TOPIC, JSON_TOPIC, PROTOBUF_TOPIC, RETURNS_TOPIC, SCHEMA_PARTS, SCHEMA_TOPICS

from .test_producer_cutover import (
    assert_forgotten_producer_fenced_and_named,
    fence_as_mm2_is_refused_naming_alter,
    forgotten_producer_is_fenced,
    unfence_removes_exactly_the_fence,
)

TIERS = ("kafka", "spark")
#: The module's rehearsal runs in its fixture, which the first test's timeout covers: the whole walk with both waves
#: (ten minutes and more on a machine shared by parallel jobs), not one test's 15 minutes of pyproject.toml.
pytestmark = pytest.mark.timeout(2400)

STEPS = ["environment up", "produce demo data", "preflight", "apply connectors", "proof follower started", "schemas copy",
         "schemas verify", "lag until in sync", "offsets translated", "validate", "cutover check", "late schema caught",
         "move consumer groups", "decode on target", "fence wave first", "producer gate", "producer gate on the proof mark",
         "move producers", "confirm producers moved", "reverse replication", "schemas copy to source", "roll a group back",
         "decode on source", "validate in reverse", "proof follower stopped", "cleanup", "status"]


def assert_every_step_to_a_match_both_ways_with_exact_cutovers(res) -> None:
    """Every step ok in order, validation matches both ways, and both cutovers place the groups exactly
    (issue 22): a consumer on the other cluster reads exactly the records after the commit point."""
    failed = [s.to_dict() for s in res.steps if not s.ok]
    assert not failed, failed
    assert [s.name for s in res.steps] == STEPS
    assert res.validation["verdict"] == "match"
    assert res.reverse_validation["verdict"] == "match"
    # the forgotten producer's records written before the fence are part of the topic, both ways
    assert res.reverse_validation["records_compared"] == (DEMO_TOPICS[ROLLBACK_TOPIC][1] + res.waves["straggler_records"]
                                                          + MOVED_PRODUCER_RECORDS)
    moved = next(s for s in res.steps if s.name == "move consumer groups").result
    back = next(s for s in res.steps if s.name == "roll a group back").result
    assert "placed exactly" in moved and "0 re-delivered, no gap" in moved
    assert "placed exactly on the source" in back and "0 re-delivered, no gap" in back
    assert_schemas_travel_with_the_data(res)
    assert_the_gates_used_the_followers_mark(res)


def assert_the_gates_used_the_followers_mark(res) -> None:
    """Issue 34: `validate --follow` ran from the connectors' apply to cleanup, both gates took its verified-up-to
    mark as their evidence (their rows say so, with the proof lag at that moment), and it stopped on SIGTERM with
    records proven, every partition still following but those of the topic whose producers moved: proven to its
    fence, then cut over (the producers' own records on the target are not a mismatch)."""
    rows = {s.name: s.result for s in res.steps}
    for gate in ("cutover check", "producer gate on the proof mark"):
        assert "evidence: verified-up-to mark: proof mark at or past" in rows[gate], rows[gate]
        assert "proof lag at the gate" in rows[gate], rows[gate]
    assert "the groups' commit points" in rows["cutover check"]
    assert "the fenced end offsets" in rows["producer gate on the proof mark"]
    f = res.validation["follower"]
    assert f["exit_code"] == 0 and f["verdict"] == "proven", f
    assert set(f["states"]) == {"following", "cut-over"} and f["partitions"] > 0, f
    fenced = re.search(r"(\d+) partition\(s\) at their fenced end", rows["producer gate"])
    assert fenced and f["states"]["cut-over"] == int(fenced[1]) > 0, (f, rows["producer gate"])
    # every record the batch validation compared forward was proven by the follower too (it kept going after it)
    assert f["records_proven"] >= res.validation["records_compared"] > 0, (f, res.validation["records_compared"])
    assert set(f["at_gates"]) == {"cutover check", "producer gate"}, f
    assert f"{f['records_proven']:,} record(s) proven" in rows["proof follower stopped"]


def assert_schemas_travel_with_the_data(res) -> None:
    """Issue 31: the source registry's subjects are copied keeping ids (with gaps, a reference, a soft-deleted
    version), every schema'd topic's report row proves every id it saw, the target consumer decodes every record
    with the target registry, and after rollback the target-registered schema decodes on the source."""
    reg = res.schemas["registered"]
    ids = sorted(i for v in reg["ids"].values() for i in v)
    assert reg["gaps"] > 0 and len(reg["ids"]["shop.ledger-value"]) == 3, reg
    copy = res.schemas["copy"]
    assert copy["exit_code"] == 0 and copy["route"] == "apicurio-import" and copy["copied"] == len(ids), copy
    assert res.schemas["verify"]["verdict"] == "in-sync" and res.schemas["verify"]["present"] == len(ids), res.schemas["verify"]
    rows = res.schemas["report_rows"]
    assert set(rows) == set(SCHEMA_TOPICS), rows
    for topic, row in rows.items():
        assert row["status"] == "match" and row["ids_seen"] > 0 and row["resolved_identical"] == row["ids_seen"], (topic, row)
    assert rows["shop.ledger"]["ids_seen"] == 3  # every Avro version was written
    # Protobuf (issue 45): the .proto and the file it imports copied with their ids, and the keys' .proto; every
    # record's message index proven by validate, key and value, and every record decoded on the target by
    # ProtobufDeserializer to the key and value written
    proto_ids = reg["ids"][protobuf_demo.SUBJECT] + reg["ids"][protobuf_demo.COMMON_SUBJECT] + reg["ids"][protobuf_demo.KEY_SUBJECT]
    assert len(set(proto_ids)) == 3 and set(proto_ids) <= set(ids), reg
    n_proto = SCHEMA_TOPICS[PROTOBUF_TOPIC][1]
    assert sorted(res.schemas["message_indexes"][PROTOBUF_TOPIC], key=lambda a: a["part"]) == [
        {"part": "key", "indexes": [0], "message": protobuf_demo.KEY_MESSAGE, "source": n_proto, "target": n_proto},
        {"part": "value", "indexes": [0], "message": protobuf_demo.MESSAGE, "source": n_proto, "target": n_proto},
    ], res.schemas["message_indexes"]
    decoded = next(s for s in res.steps if s.name == "decode on target").result
    for topic, (_p, n) in SCHEMA_TOPICS.items():
        assert f"{topic} {n}/{n}" in decoded, decoded
    assert f"{AVRO_TOPIC} {SCHEMA_TOPICS[AVRO_TOPIC][1]}/{SCHEMA_TOPICS[AVRO_TOPIC][1]} (ids " in decoded, decoded
    assert_keys_and_two_strategies_travel(res)
    back = res.schemas["copy_to_source"]
    assert back["exit_code"] == 0 and back["copied"] >= 1, back
    assert res.schemas["decoded_on_source"]["records"] == MOVED_PRODUCER_RECORDS, res.schemas["decoded_on_source"]
    assert "schemas in sync: " in next(s for s in res.steps if s.name == "cutover check").result
    # a schema registered on the source after the copy: cutover check and lag say not in sync, naming it; the
    # re-run of `schemas copy` copies only it, and both say in sync again
    late = res.schemas["late"]
    assert not late["caught"]["ok"] and f"shop.ledger-value v4 (id {late['id']})" in late["caught"]["evidence"], late
    assert late["lag_before_copy"] is False and late["lag_after_copy"] is True, late
    assert late["recopied"] == 1 and late["after_copy"]["ok"], late


#: The topics whose keys are schema'd, one per format: every format is exercised on keys as on values (issue 45).
KEYED = {RETURNS_TOPIC: "Avro", JSON_TOPIC: "JSON Schema", PROTOBUF_TOPIC: "Protobuf"}


def assert_keys_and_two_strategies_travel(res) -> None:
    """Issue 45: every format has a schema'd key part (Avro on shop.returns, JSON Schema on shop.audit, Protobuf on
    shop.shipments, each under TopicNameStrategy: ``<topic>-key``); shop.returns' Avro values are under
    RecordNameStrategy (shop.Return: no shop.returns-value subject). Each key and value subject is copied with its id,
    proven by `validate` on every record, key and value apart, found from the records by the gate, and decoded on the
    target, key and value each under its own subject and as written together; shop.ledger's keys stay plain bytes."""
    reg = res.schemas["registered"]["ids"]
    assert {t for t, parts in SCHEMA_PARTS.items() if "key" in parts} == set(KEYED) == set(SCHEMA_TOPICS) - {AVRO_TOPIC}
    assert "shop.returns-value" not in reg, reg
    rows = res.schemas["report_rows"]
    validate = next(s for s in res.steps if s.name == "validate").result
    gate = next(s for s in res.steps if s.name == "cutover check").result
    decoded = next(s for s in res.steps if s.name == "decode on target").result
    for topic in KEYED:
        n, want = SCHEMA_TOPICS[topic][1], SCHEMA_PARTS[topic]
        key_id, value_id = (reg[want[p][1]] for p in ("key", "value"))
        assert len(key_id) == 1 and len(value_id) == 1 and key_id != value_id, (topic, reg)
        assert want["key"] == ("topic", f"{topic}-key"), want
        assert rows[topic]["ids_seen"] == 2 and rows[topic]["resolved_identical"] == 2, rows[topic]
        assert rows[topic]["parts"] == {
            p: {"schemad": True, "strategy": strategy, "subjects": [subject], "records": {"source": n, "target": n}}
            for p, (strategy, subject) in want.items()}, rows[topic]
        value_class = "RecordNameStrategy" if topic == RETURNS_TOPIC else "TopicNameStrategy"
        assert f"{topic} 2/2 id(s) identical (key TopicNameStrategy, value {value_class})" in validate, validate
        # the gate found each part from the records' ids (shop.returns' value subject names no topic)
        for named in (f"{topic} key: TopicNameStrategy ({topic}-key)", f"{topic} value: {value_class} ({want['value'][1]})"):
            assert named in gate and named in res.schemas["gate_strategies"], (named, gate)
        assert (f"{topic} {n}/{n} (key ids {key_id[0]} under {topic}-key, TopicNameStrategy; value ids {value_id[0]} under "
                f"{want['value'][1]}, {value_class})") in decoded, decoded
    assert not rows[AVRO_TOPIC]["parts"]["key"]["schemad"] and rows[AVRO_TOPIC]["parts"]["value"]["strategy"] == "topic", rows[AVRO_TOPIC]
    assert len(res.schemas["gate_strategies"]) == sum(len(p) for p in SCHEMA_PARTS.values())


@pytest.fixture(scope="module")
def kraft_rehearsal():
    from msk_migrate.local.harness import LocalEnvironment
    from msk_migrate.local.shape import make_shape

    base = LOCAL_DIR / "test-env" / f"rehearsal-kraft-{os.getpid()}" / "env"
    os.environ.pop("MSK_MIGRATE_WORKER", None)
    try:
        res = rehearse(with_monitoring=False, validate=True, base_dir=base, worker="local",
                       shape=make_shape(None, 1, 1, "scram-tls"))
        for st in res.steps:
            print(f"| {st.name} | {'ok' if st.ok else 'FAILED'} | {st.seconds} | {st.result} |")
        yield SimpleNamespace(res=res, env=LocalEnvironment(base), base=base)
    finally:
        LocalEnvironment(base).down(wipe=os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") != "1")


def test_rehearsal_with_the_local_worker_runs_every_step_to_a_match_both_ways(kraft_rehearsal):
    assert_every_step_to_a_match_both_ways_with_exact_cutovers(kraft_rehearsal.res)


def test_a_forgotten_producer_is_fenced_and_named_on_a_kraft_source(kraft_rehearsal):
    assert_forgotten_producer_fenced_and_named(kraft_rehearsal.res)
    forgotten_producer_is_fenced(kraft_rehearsal.env, "shop.events")


def test_fencing_without_the_alter_right_is_one_line_and_unfence_removes_exactly_the_fence(kraft_rehearsal):
    fence_as_mm2_is_refused_naming_alter(kraft_rehearsal.base, kraft_rehearsal.env)
    unfence_removes_exactly_the_fence(kraft_rehearsal.env, "shop.customers")

