"""The pinned Kafka config keys equal what the Kafka jars on the Connect classpath define."""

from __future__ import annotations

import pytest

from msk_migrate.config.overrides import known_keys
from msk_migrate.local.config_keys import regenerate

pytestmark = pytest.mark.integration


def test_pinned_config_keys_match_the_kafka_jars_on_the_connect_classpath():
    live = regenerate()
    pinned = known_keys()
    for kind in ("producer", "consumer", "mirror_source"):
        assert live[kind] == pinned[kind], f"{kind} keys differ: run python -m msk_migrate.local.config_keys"
    assert live["kafka_version"] == pinned["kafka_version"]
