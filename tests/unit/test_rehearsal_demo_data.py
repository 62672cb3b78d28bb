"""The rehearsal's demo data step rides out a fresh cluster's retriable answers and names what failed otherwise."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from msk_migrate.runbook import rehearse
from msk_migrate.runbook.rehearse import StepFailed, _retrying


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
