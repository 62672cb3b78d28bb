"""The config fence: a topic setting under which no produce request can append, enforced by every broker for
every principal (super users included, and on a source without an authorizer).

The setting is ``max.message.bytes=0``: a broker refuses any record batch larger than the topic's
``max.message.bytes``, and a batch is never smaller than its 61-byte header (measured: 0 is the smallest value
a broker accepts, -1 is INVALID_CONFIG). Every client sees MESSAGE_TOO_LARGE (RecordTooLargeException), a
non-retriable error; the Java producer splits a refused batch of several records and sends each record alone,
which the broker refuses again. The check is on the append only: fetches of batches already in the log are
untouched (consumers and MirrorMaker 2 read on).

What it cannot do, measured (docs/design.md "The producer fence"):

- The transaction coordinator's commit/abort markers are batches too, refused like any other, and the
  coordinator treats that as fatal (IllegalStateException "Received fatal error RecordTooLargeException while
  sending txn marker"): the transaction hangs and the partition's last stable offset stays below its end
  even after the unfence. So the fence is refused while a transaction is open on a fenced partition (last
  stable offset below the end), and taken off again at once should one open while it went on.
- MirrorMaker 2 copies topic settings to the target (``sync.topic.configs.enabled``): a copied
  ``max.message.bytes=0`` would refuse MirrorMaker 2's own writes on the target. The fence is refused where
  the flow copies ``max.message.bytes`` (bad input naming the fix).

Invariants: each topic's previous setting (explicit value, or the default) is in the ledger before the topic
is changed, and the unfence restores exactly that (deletes the override when it was the default); both are
per topic and idempotent, so re-running either after a crash between two topics completes it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource

from ...access.admin import AdminSession
from ...access.offsets import end_offsets, last_stable_offsets, partitions
from ...errors import UsageError
from ...kafka.names import CONFIG_PROPERTIES_EXCLUDE_DEFAULT

KEY = "max.message.bytes"
VALUE = "0"
#: What ``--fence`` accepts.
MODES = ("auto", "acl", "config", "acl+config")


def describe(topic: str) -> str:
    return f"{KEY}={VALUE} on {topic}"


@dataclass
class ConfigFenceState:
    """What the config fence found and did on a wave's topics."""

    topics: list[str]
    fenced: list[str] = field(default_factory=list)  #: topics carrying the fence's setting now
    changed: list[str] = field(default_factory=list)  #: topics this call changed
    previous: dict[str, dict[str, Any]] = field(default_factory=dict)  #: topic -> the setting it had before
    open_transactions: list[str] = field(default_factory=list)  #: partitions with an open transaction (``t[p]``)


def _is_explicit(entry: Any) -> bool:
    src = getattr(entry, "source", None)
    return src in (ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DYNAMIC_TOPIC_CONFIG.value)


def settings(session: AdminSession, topics: list[str]) -> dict[str, dict[str, Any]]:
    """topic -> ``{"value": str, "explicit": bool}``: its ``max.message.bytes`` and whether it is the topic's own
    override (else the broker's default, deleted again at the unfence)."""
    out: dict[str, dict[str, Any]] = {}
    for t, cfg in session.describe_configs(ConfigResource.Type.TOPIC, topics).items():
        entry = cfg.get(KEY)
        if entry is None:
            raise session.error(f"describing the configuration of {t} failed (no {KEY} in the answer)")
        out[t] = {"value": str(entry.value), "explicit": _is_explicit(entry)}
    return out


def is_fence(setting: dict[str, Any] | None) -> bool:
    return bool(setting) and bool(setting.get("explicit")) and str(setting.get("value")) == VALUE  # type: ignore[union-attr]


def _code(exc: KafkaException) -> int | None:
    arg = exc.args[0] if exc.args else None
    return arg.code() if arg is not None and hasattr(arg, "code") else None


def _alter(session: AdminSession, ops: dict[str, tuple[str | None, Any]], validate_only: bool, what: str) -> None:
    """One IncrementalAlterConfigs of ``topic -> (value, op)``; a refusal of the principal is bad input."""
    if not ops:
        return
    res = [ConfigResource(ConfigResource.Type.TOPIC, t, incremental_configs=[ConfigEntry(KEY, v, incremental_operation=op)])
           for t, (v, op) in sorted(ops.items())]
    futs = session.admin.incremental_alter_configs(res, request_timeout=session.timeout, validate_only=validate_only)
    for r, fut in futs.items():
        try:
            fut.result(timeout=session.timeout + 5)
        except KafkaException as exc:
            if _code(exc) in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED):
                from ...access.secrets import operator_env_name
                from .fence import acting_as, principal_of

                who = principal_of(session)
                name = who if who.startswith("User:") else "<principal>"
                raise UsageError("--fence", f"the source refuses AlterConfigs on {r.name} to {who} (needed to {what}; "
                                 f"{acting_as(session)}); nothing was changed",
                                 f"grant it: kafka-acls.sh --bootstrap-server {session.bootstrap} --add --allow-principal {name} "
                                 f"--operation AlterConfigs --topic {r.name}, act as a principal that holds it (export "
                                 f"{operator_env_name(session.role, 'username')}/_PASSWORD), or fence with --fence acl") from None
            raise session.error(f"{what} ({r.name}) failed", exc) from None


def open_transactions(session: AdminSession, topics: list[str]) -> list[str]:
    """Partitions whose last stable offset is below their end: a transaction is open there."""
    tps = partitions(session, topics)
    ends, stable = end_offsets(session, tps), last_stable_offsets(session, tps)
    return [f"{t}[{p}]" for (t, p) in sorted(tps) if stable[(t, p)] < ends[(t, p)]]


def mm2_copies(migration: Any) -> str | None:
    """Why MirrorMaker 2 would copy the fence's setting to the target (None: it does not)."""
    if migration is None or not getattr(migration, "sync_topic_configs", False):
        return None
    excl = (getattr(migration, "connector_overrides", None) or {}).get("config.properties.exclude")
    patterns = [p.strip() for p in str(excl).split(",") if p.strip()] if excl is not None else \
        [re.escape(k) for k in CONFIG_PROPERTIES_EXCLUDE_DEFAULT]
    if any(re.fullmatch(p, KEY) for p in patterns):
        return None
    return (f"MirrorMaker 2 copies topic settings to the target (migration.sync_topic_configs: true, {KEY} not in "
            f"config.properties.exclude): the fence's {KEY}={VALUE} would reach the target within "
            f"{getattr(migration, 'sync_topic_configs_interval_seconds', 600)} s and refuse MirrorMaker 2's writes there")


def check_allowed(migration: Any) -> None:
    """Bad input where the config fence would change what MirrorMaker 2 does (see the module docstring)."""
    why = mm2_copies(migration)
    if why:
        raise UsageError("--fence", why + "; nothing was changed",
                         "add max\\.message\\.bytes to migration.connector_overrides config.properties.exclude (with Kafka's "
                         "defaults) once the target topics exist with their sizes, run `connectors apply`, then fence again; "
                         "or fence with --fence acl on a source with an authorizer")


def held_conflicts(topics: list[str], held: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> list[str]:
    """Topics whose setting the ledger holds from an earlier fence while the topic carries neither that setting
    nor the fence's: fencing again would record the wrong previous setting."""
    out = []
    for t in topics:
        h = held.get(t)
        if h and not is_fence(now[t]) and (now[t]["value"], now[t]["explicit"]) != (str(h["value"]), bool(h["explicit"])):
            out.append(t)
    return out


#: How long a change may take to show in the source's answers (a broker serves DescribeConfigs from its copy of the
#: metadata, which follows the controller's commit by a moment).
SHOW_TIMEOUT_S = 15.0


def _shown(session: AdminSession, want: dict[str, Callable[[dict[str, Any]], bool]], what: str) -> None:
    """Wait until the source answers every topic of ``want`` with a setting its check accepts: the fence and the
    unfence return only once the source shows what they did, so a reader right after sees it too."""
    deadline = time.monotonic() + SHOW_TIMEOUT_S
    while want:
        now = settings(session, sorted(want))
        want = {t: ok for t, ok in want.items() if not ok(now[t])}
        if not want:
            return
        if time.monotonic() > deadline:
            raise session.error(f"{what}: the source still shows the old {KEY} of {', '.join(sorted(want))} "
                                f"{SHOW_TIMEOUT_S:.0f} s after it accepted the change")
        time.sleep(0.1)


def put_on(session: AdminSession, topics: list[str]) -> list[str]:
    """Set the fence on each topic not carrying it yet, one topic per request (each applied on its own, so a crash
    leaves every topic either fenced or as it was); returns once the source shows it. Returns the topics changed."""
    now = settings(session, topics)
    changed = []
    for t in sorted(topics):
        if not is_fence(now[t]):
            _alter(session, {t: (VALUE, AlterConfigOpType.SET)}, False, "put the config fence on")
            changed.append(t)
    _shown(session, dict.fromkeys(changed, is_fence), "put the config fence on")
    return changed


def validate(session: AdminSession, topics: list[str]) -> None:
    """The fence as a dry run (validate_only): a principal the source refuses is bad input before any change."""
    _alter(session, {t: (VALUE, AlterConfigOpType.SET) for t in topics}, True, "put the config fence on")


def restore(session: AdminSession, held: dict[str, dict[str, Any]]) -> list[str]:
    """Give each topic of ``held`` back the setting recorded before the fence (the override deleted when it was the
    default); a topic already restored is left alone. Returns the topics changed."""
    now = settings(session, sorted(held))
    changed = []
    for t, h in sorted(held.items()):
        if _restored(now[t], h):
            continue
        explicit, value = bool(h.get("explicit")), str(h.get("value"))
        op = (value, AlterConfigOpType.SET) if explicit else (None, AlterConfigOpType.DELETE)
        _alter(session, {t: op}, False, "restore the topic's setting")
        changed.append(t)
    _shown(session, {t: partial(_restored, held=held[t]) for t in changed}, "restore the topic's setting")
    return changed


def _restored(now: dict[str, Any], held: dict[str, Any]) -> bool:
    """Whether the topic's setting ``now`` is the one ``held`` from before the fence (an explicit value, or the default)."""
    explicit = bool(held.get("explicit"))
    return bool(now["explicit"]) == explicit and (not explicit or now["value"] == str(held.get("value")))


def carriers(session: AdminSession, topics: list[str]) -> list[str]:
    """Topics carrying the fence's setting now."""
    return sorted(t for t, s in settings(session, topics).items() if is_fence(s))


def super_users_declared(session: AdminSession) -> bool | None:
    """Whether the source declares super users (they bypass any ACL). A broker answers DescribeConfigs with
    ``super.users`` as a sensitive entry without its value when it is set (measured on 3.9 KRaft), so who they are
    is unknown but that they exist is known; None when the principal may not read the broker's configuration."""
    try:
        desc = session.admin.describe_cluster(request_timeout=session.timeout).result(timeout=session.timeout + 5)
        broker = str(desc.nodes[0].id)
        cfg = session.describe_configs(ConfigResource.Type.BROKER, [broker])[broker]
    except (KafkaException, IndexError):
        return None
    if not cfg:
        return None
    entry = cfg.get("super.users")
    return entry is not None and (entry.value is None or str(entry.value).strip() != "")

