"""The rehearsal's demo data step rides out a fresh cluster's retriable answers and names what failed otherwise."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from msk_migrate.rehearsal import demo as rehearse
from msk_migrate.rehearsal.demo import retrying as _retrying
from msk_migrate.rehearsal.result import StepFailed


def _raising(*errors: KafkaError):
    calls = {"n": 0}

    def call() -> str:
        calls["n"] += 1
        if calls["n"] <= len(errors):
            raise KafkaException(errors[calls["n"] - 1])
        return "done"

    return call, calls


def test_a_coordinator_still_loading_is_asked_again_until_it_answers(monkeypatch) -> None:
    monkeypatch.setattr(rehearse.time, "sleep", lambda s: None)
    call, calls = _raising(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS, "loading", retriable=True),
                           KafkaError(KafkaError.NOT_COORDINATOR, "Broker: Not coordinator"))
    assert _retrying("init transactions", call) == "done" and calls["n"] == 3


def test_a_non_retriable_error_fails_the_step_at_once_naming_what_was_done(monkeypatch) -> None:
    monkeypatch.setattr(rehearse.time, "sleep", lambda s: None)
    call, calls = _raising(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "Broker: Topic authorization failed"))
    with pytest.raises(StepFailed, match=r"^create the demo topics: Broker: Topic authorization failed$"):
        _retrying("create the demo topics", call)
    assert calls["n"] == 1


def test_retriable_errors_give_up_after_the_stated_attempts(monkeypatch) -> None:
    monkeypatch.setattr(rehearse.time, "sleep", lambda s: None)
    err = KafkaError(KafkaError.LEADER_NOT_AVAILABLE, "Broker: Leader not available", retriable=True)
    call, calls = _raising(*[err] * 10)
    with pytest.raises(StepFailed, match=r"shop\.orders end offsets: Broker: Leader not available"):
        _retrying("shop.orders end offsets", call, attempts=4)
    assert calls["n"] == 4


class _FakeTxnProducer:
    """Records the calls a transactional producer receives; ``end_errors`` are raised by commit/abort in turn."""

    def __init__(self, log: list[str], end_errors: list[KafkaError]) -> None:
        self.log, self.end_errors = log, end_errors

    def init_transactions(self, _timeout) -> None:
        self.log.append("init")

    def begin_transaction(self) -> None:
        self.log.append("begin")

    def produce(self, _topic, key=None, value=None, headers=None, on_delivery=None) -> None:
        self.log.append("produce")

    def flush(self, _timeout) -> int:
        self.log.append("flush")
        return 0

    def _end(self, name: str) -> None:
        self.log.append(name)
        if self.end_errors:
            raise KafkaException(self.end_errors.pop(0))

    def abort_transaction(self, _timeout) -> None:
        self._end("abort")

    def commit_transaction(self, _timeout) -> None:
        self._end("commit")


def test_each_transaction_is_flushed_before_it_ends_so_the_abort_finds_its_partitions() -> None:
    log: list[str] = []
    writer = rehearse.PaymentsWriter(lambda: _FakeTxnProducer(log, []))
    writer.batch(4, 2, abort=True)
    writer.batch(5, 1, abort=False)
    assert log == ["init", "begin", "produce", "produce", "flush", "abort", "begin", "produce", "flush", "commit"]


def test_an_abort_refused_as_invalid_state_restarts_the_producer_and_writes_the_batch_again() -> None:
    log: list[str] = []
    errors = [KafkaError(KafkaError.INVALID_TXN_STATE, "Failed to end transaction: Broker: Producer attempted a "
                         "transactional operation in an invalid state", fatal=True)]
    made = []

    def make() -> _FakeTxnProducer:
        made.append(1)
        return _FakeTxnProducer(log, errors)

    rehearse.PaymentsWriter(make).batch(4, 1, abort=True)
    assert len(made) == 2
    assert log == ["init", "begin", "produce", "flush", "abort", "init", "begin", "produce", "flush", "abort"]


def test_a_transaction_refused_every_time_fails_the_step_naming_the_batch() -> None:
    log: list[str] = []
    err = KafkaError(KafkaError.INVALID_TXN_STATE, "invalid state", fatal=True)
    writer = rehearse.PaymentsWriter(lambda: _FakeTxnProducer(log, [err] * 10))
    with pytest.raises(StepFailed, match=r"^transaction 7 to shop\.payments failed 5 times"):
        writer.batch(7, 1, abort=False)
