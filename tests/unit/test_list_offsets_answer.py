"""A ListOffsets round sent as calls of a few hundred partitions, each answered through one future
(access.admin): the answer reads as the public API's future per partition would — every partition keyed by (topic, partition), a partition's error raised as a
KafkaException the retry rule can judge, and never a partial answer taken for a whole one."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import ListOffsetsResultInfo

from msk_migrate.access.admin import _offsets_answer, _transient


def answered(*results: dict) -> list[Future]:
    """A round's calls, each answered."""
    futs = []
    for result in results:
        fut: Future = Future()
        fut.set_result(result)
        futs.append(fut)
    return futs


def test_every_partition_of_every_call_is_keyed_by_topic_and_partition_with_its_offset_and_timestamp():
    fut = answered({TopicPartition("a", 0, -1): ListOffsetsResultInfo(20, 1700, -1)},
                   {TopicPartition("a", 1, -1): ListOffsetsResultInfo(7, 1600, -1)})
    got = _offsets_answer(fut, 2, 1.0)
    assert {tp: (r.offset, r.timestamp) for tp, r in got.items()} == {("a", 0): (20, 1700), ("a", 1): (7, 1600)}


def test_a_partition_whose_leader_moved_raises_its_error_and_the_retry_rule_reads_it_as_transient():
    fut = answered({TopicPartition("a", 0, -1): ListOffsetsResultInfo(20, 1700, -1)},
                   {TopicPartition("a", 1, -1): KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)})
    with pytest.raises(KafkaException) as caught:
        _offsets_answer(fut, 2, 1.0)
    assert caught.value.args[0].code() == KafkaError.NOT_LEADER_FOR_PARTITION and _transient(caught.value.args[0])


def test_an_answer_missing_a_partition_fails_instead_of_leaving_it_out():
    fut = answered({TopicPartition("a", 0, -1): ListOffsetsResultInfo(20, 1700, -1)})
    with pytest.raises(KafkaException, match="answered 1 of 2 partitions"):
        _offsets_answer(fut, 2, 1.0)


def test_a_call_not_answered_in_time_is_a_timeout_not_a_hang():
    with pytest.raises(KafkaException) as caught:
        _offsets_answer([*answered({TopicPartition("a", 0, -1): ListOffsetsResultInfo(20, 1700, -1)}), Future()], 2, 0.05)
    assert caught.value.args[0].code() == KafkaError._TIMED_OUT
