"""The follower on a transactional source: librdkafka's read_committed consumer signals a partition's end before
the transaction markers and aborted records at its tail, so a mark that trusts that end stays short of the last
stable offset forever (proof lag 1+ record on every idle transactional partition, a producer gate waiting for the
fenced end in vain). The follower proves the tail holds nothing deliverable and moves its mark to the end."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Producer
from tests.kafka_helpers import BASE_TS, Rec, create_topic, end_offsets, produce

from msk_migrate.commands.validate import run_cli

pytestmark = pytest.mark.kafka


def _txn(bootstrap: str, topic: str, values: list[bytes], abort: bool, tid: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    p.init_transactions(30)
    p.begin_transaction()
    for v in values:
        p.produce(topic, key=v, value=v, partition=0, timestamp=BASE_TS)
    p.flush(30)  # written before the end of the transaction (an abort purges what was not sent)
    (p.abort_transaction if abort else p.commit_transaction)(30)


def test_the_mark_reaches_the_end_past_a_tail_of_markers_and_aborted_records_and_nothing_more(clusters, uniq, tmp_path, capfd):
    src, tgt = clusters["source"], clusters["target"]
    topic = f"txn-{uniq}"
    create_topic(src, topic, partitions=1)
    create_topic(tgt, topic, partitions=1)
    committed = [b"c%d" % i for i in range(5)]
    _txn(src, topic, committed, abort=False, tid=f"a-{uniq}")              # offsets 0-4, commit marker 5
    _txn(src, topic, [b"x%d" % i for i in range(3)], abort=True, tid=f"b-{uniq}")  # aborted 6-8, abort marker 9
    produce(tgt, topic, [Rec(0, v, v, (), BASE_TS) for v in committed])  # what MM2 copies: the 5 committed
    assert end_offsets(src, topic) == {0: 10} and end_offsets(tgt, topic) == {0: 5}

    mark = tmp_path / "mark.json"
    capfd.readouterr()
    t0 = time.monotonic()
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(mark), "--once", "--output", "json"])
    took = time.monotonic() - t0
    out, err = capfd.readouterr()
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    # every committed record proven once, the mark at the last stable offset on both sides, no proof lag
    assert (row["compared"], row["source_verified_up_to"], row["target_verified_up_to"]) == (5, 10, 5), row
    assert row["lag_records"] == 0 and row["state"] == "following", row
    assert took < 45, f"one pass took {took:.0f} s: the tail was waited on, not proven"

    # the source ends (a commit marker last) while its records still wait for the target: once the target has
    # them, the mark moves past the marker, though librdkafka signalled the source's end only once, earlier
    _txn(src, topic, [b"d%d" % i for i in range(4)], abort=False, tid=f"d-{uniq}")  # offsets 10-13, marker 14
    produce(tgt, topic, [Rec(0, b"d0", b"d0", (), BASE_TS)])
    capfd.readouterr()
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(mark), "--once", "--output", "json"])
    out, err = capfd.readouterr()
    (row,) = json.loads(out)["rows"]
    assert code == 0 and (row["compared"], row["source_verified_up_to"]) == (6, 11), (row, err)
    produce(tgt, topic, [Rec(0, v, v, (), BASE_TS) for v in (b"d1", b"d2", b"d3")])
    capfd.readouterr()
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(mark), "--once", "--output", "json"])
    out, err = capfd.readouterr()
    (row,) = json.loads(out)["rows"]
    assert code == 0 and (row["compared"], row["proven_this_run"]) == (9, 3), (row, err)
    assert (row["source_verified_up_to"], row["target_verified_up_to"], row["lag_records"]) == (15, 9, 0), row

    # a record committed after the tail is compared, from the end of the tail (nothing skipped, nothing twice)
    _txn(src, topic, [b"late"], abort=False, tid=f"c-{uniq}")               # offset 15, commit marker 16
    produce(tgt, topic, [Rec(0, b"late", b"late", (), BASE_TS)])
    capfd.readouterr()
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(mark), "--once", "--output", "json"])
    out, err = capfd.readouterr()
    (row,) = json.loads(out)["rows"]
    assert code == 0 and (row["compared"], row["proven_this_run"]) == (10, 1), (row, err)
    assert (row["source_verified_up_to"], row["target_verified_up_to"], row["lag_records"]) == (17, 10, 0), row


def test_a_source_that_ended_while_its_records_waited_for_the_target_gets_its_mark_past_the_marker(clusters, uniq, tmp_path):
    """One follower process, two passes: the source's end (a commit marker last) is signalled in the first, while
    its records wait for the target; the target gets them in the second. The mark reaches the source's end, and the
    pass does not wait out its deadline for an end signal that never comes again."""
    from msk_migrate.config.migration import ClusterEndpoint
    from msk_migrate.validation.follow.cluster_facts import prepare
    from msk_migrate.validation.follow.follower import Clusters, Follower, FollowOptions
    from msk_migrate.validation.follow.store import MarkStore
    from msk_migrate.validation.request import ValidationRequest

    src, tgt = clusters["source"], clusters["target"]
    topic = f"txn2-{uniq}"
    create_topic(src, topic, partitions=1)
    create_topic(tgt, topic, partitions=1)
    values = [b"p%d" % i for i in range(4)]
    _txn(src, topic, values, abort=False, tid=f"e-{uniq}")  # offsets 0-3, commit marker 4
    produce(tgt, topic, [Rec(0, values[0], values[0], (), BASE_TS)])
    req = ValidationRequest(source=ClusterEndpoint(alias="source", bootstrap_servers=src),
                            target=ClusterEndpoint(alias="target", bootstrap_servers=tgt), topics=[topic])
    cl = Clusters.open(req, "validate")
    store = MarkStore(str(tmp_path / "mark.json"))
    facts = cl.facts()
    mark, _ = prepare(store, facts)
    f = Follower(cl, store, mark, FollowOptions(mark=str(store), migration="validate"))
    try:
        f.assign()
        f.run_pass(facts, time.monotonic() + 20)
        pm = mark.partition(topic, 0)
        assert (pm.compared, pm.source_next) == (1, 1), pm  # three source records wait for the target
        produce(tgt, topic, [Rec(0, v, v, (), BASE_TS) for v in values[1:]])
        t0 = time.monotonic()
        f.run_pass(cl.latest(facts), time.monotonic() + 20)
        took = time.monotonic() - t0
    finally:
        f.close()
    assert (pm.compared, pm.source_next, pm.target_next) == (4, 5, 4), pm
    assert took < 10, f"the second pass took {took:.0f} s: it waited for an end already signalled"


def test_a_follower_run_inside_a_longer_process_gives_back_its_signal_handlers(clusters, uniq, tmp_path, monkeypatch):
    """Without --once the follower takes SIGTERM and SIGINT to stop at a pass's end; run in process (the rehearsal,
    a test), it hands the caller's own handlers back however it stops: here the first assignment fails."""
    import signal

    from msk_migrate.validation.follow import follower as follower_module

    src, tgt = clusters["source"], clusters["target"]
    topic = f"sig-{uniq}"
    create_topic(src, topic, partitions=1)
    create_topic(tgt, topic, partitions=1)

    def refuse(_self):
        raise RuntimeError("assignment refused by the test")

    monkeypatch.setattr(follower_module.Follower, "assign", refuse)
    term, intr = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    code = run_cli(["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic,
                    "--mark", str(tmp_path / "mark.json")])
    assert code != 0  # the refusal ended it
    assert signal.getsignal(signal.SIGTERM) is term and signal.getsignal(signal.SIGINT) is intr
