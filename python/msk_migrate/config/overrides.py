"""Operator overrides of MM2's clients and connector, checked against Kafka's own config keys.

The known keys, with their types, defaults and validators, are **not typed here**: they are read from
``kafka_config_keys.json``, which ``io.mskmigrate.connect.ConfigKeys`` (jvm/connect-extensions) prints
from the ConfigDefs of the Kafka jars on the Connect classpath (``ProducerConfig``, ``ConsumerConfig``,
``MirrorSourceConnector.config()``), with the producer keys the worker's override policy allows
(``MirrorMakerOverridePolicy.PRODUCER_TUNING``). Regenerate it after a Kafka bump with
``python -m msk_migrate.local.config_keys`` (a developer tool, beside the classpath it reads); a test
compares it with the jars.

What an override may not do (refused with the reason and the fix):
  * change security or routing: ``security.protocol``, ``sasl.*``, ``ssl.*``, ``*.jaas.config``,
    ``bootstrap.servers``, serializers, client/transactional ids -- these come from ``source``/``target``;
  * shadow a first-class field (``isolation.level`` is ``migration.read_committed``, ``tasks.max`` is
    ``migration.tasks_max``...): one setting, one place;
  * set a size or count to zero or less.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path

KEYS_FILE = Path(__file__).with_name("kafka_config_keys.json")

#: Security and routing: never from an override, whatever the kind.
FORBIDDEN = [
    "security.protocol", "sasl.*", "ssl.*", "*.jaas.config", "bootstrap.servers", "*bootstrap.servers",
    "security.providers", "client.dns.lookup",
]
#: Per kind: keys that would break the byte-for-byte copy, the routing, or the worker's own bookkeeping.
FORBIDDEN_BY_KIND = {
    "producer": ["key.serializer", "value.serializer", "transactional.id", "client.id", "partitioner.class",
                 "interceptor.classes", "metric.reporters"],
    "consumer": ["key.deserializer", "value.deserializer", "group.id", "group.instance.id", "client.id",
                 "enable.auto.commit", "interceptor.classes", "metric.reporters", "auto.offset.reset"],
    "connector": ["name", "connector.class", "source.cluster.alias", "target.cluster.alias", "replication.policy.*",
                  "topic.filter.class", "topics.blacklist", "key.converter", "value.converter", "header.converter",
                  "offset-syncs.topic.location", "forwarding.admin.class", "metric.reporters", "enabled"],
}
#: Keys a first-class field owns: the field to set instead.
OWNED_BY_FIELD = {
    ("consumer", "isolation.level"): "migration.read_committed",
    ("producer", "enable.idempotence"): "migration.exactly_once (idempotence stays on; MM2 must not reorder)",
    ("connector", "tasks.max"): "migration.tasks_max",
    ("connector", "topics"): "migration.topics",
    ("connector", "topics.exclude"): "migration.topics_exclude",
    ("connector", "replication.factor"): "migration.replication_factor",
    ("connector", "offset-syncs.topic.replication.factor"): "migration.internal_replication_factor",
    ("connector", "sync.topic.configs.enabled"): "migration.sync_topic_configs",
    ("connector", "sync.topic.configs.interval.seconds"): "migration.sync_topic_configs_interval_seconds",
    ("connector", "refresh.topics.interval.seconds"): "migration.refresh_topics_interval_seconds",
    ("connector", "offset.lag.max"): "migration.offset_lag_max",
    ("connector", "emit.offset-syncs.enabled"): "migration.emit_offset_syncs",
    ("connector", "sync.topic.acls.enabled"): "nothing (ACLs are migrated explicitly; MSK IAM has none)",
}
#: Size/count keys whose ConfigDef allows 0 (or -1 = OS default) but a bulk copy never wants <= 0.
_SIZE = re.compile(r"(\.bytes|\.size|\.memory|\.records|max\.in\.flight\.requests\.per\.connection)$")
_SOCKET_BUFFERS = {"send.buffer.bytes", "receive.buffer.bytes"}  # -1 = OS default, documented by Kafka
_KIND_TABLE = {"producer": "producer", "consumer": "consumer", "connector": "mirror_source"}
_RANGE = re.compile(r"^\[(-?[\d.]+),(-?[\d.]+|\.\.\.)\]$")


#: Tuning profiles under the operator's overrides (``migration.tuning_profile``). ``bulk`` was chosen by
#: measurement (bench/replication_bench.py --sweep, docs/PERFORMANCE.md "Local replication (MM2)").
#: ``consumer_exactly_once`` goes over ``consumer`` when ``exactly_once`` with ``transaction_boundary: poll``:
#: there every task poll is one transaction (commit, markers, the offsets write), so larger polls mean fewer
#: of them. Measured: exactly-once 1.3-1.5x faster with 10,000-record polls, at-least-once not faster
#: (docs/PERFORMANCE.md "Local replication (MM2)").
PROFILES: dict[str, dict[str, dict[str, str]]] = {
    "bulk": {
        "producer": {"linger.ms": "20", "batch.size": "262144", "compression.type": "lz4"},
        "consumer": {"fetch.min.bytes": "65536", "fetch.max.wait.ms": "100", "max.poll.records": "2000",
                     "max.partition.fetch.bytes": "2097152"},
        "consumer_exactly_once": {"max.poll.records": "10000", "max.partition.fetch.bytes": "8388608"},
    },
    "kafka-defaults": {"producer": {}, "consumer": {}, "consumer_exactly_once": {}},
}


@functools.cache
def known_keys() -> dict:
    """The pinned key tables (see module doc) plus their provenance."""
    return json.loads(KEYS_FILE.read_text())


def _forbidden(kind: str, key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, p) for p in FORBIDDEN + FORBIDDEN_BY_KIND.get(kind, []))


def _close_matches(key: str, names: list[str]) -> str:
    import difflib

    near = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
    return f"did you mean {near[0]!r}?" if near else "see Kafka's documentation for the valid keys"


def check_value(kind: str, key: str, value: object, meta: Mapping) -> str:
    """Convert ``value`` to the string Connect takes, checking it against Kafka's type and validator."""
    typ, validator = meta["type"], meta.get("validator") or ""
    text = str(value).lower() if isinstance(value, bool) else str(value).strip()
    if typ in ("INT", "LONG", "SHORT"):
        if isinstance(value, bool) or not re.fullmatch(r"-?\d+", text):
            raise ValueError(f"{kind}_overrides.{key}={value!r} must be an integer")
        number: float = int(text)
    elif typ == "DOUBLE":
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{kind}_overrides.{key}={value!r} must be a number") from None
    elif typ == "BOOLEAN":
        if text not in ("true", "false"):
            raise ValueError(f"{kind}_overrides.{key}={value!r} must be true or false")
        return text
    else:
        m = re.fullmatch(r"\[(.*)\]", validator)
        if m and typ == "STRING" and "," in m.group(1) and "..." not in m.group(1):
            allowed = [a.strip() for a in m.group(1).split(",")]
            if text not in allowed and text.lower() not in allowed:
                raise ValueError(f"{kind}_overrides.{key}={value!r} is not one of {', '.join(allowed)}")
        return text
    if _SIZE.search(key) and number <= 0 and not (key in _SOCKET_BUFFERS and number == -1):
        raise ValueError(f"{kind}_overrides.{key}={value!r} must be a positive size")
    rng = _RANGE.match(validator.replace(" ", ""))
    if rng:
        lo = float(rng.group(1))
        hi = None if rng.group(2) == "..." else float(rng.group(2))
        if number < lo or (hi is not None and number > hi):
            raise ValueError(f"{kind}_overrides.{key}={value!r} is outside Kafka's range {validator}")
    return text


def check_overrides(kind: str, overrides: Mapping[str, object]) -> dict[str, str]:
    """Validate one kind ('producer', 'consumer', 'connector'); return string values. Raises ValueError."""
    table = known_keys()[_KIND_TABLE[kind]]
    out: dict[str, str] = {}
    for key, value in overrides.items():
        key = str(key).strip()
        if _forbidden(kind, key):
            raise ValueError(
                f"{kind}_overrides.{key} would change security or routing, which only source/target "
                f"(auth, bootstrap_servers) and the renderer set; remove it"
            )
        owner = OWNED_BY_FIELD.get((kind, key))
        if owner:
            raise ValueError(f"{kind}_overrides.{key} is a first-class setting; remove it and set {owner}")
        if key not in table:
            raise ValueError(
                f"{kind}_overrides.{key} is not a Kafka {kind} config key (Kafka {known_keys()['kafka_version']}); "
                + _close_matches(key, list(table))
            )
        allowed = known_keys()["producer_override_allowed"]
        if kind == "producer" and key not in allowed:
            raise ValueError(
                f"producer_overrides.{key} is not a tuning key; the worker's override policy "
                f"(MirrorMakerOverridePolicy) would refuse it at apply time; use one of: {', '.join(allowed)}"
            )
        if value is None:
            raise ValueError(f"{kind}_overrides.{key} has no value; give one or remove the key")
        out[key] = check_value(kind, key, value, table[key])
    return out
