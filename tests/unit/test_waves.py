"""Waves in the migration config: what is refused when the config loads, and which topics a wave holds."""

from __future__ import annotations

import pytest

from msk_migrate.config.loader import validate_model
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.config.migration_file import MigrationFile
from msk_migrate.config.waves import assign_waves, wave_topics
from msk_migrate.errors import UsageError

FLOW = {"source": {"alias": "source", "bootstrap_servers": "s:9092"}, "target": {"alias": "target", "bootstrap_servers": "t:9092"}}
SOURCE_TOPICS = ["orders", "orders.retry", "payments", "payments.dlq", "audit", "__consumer_offsets", "mm2-offsets.x.internal"]


def load(migration: dict) -> MigrationSpec:
    return validate_model(MigrationFile, {**FLOW, "migration": migration}, prefix="flow.yaml: ").migration


@pytest.mark.parametrize(("waves", "field", "words"), [
    ({"one": ["orders"], "two": ["orders"]}, "flow.yaml: migration.waves.one", "in wave 'one' and in wave 'two'"),
    ({"one": ["orders"], "two": ["ord.*"]}, "flow.yaml: migration.waves.one", "in wave 'one' and in wave 'two'"),
    ({"one": ["__consumer_offsets"]}, "flow.yaml: migration.waves.one", "outside the migration's selection"),
    ({"one two": ["orders"]}, "flow.yaml: migration.waves", "must match"),
    ({"one": []}, "flow.yaml: migration.waves", "names no topic"),
    ({"one": ["(orders"]}, "flow.yaml: migration.waves", "not a valid regex"),
])
def test_bad_waves_are_one_line_naming_the_field(waves, field, words):
    with pytest.raises(UsageError) as err:
        load({"waves": waves})
    assert err.value.field == field
    assert words in err.value.message


def test_a_topic_outside_a_narrowed_selection_is_refused():
    with pytest.raises(UsageError, match="'audit' of wave 'w' is outside"):
        load({"topics": ["orders.*", "payments.*"], "waves": {"w": ["audit"]}})


def test_wave_topics_are_the_selected_source_topics_of_that_wave():
    m = load({"waves": {"first": ["orders.*"], "second": ["payments", "payments\\.dlq"]}})
    assert wave_topics(m, SOURCE_TOPICS, "first") == ["orders", "orders.retry"]
    assert wave_topics(m, SOURCE_TOPICS, "second") == ["payments", "payments.dlq"]
    assert wave_topics(m, SOURCE_TOPICS, None) == ["audit", "orders", "orders.retry", "payments", "payments.dlq"]
    assert assign_waves(m, SOURCE_TOPICS)["audit"] is None


def test_an_unknown_wave_names_the_known_ones():
    m = load({"waves": {"first": ["orders"]}})
    with pytest.raises(UsageError) as err:
        wave_topics(m, SOURCE_TOPICS, "frist")
    assert err.value.field == "--wave" and "first" in err.value.message and err.value.fix == "pass one of: first"


def test_regexes_of_two_waves_matching_one_source_topic_are_refused():
    m = load({"waves": {"first": ["orders.*"], "second": [".*retry"]}})
    with pytest.raises(UsageError) as err:
        wave_topics(m, SOURCE_TOPICS, "first")
    assert err.value.field == "migration.waves.second" and "'orders.retry'" in err.value.message


def test_a_wave_entry_that_names_no_selected_source_topic_is_refused():
    m = load({"topics": ["orders.*", "payments"], "waves": {"first": ["orders"], "second": ["pay.*", "audit.*"]}})
    with pytest.raises(UsageError) as err:
        wave_topics(m, SOURCE_TOPICS, "second")
    assert err.value.field == "migration.waves.second" and "'audit.*' names no topic" in err.value.message
