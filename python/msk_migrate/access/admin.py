"""One AdminClient session per cluster, with one error contract.

Every failure to reach or ask the cluster becomes :class:`~msk_migrate.errors.UnreachableError` with
one line: ``<role>.bootstrap_servers (<servers>): <what>: <librdkafka's reason> (fix: ...)`` (exit 2 at
the CLI boundary). librdkafka's own log lines go to the ``msk_migrate.librdkafka`` logger, which is
silent unless the command runs with ``--verbose``.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, IsolationLevel, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec
from confluent_kafka.cimpl import _AdminClientImpl  # the binding AdminClient.list_offsets wraps: _list_offsets_round

from ..errors import UnreachableError
from ..kafka.topic_configs import TopicConfigs

TP = tuple[str, int]
__all__ = ["LIBRDKAFKA_LOG", "TP", "AdminSession", "TopicConfigs", "client_config", "quiet", "verbose"]
#: Attempts for requests that fail with a retriable error (leader elections, topics being created).
RETRIES = 6

#: librdkafka log lines land here (off the console unless --verbose adds a handler).
LIBRDKAFKA_LOG = logging.getLogger("msk_migrate.librdkafka")
LIBRDKAFKA_LOG.propagate = False
LIBRDKAFKA_LOG.addHandler(logging.NullHandler())


def verbose() -> bool:
    """librdkafka's lines are wanted: ``MSK_MIGRATE_VERBOSE=1``, or a ``--verbose`` gave
    :data:`LIBRDKAFKA_LOG` a real handler."""
    return os.environ.get("MSK_MIGRATE_VERBOSE") == "1" or any(
        not isinstance(h, logging.NullHandler) for h in LIBRDKAFKA_LOG.handlers
    )


def quiet(conf: dict[str, Any]) -> dict[str, Any]:
    """``conf`` with librdkafka's logging routed to :data:`LIBRDKAFKA_LOG`, and only errors logged at all
    (librdkafka writes some lines, e.g. at client destruction, straight to stderr). Failures still reach
    the session's ``error_cb``. :func:`verbose` lets every line through, written by librdkafka itself to
    stderr (a Python logger would only see them when the client is polled)."""
    if verbose():
        return {k: v for k, v in conf.items() if k != "logger"}
    return {**conf, "logger": LIBRDKAFKA_LOG, "log_level": 0}


def client_config(role: str, endpoint) -> dict[str, Any]:
    """librdkafka settings for a :class:`~msk_migrate.config.migration.ClusterEndpoint` (secrets resolved)."""
    from ..access.secrets import SecretResolver
    from .client_security import admin_config

    return admin_config(role, endpoint, SecretResolver())


def _transient(err: Any) -> bool:
    return bool(err.retriable()) or err.code() in (
        KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    )


#: Resources per DescribeConfigs call (1,000 topics of one broker: one call 0.28-0.32 s, calls of 100 all in
#: flight 0.16-0.21 s; the answers are the same entries either way).
CONFIGS_PER_CALL = 100

#: Partitions per ListOffsets call of a round. librdkafka's handling of one call grows faster than its size
#: (measured on 10,000 partitions of one broker: one call 0.8-1.0 s, calls of 250 all in flight 0.05-0.08 s).
OFFSETS_PER_CALL = 250


def _list_offsets_round(admin: AdminClient, req: list[TopicPartition], iso: Any, timeout: float) -> list[Future]:
    """One ListOffsets round: calls of :data:`OFFSETS_PER_CALL` partitions, all in flight together, each
    answered through ONE future whose result maps every ``TopicPartition`` (its ``offset`` the query: -1
    latest, -2 earliest, -3 max timestamp, else a timestamp) to a ``ListOffsetsResultInfo`` or a
    ``KafkaError``. Each call is the one ``AdminClient.list_offsets`` makes (confluent-kafka 2.11, pinned)
    minus its future per partition; the answers are the values the public API would give, so errors and
    retries read the same (a confluent-kafka without this binding fails at import, not at a cutover)."""
    futs: list[Future] = []
    for i in range(0, len(req), OFFSETS_PER_CALL):
        fut: Future = Future()
        fut.set_running_or_notify_cancel()
        _AdminClientImpl.list_offsets(admin, req[i:i + OFFSETS_PER_CALL], fut, isolation_level_value=iso.value,
                                      request_timeout=timeout)
        futs.append(fut)
    return futs


def _offsets_answer(futs: list[Future], asked: int, timeout: float) -> dict[TP, Any]:
    """(topic, partition) -> ``ListOffsetsResultInfo`` of a round; the first partition's error raised as
    ``KafkaException`` (as the public API's future of that partition would), and so is an answer that
    leaves a partition out."""
    deadline = time.monotonic() + timeout
    out: dict[TP, Any] = {}
    for fut in futs:
        try:
            answers = fut.result(timeout=max(deadline - time.monotonic(), 0))
        except FutureTimeout:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "ListOffsets answered nothing in time")) from None
        for tp, r in answers.items():
            if isinstance(r, KafkaError):
                raise KafkaException(r)
            out[(tp.topic, tp.partition)] = r
    if len(out) != asked:
        raise KafkaException(KafkaError(KafkaError._FAIL, f"ListOffsets answered {len(out)} of {asked} partitions"))
    return out


class AdminSession:
    """One cluster's AdminClient. ``conf`` is a librdkafka configuration (see :func:`client_config`)."""

    def __init__(self, role: str, conf: dict[str, Any], timeout: float = 15.0, fix: str | None = None):
        self.role = role
        self.timeout = timeout
        self.bootstrap = conf.get("bootstrap.servers")
        self.fix = fix or f"check the {role} cluster's host:port, the network path and its auth settings"
        self._errors: list[str] = []
        self.conf = dict(conf)
        self.conf.setdefault("error_cb", lambda err: self._errors.append(err.str() if hasattr(err, "str") else str(err)))
        self.conf.setdefault("socket.connection.setup.timeout.ms", int(min(timeout, 30) * 1000))
        self.admin = AdminClient(quiet(self.conf))
        self._topics: dict[str, int] | None = None

    @classmethod
    def for_endpoint(cls, role: str, endpoint, timeout: float = 15.0) -> AdminSession:
        """A session that has proven it reaches the cluster (metadata within ``timeout``)."""
        session = cls(role, client_config(role, endpoint), timeout)
        session.topics()
        return session

    # ---- the error contract -------------------------------------------------------------------
    def error(self, what: str, exc: BaseException | None = None) -> UnreachableError:
        detail = ""
        if isinstance(exc, KafkaException) and exc.args:
            arg = exc.args[0]
            detail = arg.str() if hasattr(arg, "str") else str(arg)
        elif exc is not None:
            detail = str(exc)
        if self._errors:
            detail = self._errors[-1]
        return UnreachableError(
            f"{self.role}.bootstrap_servers ({self.bootstrap}): {what}: {detail or 'no response'} (fix: {self.fix})"
        )

    def _result(self, what: str, fut: Any) -> Any:
        try:
            return fut.result(timeout=self.timeout + 5)
        except KafkaException as exc:
            raise self.error(what, exc) from None

    def consumer_config(self, group_id: str, **extra: Any) -> dict[str, Any]:
        """Settings for a Consumer on the same cluster with the same credentials."""
        conf = {k: v for k, v in self.conf.items() if k not in ("error_cb",)}
        conf.update({"group.id": group_id, "enable.auto.commit": False, **extra})
        return quiet(conf)

    # ---- metadata -----------------------------------------------------------------------------
    def topics(self, refresh: bool = False) -> dict[str, int]:
        """Topic -> partition count."""
        if self._topics is None or refresh:
            try:
                md = self.admin.list_topics(timeout=self.timeout)
            except KafkaException as exc:
                raise self.error(f"cluster unreachable within {self.timeout:.0f}s", exc) from None
            if not md.brokers:
                raise self.error("no broker answered")
            self._topics = {name: len(t.partitions) for name, t in md.topics.items() if t.error is None}
        return self._topics

    def cluster_id(self) -> str | None:
        """The cluster's id (DescribeCluster): what a recorded environment and a validation report name."""
        return self._result("describe cluster failed", self.admin.describe_cluster(request_timeout=self.timeout)).cluster_id

    def broker_count(self) -> int:
        return len(self._result("describe cluster failed", self.admin.describe_cluster(request_timeout=self.timeout)).nodes)

    def broker_config(self, key: str) -> str | None:
        """``key`` of one broker (the controller's view); None when the cluster does not say."""
        desc = self._result("describe cluster failed", self.admin.describe_cluster(request_timeout=self.timeout))
        broker = str(desc.nodes[0].id)
        entry = self.describe_configs(ConfigResource.Type.BROKER, [broker])[broker].get(key)
        return entry.value if entry else None

    def _describe(self, rtype: Any, names: list[str]) -> dict[Any, Any]:
        """DescribeConfigs of ``names`` in calls of :data:`CONFIGS_PER_CALL`, all in flight together:
        resource -> its future, in the order of ``names``."""
        futures: dict[Any, Any] = {}
        for i in range(0, len(names), CONFIGS_PER_CALL):
            futures.update(self.admin.describe_configs([ConfigResource(rtype, n) for n in names[i:i + CONFIGS_PER_CALL]],
                                                       request_timeout=self.timeout))
        return futures

    def describe_configs(self, rtype: Any, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Config entries (confluent-kafka ``ConfigEntry``) of many resources of one ``ConfigResource.Type``:
        one DescribeConfigs call, every answer awaited together; {} for a resource the cluster refuses."""
        return self.submit_configs(rtype, names)()

    def submit_configs(self, rtype: Any, names: Iterable[str]) -> Callable[[], dict[str, dict[str, Any]]]:
        """Send :meth:`describe_configs`'s call now and return a function that waits for its answers (so
        both clusters' calls are in flight together)."""
        names = list(names)
        if not names:
            return dict
        futures = self._describe(rtype, names)

        def wait() -> dict[str, dict[str, Any]]:
            out: dict[str, dict[str, Any]] = {}
            for res, fut in futures.items():
                try:
                    out[res.name] = fut.result(timeout=self.timeout + 5)
                except KafkaException:
                    out[res.name] = {}
            return {n: out.get(n, {}) for n in names}

        return wait

    def topic_configs(self, names: Iterable[str]) -> dict[str, TopicConfigs]:
        names = [n for n in names if n in self.topics()]
        if not names:
            return {}
        futures = self._describe(ConfigResource.Type.TOPIC, names)
        out: dict[str, TopicConfigs] = {}
        for res, fut in futures.items():
            meta = TopicConfigs(res.name, self.topics()[res.name])
            for name, entry in self._result(f"describe configs of {res.name} failed", fut).items():
                value = entry.value if entry.value is not None else ""
                meta.configs[name] = value
                if entry.source in (ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DYNAMIC_TOPIC_CONFIG.value):
                    meta.overrides[name] = value
            out[res.name] = meta
        return out

    # ---- offsets --------------------------------------------------------------------------------
    def list_offsets(self, specs: dict[TP, OffsetSpec], isolation_level: str = "read_committed") -> dict[TP, Any]:
        """One ListOffsets round; values are confluent-kafka results (``.offset``, ``.timestamp``)."""
        return self.submit_offsets(specs, isolation_level)()

    def submit_offsets(self, specs: dict[TP, OffsetSpec], isolation_level: str = "read_committed") -> Callable[[], dict[TP, Any]]:
        """Send one ListOffsets round now and return a function that waits for its answer, so rounds on
        several clusters or of several kinds are in flight together. A transient error (a leader moving,
        a topic just created: NOT_LEADER, LEADER_NOT_AVAILABLE) asks again, up to ``RETRIES`` times.

        The round is a few calls of :data:`OFFSETS_PER_CALL` partitions with one future each
        (:func:`_list_offsets_round`), not the public API's one call with a future per partition: at 10,000
        partitions, making and completing those futures cost more than the round trip, and one call of
        them all takes librdkafka ten times as long as the calls in pieces."""
        if not specs:
            return dict
        iso = IsolationLevel.READ_COMMITTED if isolation_level == "read_committed" else IsolationLevel.READ_UNCOMMITTED
        req = [TopicPartition(t, p, spec._value) for (t, p), spec in specs.items()]
        if self._topics is None:  # a client without metadata yet: its calls' leader lookups stall (measured: 3 s)
            self.topics()

        def send() -> Any:
            try:
                return _list_offsets_round(self.admin, req, iso, self.timeout)
            except KafkaException as exc:
                return exc

        first = send()

        def wait() -> dict[TP, Any]:
            sent = first
            for attempt in range(RETRIES):
                try:
                    if isinstance(sent, KafkaException):
                        raise sent
                    return _offsets_answer(sent, len(req), self.timeout + 5)
                except KafkaException as exc:
                    if attempt + 1 < RETRIES and exc.args and _transient(exc.args[0]):
                        time.sleep(0.5 * (attempt + 1))
                        sent = send()
                        continue
                    raise self.error("listing offsets failed", exc) from None
            raise AssertionError("unreachable")

        return wait

    # ---- consumer groups ------------------------------------------------------------------------
    def groups(self) -> list[str]:
        listed = self._result("listing consumer groups failed", self.admin.list_consumer_groups(request_timeout=self.timeout))
        return sorted(g.group_id for g in listed.valid)

    def group_members(self, group: str) -> list[str]:
        """Client ids of the group's live members (empty = inactive)."""
        fut = self.admin.describe_consumer_groups([group], request_timeout=self.timeout)[group]
        desc = self._result(f"describing group {group} failed", fut)
        return [f"{m.client_id}@{m.host}" for m in desc.members]

    def committed(self, group: str) -> dict[TP, int]:
        fut = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout)[group]
        res = self._result(f"listing offsets of group {group} failed", fut)
        return {(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0}

    def committed_many(self, groups: Iterable[str], window: int = 64) -> Iterator[tuple[str, dict[TP, int]]]:
        """(group, committed offsets) for each of ``groups``, in order, with up to ``window`` OffsetFetch
        requests in flight (librdkafka takes one group per request; waiting for each in turn costs a
        round trip per group). A generator, and lazy in ``groups`` too: a name is taken only when a request
        slot is free, so ``groups`` may itself be fed by another cluster's answers as they arrive."""
        names = iter(groups)
        pending: deque[tuple[str, Any]] = deque()
        more = True
        while more or pending:
            while more and len(pending) < window:
                g = next(names, None)
                if g is None:
                    more = False
                    break
                fut = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)], request_timeout=self.timeout)[g]
                pending.append((g, fut))
            if not pending:
                break
            g, fut = pending.popleft()
            res = self._result(f"listing offsets of group {g} failed", fut)
            yield g, {(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0}

    def group_members_many(self, groups: list[str]) -> dict[str, list[str]]:
        """:meth:`group_members` of several groups in one DescribeGroups round."""
        if not groups:
            return {}
        futs = self.admin.describe_consumer_groups(list(groups), request_timeout=self.timeout)
        return {g: [f"{m.client_id}@{m.host}" for m in self._result(f"describing group {g} failed", f).members]
                for g, f in futs.items()}

    def alter_committed(self, group: str, offsets: dict[TP, int]) -> None:
        tps = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
        fut = self.admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)],
                                                      request_timeout=self.timeout)[group]
        self._result(f"writing offsets of group {group} failed", fut)

    # ---- deletion (cleanup) -----------------------------------------------------------------------
    def delete_topics(self, names: list[str]) -> None:
        if names:
            for name, fut in self.admin.delete_topics(names, operation_timeout=self.timeout).items():
                self._result(f"deleting topic {name} failed", fut)
            self._topics = None

    def delete_groups(self, names: list[str]) -> None:
        if names:
            for name, fut in self.admin.delete_consumer_groups(names, request_timeout=self.timeout).items():
                self._result(f"deleting group {name} failed", fut)
