"""Moving producers on proof: the fence, the watch, the producer gate's "writes stopped" condition.

Here, on the session's shared source (Kafka 3.9 KRaft, plaintext, no authorizer): the fence cannot fence and
says so (never "fenced"), and detection names the partitions a forgotten producer keeps writing until it
stops. On sources with an authorizer (the 2.8 ZooKeeper SCRAM source's AclAuthorizer, the KRaft source's
StandardAuthorizer) the rehearsals fence a forgotten producer and name it (test_rehearsal.py,
test_rehearsal_zk_source.py call the helpers below on their environments, which are up anyway: no extra cluster).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from msk_migrate.access.admin import AdminSession, quiet
from msk_migrate.rehearsal.straggler import Straggler, straggler_config
from msk_migrate.runbook.producers import fence
from msk_migrate.runbook.producers.gate import check_writes
from msk_migrate.runbook.producers.watch import watch


def _topic(env, name: str, partitions: int = 3) -> None:
    admin = AdminClient(quiet(env.client_config("source")))
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(60)
    time.sleep(1)


def test_a_source_without_authorizer_cannot_be_fenced_and_detection_names_the_forgotten_producer(local_env, unique):
    topic = f"fence.{unique}"
    _topic(local_env, topic)
    source = AdminSession("source", local_env.client_config("source"))
    straggler = Straggler(straggler_config(local_env, [topic]), [topic]).start()
    try:
        assert straggler.wait_for_writes(60)
        st = fence.fence(source, [topic])
        assert not st.authorizer and not st.complete and st.fenced == [] and st.changed == []  # nothing written, never "fenced"
        cond, w, fenced = check_writes(source, source, [topic], None, 3.0, 8.0, lambda m: None)
        assert not cond.ok and not fenced
        named = {(m.topic, m.partition) for m in w.moved}
        assert named and named <= set(straggler.partitions()), (named, straggler.partitions())
        assert f"{topic}[" in cond.evidence and "describe-producers" in cond.evidence, cond.evidence
    finally:
        straggler.stop()
    # once it stopped: quiet for the period, and the evidence says detection only, not fenced
    cond, w, fenced = check_writes(source, source, [topic], None, 3.0, 30.0, lambda m: None)
    assert cond.ok and not fenced and "NOT fenced" in cond.evidence and w.quiet, cond.evidence


# ---- helpers for the rehearsals' environments (sources with an authorizer) ---------------------------------------
def assert_forgotten_producer_fenced_and_named(res) -> None:
    """The rehearsal's fence step: the gate named the forgotten producer's partitions, the fence refused its writes."""
    step = next(s for s in res.steps if s.name == "fence wave first")
    assert step.ok, step.result
    assert "the gate named shop.orders[" in step.result and "DENY User:* WRITE and max.message.bytes=0 on shop.orders" in step.result, step.result
    assert "TOPIC_AUTHORIZATION_FAILED" in step.result, step.result
    # the super user the DENY does not bind: refused by the config fence beside it
    assert "a super user (the DENY does not bind it) refused" in step.result and "MSG_SIZE_TOO_LARGE" in step.result, step.result
    gate = next(s for s in res.steps if s.name == "producer gate")
    assert gate.ok and "snapshot validation match" in gate.result, gate.result
    confirm = next(s for s in res.steps if s.name == "confirm producers moved")
    assert confirm.ok and "0 on the source since the fence" in confirm.result, confirm.result


def fence_as_mm2_is_refused_naming_alter(base, env) -> None:
    """`cutover fence --local` acts as MirrorMaker 2's user, which may not change ACLs: one line naming ALTER and the
    grant, exit 2, no ACL written."""
    cli = subprocess.run([sys.executable, "-m", "msk_migrate.commands", "cutover", "fence", "--local", "--wave", "second"],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "MSK_MIGRATE_LOCAL_ENV_DIR": str(base)})
    assert cli.returncode == 2, (cli.returncode, cli.stdout[-2000:], cli.stderr[-2000:])
    (line,) = [ln for ln in cli.stderr.splitlines() if ln.strip()]
    assert "User:mm2 lacks the ALTER" in line and "--operation Alter" in line and "Traceback" not in cli.stderr, line
    admin = AdminSession("source", env.client_config("source"))
    assert fence.state(admin, ["shop.events", "shop.customers", "shop.payments"]).fenced == []


def unfence_removes_exactly_the_fence(env, topic: str) -> None:
    """An operator's own DENY on the topic survives a fence/unfence cycle; the fence's ACL is gone."""
    admin = AdminSession("source", env.client_config("source"))
    own = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:someone", "*", AclOperation.WRITE,
                     AclPermissionType.DENY)
    for f in admin.admin.create_acls([own]).values():
        f.result(30)
    try:
        assert fence.fence(admin, [topic]).complete
        st = fence.unfence(admin, [topic])
        assert st.changed == [fence.describe(topic)] and st.fenced == []
        left = admin.admin.describe_acls(AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
                                                          AclOperation.ANY, AclPermissionType.ANY)).result(30)
        assert [(b.principal, b.permission_type.name) for b in left if b.operation == AclOperation.WRITE] == [("User:someone", "DENY")]
    finally:
        admin.admin.delete_acls([AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:someone", "*",
                                                  AclOperation.WRITE, AclPermissionType.DENY)])


def forgotten_producer_is_fenced(env, topic: str) -> None:
    """A non-super principal writing the topic is refused once the fence is on, and the watch stays quiet."""
    admin = AdminSession("source", env.client_config("source"))
    straggler = Straggler(straggler_config(env, [topic]), [topic]).start()
    try:
        assert straggler.wait_for_writes(60)
        assert fence.fence(admin, [topic]).complete
        w = watch(admin, [topic], 3.0, 30.0)
        assert w.quiet, w.summary()
        time.sleep(1)
        assert straggler.refused.get("TOPIC_AUTHORIZATION_FAILED"), (dict(straggler.refused), dict(straggler.delivered))
    finally:
        straggler.stop()
        fence.unfence(admin, [topic])
