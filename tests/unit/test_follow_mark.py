"""The proof mark model and its store: refusals of a mark that is not this follower's, truncation,
atomic writes (no server)."""

from __future__ import annotations

import json

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.validation.follow.mark import (
    ClusterFacts,
    Mark,
    PartitionMark,
    TopicFacts,
    add_missing,
    check_against,
    new_mark,
    truncate_passed,
)
from msk_migrate.validation.follow.store import MarkStore


def facts(src_id="SRC", tgt_id="TGT", parts=2, tgt_parts=2, start=0, s_end=100, t_end=100, topic_id="id-1",
          migration="m1") -> ClusterFacts:
    tf = TopicFacts("orders", parts, tgt_parts, topic_id, "tid-1", dict.fromkeys(range(parts), start),
                    dict.fromkeys(range(parts), s_end), dict.fromkeys(range(tgt_parts), t_end))
    return ClusterFacts(migration, src_id, tgt_id, {"orders": tf})


def started(f: ClusterFacts) -> Mark:
    m = new_mark(f)
    add_missing(m, f)
    return m


def test_a_new_mark_starts_every_partition_at_the_log_starts_with_nothing_compared():
    m = started(facts(start=7))
    assert [(tp, pm.source_next, pm.compared, pm.state) for tp, pm in m.items()] == [
        (("orders", 0), 7, 0, "following"), (("orders", 1), 7, 0, "following")]


def test_the_mark_round_trips_through_its_json_document():
    m = started(facts())
    m.partition("orders", 1).mismatch = {"category": "changed", "source_offset": 3}
    m.partition("orders", 1).state = "mismatch"
    again = Mark.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again.to_dict() == m.to_dict()


@pytest.mark.parametrize("change, words", [
    (dict(src_id="OTHER"), "another source cluster"),
    (dict(tgt_id="OTHER"), "another target cluster"),
    (dict(migration="m2"), "belongs to migration 'm1'"),
    (dict(parts=3, tgt_parts=2), "partition count changed on the source"),
    (dict(topic_id="id-2"), "recreated on the source"),
    (dict(s_end=5), "ahead of the source's end offset 5"),
    (dict(t_end=5), "ahead of the target's end offset 5"),
])
def test_a_mark_of_other_clusters_or_a_recreated_topic_is_refused_in_one_line(change, words):
    m = started(facts())
    for pm in m.topics["orders"].partitions.values():
        pm.source_next = pm.target_next = 10
    with pytest.raises(UsageError) as exc:
        check_against(m, facts(**change))
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert exc.value.field.startswith("--mark")


def test_a_topic_id_in_either_clients_spelling_is_the_same_topic():
    """confluent-kafka spells ids in standard base64, Kafka's Java admin (the Spark job) in URL-safe base64: a
    mark one started is the other's, and a different id is still refused."""
    m = started(facts(topic_id="D3JTYvy6QZq63+IPG0r9VQ"))
    check_against(m, facts(topic_id="D3JTYvy6QZq63-IPG0r9VQ"))
    with pytest.raises(UsageError, match="recreated on the source"):
        check_against(m, facts(topic_id="D3JTYvy6QZq63-IPG0r9VR"))


def test_retention_past_the_mark_makes_the_partition_truncated_never_a_match():
    m = started(facts())
    m.partition("orders", 0).source_next = 5
    m.partition("orders", 1).source_next = 50
    hit = truncate_passed(m, facts(start=20))
    assert hit == [("orders", 0)]
    assert m.partition("orders", 0).state == "truncated" and m.partition("orders", 0).source_log_start == 20
    assert m.partition("orders", 1).state == "following"


def test_the_store_writes_atomically_and_reads_back(tmp_path):
    st = MarkStore(str(tmp_path / "marks"))
    assert st.load() is None
    m = started(facts())
    m.partition("orders", 0).compared = 42
    st.save(m)
    assert str(st).endswith("proof-mark.json")
    assert st.load().partition("orders", 0).compared == 42  # type: ignore[union-attr]
    assert [p.name for p in (tmp_path / "marks").iterdir()] == ["proof-mark.json"]  # no temporary left behind


def test_a_document_that_is_not_a_mark_is_refused_and_left_as_it_is(tmp_path):
    p = tmp_path / "report.json"
    p.write_text('{"verdict": "match"}')
    with pytest.raises(UsageError) as exc:
        MarkStore(str(p)).load()
    assert "not a usable proof mark" in str(exc.value)
    assert p.read_text() == '{"verdict": "match"}'


def test_a_partition_mark_with_a_negative_offset_is_not_a_mark():
    with pytest.raises(ValueError):
        PartitionMark.from_dict({"source_next": -1, "target_next": 0}, "t[0]")
