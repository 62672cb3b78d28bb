"""The fence: DENY WRITE ACLs on a wave's topics on the source, for every principal.

One binding per topic: ``Topic:<name>`` (LITERAL), principal ``User:*``, host ``*``, operation ``WRITE``,
permission ``DENY``. A DENY outranks every ALLOW, so no producer that the authorizer checks can append to
the topic; the forward flow only reads the source, so replication keeps running. Super users
(``super.users``) bypass the authorizer entirely: a fence cannot stop them, and only the watch
(:mod:`.watch`) sees their writes.

Invariants:

- ``unfence`` deletes exactly the bindings ``fence`` creates (an exact filter per topic), never another ACL,
  so an operator's own DENY or ALLOW ACLs on those topics survive a fence/unfence cycle untouched.
- A source without an authorizer answers DescribeAcls with ``SECURITY_DISABLED`` (ZooKeeper brokers) or an empty
  list with ``authorizer.class.name`` empty in its configuration (KRaft brokers), and CreateAcls with
  ``SECURITY_DISABLED``: the fence says it cannot fence (:attr:`FenceState.authorizer` False) and nothing is
  written; it never reports "fenced".
- The principal that fences needs ``ALTER`` on the cluster (and ``DESCRIBE`` to read ACLs); without it the
  fence is bad input, checked before any ACL is written (nothing half-applied).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from ...access.admin import AdminSession
from ...errors import UsageError

#: Every principal, every host: the fence binds whoever writes.
PRINCIPAL, HOST = "User:*", "*"


def binding(topic: str) -> AclBinding:
    """The fence's one ACL on ``topic``."""
    return AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, PRINCIPAL, HOST,
                      AclOperation.WRITE, AclPermissionType.DENY)


def exact_filter(topic: str) -> AclBindingFilter:
    """A filter matching the fence's ACL on ``topic`` and nothing else (no ANY, no MATCH)."""
    return AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, PRINCIPAL, HOST,
                            AclOperation.WRITE, AclPermissionType.DENY)


def describe(topic: str) -> str:
    """The one-line spelling of the fence's ACL on ``topic``."""
    return f"DENY {PRINCIPAL} WRITE Topic:{topic} (host {HOST})"


@dataclass
class FenceState:
    """What the source holds for a wave's topics: whether it has an authorizer, and which topics carry the
    fence's ACL."""

    cluster: str  #: bootstrap servers of the source
    cluster_id: str | None
    authorizer: bool
    topics: list[str]
    fenced: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  #: ACLs this call created or deleted

    @property
    def complete(self) -> bool:
        """Every topic carries the fence (never true without an authorizer)."""
        return self.authorizer and set(self.topics) <= set(self.fenced)

    def rows(self) -> list[dict]:
        return [{"topic": t, "acl": describe(t), "fenced": t in self.fenced,
                 "changed": describe(t) in self.changed} for t in self.topics]


def _code(exc: KafkaException) -> int | None:
    arg = exc.args[0] if exc.args else None
    return arg.code() if arg is not None and hasattr(arg, "code") else None


def principal_of(session: AdminSession) -> str:
    """The principal the session acts as, as far as its settings say (SCRAM user name; else its role)."""
    user = session.conf.get("sasl.username")
    return f"User:{user}" if user else f"the {session.role} principal of this flow"


def acting_as(session: AdminSession) -> str:
    """Which principal the session acts as and where it came from (the exported operator principal or the flow's
    own), for a rights error."""
    from ...access.secrets import principal_origin

    return f"acting as {principal_of(session)}, {principal_origin(session.role, session.conf.get('sasl.username'))}"


def _missing_right(session: AdminSession, rights: tuple[str, ...], what: str) -> UsageError:
    from ...access.secrets import operator_env_name

    who = principal_of(session)
    name = who if who.startswith("User:") else "<principal>"
    ops = " ".join(f"--operation {r.title()}" for r in rights)
    return UsageError(f"{session.role} ACLs", f"{who} lacks the {' and '.join(rights)} right(s) on the cluster ({session.bootstrap}) "
                      f"needed to {what}; {acting_as(session)}",
                      f"grant them: kafka-acls.sh --bootstrap-server {session.bootstrap} --add --allow-principal {name} {ops} "
                      f"--cluster, or act as a principal that holds them: export {operator_env_name(session.role, 'username')}"
                      "/_PASSWORD (or _TLS_CERTIFICATE_CHAIN/_TLS_PRIVATE_KEY) on any flow kind")


def _present(session: AdminSession, topics: list[str]) -> tuple[bool, list[str]]:
    """(authorizer present, topics carrying the fence's ACL): one DescribeAcls per topic, in flight together."""
    futs = [(t, session.admin.describe_acls(exact_filter(t), request_timeout=session.timeout)) for t in topics]
    fenced: list[str] = []
    for t, fut in futs:
        try:
            found = fut.result(timeout=session.timeout + 5)
        except KafkaException as exc:
            code = _code(exc)
            if code == KafkaError.SECURITY_DISABLED:
                return False, []
            if code == KafkaError.CLUSTER_AUTHORIZATION_FAILED:
                raise _missing_right(session, ("DESCRIBE",), "read the fence's ACLs") from None
            raise session.error(f"describing the ACLs of {t} failed", exc) from None
        if found:
            fenced.append(t)
    if not fenced and session.broker_config("authorizer.class.name") == "":
        # A KRaft broker without an authorizer answers DescribeAcls with an empty list, not SECURITY_DISABLED;
        # its configuration says so (an empty answer: the principal may not read it, so no conclusion).
        return False, []
    return True, fenced


def _cluster_rights(session: AdminSession, need: tuple[str, ...], what: str) -> set[Any]:
    """The operations this principal may perform on the cluster (DescribeCluster's authorized operations).
    The broker answers them only to a principal holding DESCRIBE on the cluster; without it the fence's
    ACLs cannot be read either (DescribeAcls then answers an empty list, not an error): bad input naming
    ``need``, the rights ``what`` takes."""
    try:
        desc = session.admin.describe_cluster(include_authorized_operations=True,
                                              request_timeout=session.timeout).result(timeout=session.timeout + 5)
    except KafkaException as exc:
        raise session.error("describe cluster failed", exc) from None
    if not desc.authorized_operations:
        raise _missing_right(session, need, what)
    return set(desc.authorized_operations)


def state(session: AdminSession, topics: list[str], need: tuple[str, ...] = ("DESCRIBE",),
          what: str = "read the fence's ACLs") -> FenceState:
    """The fence as the source holds it now (writes nothing)."""
    authorizer, fenced = _present(session, sorted(topics))
    if authorizer:
        _cluster_rights(session, need, what)  # an empty answer proves nothing unless the principal may read ACLs
    return FenceState(str(session.bootstrap), session.cluster_id(), authorizer, sorted(topics), fenced)


def _require_alter(session: AdminSession, what: str) -> None:
    """ALTER on the cluster (what CreateAcls/DeleteAcls need), checked before anything is written."""
    if not ({AclOperation.ALTER, AclOperation.ALL} & _cluster_rights(session, ("ALTER", "DESCRIBE"), what)):
        raise _missing_right(session, ("ALTER",), what)


class _NoAuthorizer(Exception):
    """The broker has no authorizer (CreateAcls answered SECURITY_DISABLED)."""


def _check(futures: dict, session: AdminSession, what: str) -> None:
    for b, fut in futures.items():
        try:
            fut.result(timeout=session.timeout + 5)
        except KafkaException as exc:
            if _code(exc) == KafkaError.SECURITY_DISABLED:
                raise _NoAuthorizer() from None
            if _code(exc) == KafkaError.CLUSTER_AUTHORIZATION_FAILED:
                raise _missing_right(session, ("ALTER",), what) from None
            raise session.error(f"{what} failed ({b})", exc) from None


def fence(session: AdminSession, topics: list[str]) -> FenceState:
    """Put the fence on ``topics`` (idempotent: topics already fenced are left as they are)."""
    st = state(session, topics, ("ALTER", "DESCRIBE"), "fence the topics")
    if not st.authorizer:
        return st
    todo = [t for t in st.topics if t not in st.fenced]
    if todo:
        _require_alter(session, "fence the topics")
        try:
            _check(session.admin.create_acls([binding(t) for t in todo], request_timeout=session.timeout), session, "create the fence")
        except _NoAuthorizer:  # nothing was written: CreateAcls is refused as a whole
            st.authorizer = False
            return st
        st.changed = [describe(t) for t in todo]
        _await_visible(session, todo, present=True, what="the fence's ACLs")
        st.fenced = sorted(set(st.fenced) | set(todo))
    return st


#: Seconds a written or deleted fence ACL may take to show in DescribeAcls (a KRaft broker applies the
#: controller's ACL records asynchronously after CreateAcls/DeleteAcls answer).
VISIBLE_WITHIN_S = 30.0


def _await_visible(session: AdminSession, topics: list[str], present: bool, what: str) -> None:
    """Wait until DescribeAcls shows the fence on every one of ``topics`` (``present``) or on none of them, so
    a fence is reported only once the broker enforces it and an unfence only once it is gone."""
    deadline = time.monotonic() + VISIBLE_WITHIN_S
    while True:
        _, fenced = _present(session, topics)
        pending = [t for t in topics if (t in fenced) != present]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise session.error(f"{what} on {', '.join(pending)} {'not visible' if present else 'still visible'} "
                                f"after {VISIBLE_WITHIN_S:.0f}s", None)
        time.sleep(0.25)


def unfence(session: AdminSession, topics: list[str]) -> FenceState:
    """Delete the fence's ACLs of ``topics`` (exactly those; idempotent)."""
    st = state(session, topics, ("ALTER", "DESCRIBE"), "remove the fence")
    if not st.authorizer:
        return st
    _require_alter(session, "remove the fence")
    # Every topic's exact filter, not only the ones DescribeAcls showed: a fence written a moment ago may not
    # show yet on the broker answering, and deleting an absent ACL deletes nothing.
    futs = session.admin.delete_acls([exact_filter(t) for t in st.topics], request_timeout=session.timeout)
    deleted: list[str] = []
    for f, fut in futs.items():
        try:
            gone = fut.result(timeout=session.timeout + 5)
        except KafkaException as exc:
            if _code(exc) == KafkaError.CLUSTER_AUTHORIZATION_FAILED:
                raise _missing_right(session, ("ALTER",), "remove the fence") from None
            raise session.error(f"deleting the fence ({f}) failed", exc) from None
        deleted += [describe(b.name) for b in gone]
    _await_visible(session, st.topics, present=False, what="the fence's ACLs")
    st.changed = sorted(set(deleted))
    st.fenced = []
    return st
