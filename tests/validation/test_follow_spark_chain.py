"""The follower's incremental logic as Spark batch jobs chained on the persisted mark (issue 34, "Spark stays the
engine at scale"): a chained run on local Spark reads exactly the records past the follower's mark on both real
clusters, advances it by the pairs it proved with the batch fingerprint, stops a partition at its first differing
record, and the follower resumes from the mark it wrote with nothing compared twice."""

from __future__ import annotations

import json

import pytest
from tests.kafka_helpers import Rec, create_topic, end_offsets, produce

from msk_migrate.commands.validate import run_cli
from msk_migrate.config.migration import ClusterEndpoint
from msk_migrate.validation.follow.follower import Clusters
from msk_migrate.validation.follow.spark_chain import chain_pass
from msk_migrate.validation.follow.store import MarkStore
from msk_migrate.validation.request import ValidationRequest

pytestmark = pytest.mark.spark


def _recs(prefix: str, partition: int, n: int, start: int = 0) -> list[Rec]:
    return [Rec(partition, f"{prefix}{i}".encode(), f"v{i}".encode(), (("h", str(i).encode()),)) for i in range(start, start + n)]


def _once(capfd, src: str, tgt: str, topic: str, mark) -> tuple[int, dict]:
    capfd.readouterr()
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(mark), "--once", "--output", "json"])
    out, err = capfd.readouterr()
    return code, (json.loads(out) if out.strip() else {"stderr": err})


def test_a_chained_spark_run_advances_the_mark_exactly_past_the_new_records_and_stops_at_a_difference(
        clusters, spark, uniq, tmp_path, capfd):
    src, tgt = clusters["source"], clusters["target"]
    topic = f"chain-{uniq}"
    for b in (src, tgt):
        create_topic(b, topic, partitions=2)
        produce(b, topic, _recs("a", 0, 150) + _recs("a", 1, 150))
    mark = tmp_path / "mark.json"
    code, doc = _once(capfd, src, tgt, topic, mark)
    assert code == 0 and {r["partition"]: r["compared"] for r in doc["rows"]} == {0: 150, 1: 150}, json.dumps(doc)

    # replication goes on: 250 new records per partition; the target's 101st new record of partition 1 differs
    produce(src, topic, _recs("b", 0, 250) + _recs("b", 1, 250))
    changed = _recs("b", 1, 250)
    changed[100] = Rec(1, changed[100].key, b"changed on the target", changed[100].headers)
    produce(tgt, topic, _recs("b", 0, 250) + changed)
    assert end_offsets(src, topic) == end_offsets(tgt, topic) == {0: 400, 1: 400}

    req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                            target=ClusterEndpoint(alias="target", bootstrap_servers=tgt), topics=[topic])
    cl = Clusters.open(req, "validate")
    facts = cl.facts()
    written, advanced = chain_pass(spark, MarkStore(str(mark)), facts, {"kafka.bootstrap.servers": src},
                                   {"kafka.bootstrap.servers": tgt})
    p0, p1 = written.partition(topic, 0), written.partition(topic, 1)
    # partition 0: exactly the 250 new pairs, from the mark to the end on both sides
    assert advanced[(topic, 0)].proven == 250 and (p0.source_next, p0.target_next, p0.compared) == (400, 400, 400)
    assert p0.state == "following"
    # partition 1: the 100 equal pairs before the difference, then stopped at it (source 250, target 250)
    assert advanced[(topic, 1)].proven == 100 and (p1.source_next, p1.target_next, p1.compared) == (250, 250, 250)
    assert p1.state == "mismatch" and p1.mismatch == {"category": "different", "source_offset": 250, "target_offset": 250}
    assert json.loads(mark.read_text())["topics"][topic]["partitions"]["0"]["compared"] == 400  # persisted

    # the follower resumes from the chained mark: nothing compared twice, the mismatch kept
    code, doc = _once(capfd, src, tgt, topic, mark)
    rows = {r["partition"]: r for r in doc["rows"]}
    assert code == 1 and rows[0]["proven_this_run"] == 0 and rows[0]["compared"] == 400, doc
    assert rows[1]["state"] == "mismatch" and rows[1]["compared"] == 250, doc


def test_validate_follow_once_engine_spark_is_one_chained_run_and_the_follower_resumes_from_its_mark(
        clusters, spark, uniq, tmp_path, capfd):
    """The operator's command for it: `validate --follow --once --engine spark` (each scheduled run starts from the
    mark the last one wrote); the follower (native) then resumes from that mark with nothing compared twice."""
    src, tgt = clusters["source"], clusters["target"]
    topic = f"chaincli-{uniq}"
    for b in (src, tgt):
        create_topic(b, topic, partitions=2)
        produce(b, topic, _recs("a", 0, 120) + _recs("a", 1, 80))
    mark = tmp_path / "mark.json"
    args = ["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
            "--mark", str(mark), "--once", "--output", "json"]
    capfd.readouterr()
    code = run_cli([*args, "--engine", "spark"])
    doc = json.loads(capfd.readouterr().out)
    assert code == 0 and doc["engine"] == "spark", doc
    assert {r["partition"]: (r["compared"], r["proven_this_run"]) for r in doc["rows"]} == {0: (120, 120), 1: (80, 80)}, doc
    for b in (src, tgt):
        produce(b, topic, _recs("b", 0, 30, 120))
    code = run_cli(args)  # the follower resumes from the chained mark
    rows = {r["partition"]: r for r in json.loads(capfd.readouterr().out)["rows"]}
    assert code == 0 and rows[0]["compared"] == 150 and rows[0]["proven_this_run"] == 30, rows
    assert rows[1]["compared"] == 80 and rows[1]["proven_this_run"] == 0, rows


def test_a_chained_spark_follower_is_one_run_per_start(capfd):
    args = ["--follow", "--source-bootstrap", "127.0.0.1:9", "--target-bootstrap", "127.0.0.1:9",
            "--topic", "t", "--engine", "spark"]
    assert run_cli(args) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--engine spark" in err[0] and "--once" in err[0]
    assert run_cli([*args, "--once", "--metrics-port", "0"]) == 2
    assert "--metrics-port" in capfd.readouterr().err
