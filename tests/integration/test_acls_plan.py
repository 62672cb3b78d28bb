"""``msk-migrate acls plan`` against REAL ACLs: a KRaft broker with SCRAM over TLS and the ACL authorizer on
(StandardAuthorizer), ACLs created through the AdminClient, the plan read by the CLI as a SCRAM super user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from msk_migrate import versions
from msk_migrate.cliutil import json_shape_problems
from msk_migrate.local.broker import BrokerSecurity, BrokerSpec, start_broker, wait_broker_ready
from msk_migrate.local.classpath import classpath
from msk_migrate.local.procs import stop
from msk_migrate.paths import LOCAL_DIR

from .pki import ThrowawayCA

RUN = uuid.uuid4().hex[:6]
ARN = "arn:aws:kafka:eu-west-1:111111111111:cluster/msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"
BASE = "arn:aws:kafka:eu-west-1:111111111111"
PATH = "msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"


@pytest.fixture(scope="module")
def acl_source():
    base = LOCAL_DIR / "test-env" / f"acls-{os.getpid()}-{RUN}"
    base.mkdir(parents=True, exist_ok=True)
    ca = ThrowawayCA()
    (base / "ca.pem").write_text(ca.pem)
    password = uuid.uuid4().hex
    security = BrokerSecurity(
        ca_pem=base / "ca.pem",
        keystore_pem=ca.write_keystore_pem(ca.issue("localhost", server=True), base / "broker-keystore.pem"),
        scram_users={"admin": password, "orders-app": uuid.uuid4().hex, "idle": uuid.uuid4().hex},
        super_users=("User:ANONYMOUS", "User:admin"),
    )
    spec = BrokerSpec("source", versions.kafka_target_version(), classpath("kafka-target"), base / "source",
                      auto_create_topics=False, security=security)
    rec, port = start_broker(spec)
    try:
        wait_broker_ready(rec, port)
        # The PLAINTEXT listener's User:ANONYMOUS is a super user: it writes the applications' ACLs.
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 0})
        T, G, C, X = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.BROKER, ResourceType.TRANSACTIONAL_ID
        LIT, PRE = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
        ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
        acls = [
            AclBinding(T, "orders.", PRE, "User:orders-app", "*", AclOperation.READ, ALLOW),
            AclBinding(T, "orders.created", LIT, "User:orders-app", "*", AclOperation.WRITE, ALLOW),
            AclBinding(G, "orders-billing", LIT, "User:orders-app", "*", AclOperation.READ, ALLOW),
            AclBinding(X, "orders-tx", LIT, "User:orders-app", "*", AclOperation.WRITE, ALLOW),
            AclBinding(C, "kafka-cluster", LIT, "User:orders-app", "*", AclOperation.IDEMPOTENT_WRITE, ALLOW),
            AclBinding(T, "orders.audit", LIT, "User:orders-app", "*", AclOperation.READ, DENY),
            AclBinding(T, "public.", PRE, "User:*", "*", AclOperation.READ, ALLOW),
            AclBinding(T, "ops", LIT, "User:orders-app", "10.1.2.3", AclOperation.READ, ALLOW),
        ]
        for fut in admin.create_acls(acls, request_timeout=30).values():
            fut.result(timeout=60)
        del admin
        yield {"base": base, "ca": ca, "password": password, "port": spec.ports["SASL_SSL"]}
    finally:
        stop(rec)
        shutil.rmtree(base, ignore_errors=True)


def _flow(tmp_path, port: int) -> str:
    flow = tmp_path / "flow.yaml"
    flow.write_text(f"""\
source:
  alias: source
  bootstrap_servers: 127.0.0.1:{port}
  auth: {{mode: scram, secrets_from: env}}
target:
  alias: target
  bootstrap_servers: 127.0.0.1:9
  auth: {{mode: plaintext}}
""")
    return str(flow)


def _cli(src, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MM2_SOURCE_SASL_USERNAME": "admin", "MM2_SOURCE_SASL_PASSWORD": src["password"],
           "MM2_SOURCE_TLS_CA": src["ca"].pem}
    return subprocess.run([sys.executable, "-m", "msk_migrate.commands", *args], capture_output=True, text=True, timeout=180, env=env)


def test_acls_plan_turns_the_real_acls_of_a_scram_source_into_iam_policies(acl_source, tmp_path) -> None:
    out = tmp_path / "acls"
    res = _cli(acl_source, "acls", "plan", "--config", _flow(tmp_path, acl_source["port"]), "--cluster-arn", ARN,
               "--out-dir", str(out), "--output", "json")
    assert res.returncode == 1, res.stdout + res.stderr  # findings to review: the DENY, User:*, the host ACL
    doc = json.loads(res.stdout)
    assert json_shape_problems(doc) == [] and doc["verdict"] == "review" and doc["exit_code"] == 1
    assert doc["talked_to"]["source"] == f"127.0.0.1:{acl_source['port']}" and doc["acls"] == 8
    assert doc["scram_users"] == ["admin", "idle", "orders-app"]
    (row,) = doc["rows"]
    assert row["principal"] == "User:orders-app" and row["acls"] == 6
    grants = {(a, r) for s in row["policy"]["Statement"] if s["Effect"] == "Allow" for a in s["Action"]
              for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])}
    topic = f"{BASE}:topic/{PATH}"
    assert ("kafka-cluster:ReadData", f"{topic}/orders.*") in grants
    assert ("kafka-cluster:WriteData", f"{topic}/orders.created") in grants
    assert ("kafka-cluster:AlterGroup", f"{BASE}:group/{PATH}/orders-billing") in grants
    assert ("kafka-cluster:AlterTransactionalId", f"{BASE}:transactional-id/{PATH}/orders-tx") in grants
    assert ("kafka-cluster:WriteDataIdempotently", ARN) in grants and ("kafka-cluster:Connect", ARN) in grants
    assert not any(r.endswith("/ops") or "public." in r for _, r in grants), "host-restricted and User:* ACLs are not granted"
    denies = [s for s in row["policy"]["Statement"] if s["Effect"] == "Deny"]
    assert denies and denies[0]["Resource"] == f"{topic}/orders.audit"
    kinds = sorted(f["kind"] for f in doc["findings"])
    assert kinds == ["all-principals", "deny", "host", "no-acls", "no-acls"], kinds
    no_acls = " ".join(f["detail"] for f in doc["findings"] if f["kind"] == "no-acls")
    assert "'idle'" in no_acls and "'admin'" in no_acls  # admin is a super user: no ACL of its own
    assert "aws-msk-iam-auth" in doc["client_settings"]["java"]["dependency"]
    tf = json.loads((out / "acls.tf.json").read_text())["resource"]["aws_iam_policy"]["msk_orders-app".replace("-", "_")]
    assert json.loads(tf["policy"]) == row["policy"]
    assert json.loads((out / "policies" / "msk-orders-app.json").read_text()) == row["policy"]


def test_acls_plan_strict_names_the_first_acl_it_cannot_carry_and_writes_nothing(acl_source, tmp_path) -> None:
    out = tmp_path / "strict"
    res = _cli(acl_source, "acls", "plan", "--config", _flow(tmp_path, acl_source["port"]), "--cluster-arn", ARN,
               "--out-dir", str(out), "--strict")
    assert res.returncode == 2 and "--strict" in res.stderr and "User:" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not out.exists()


def test_acls_plan_without_a_cluster_arn_is_one_line(tmp_path) -> None:
    res = subprocess.run([sys.executable, "-m", "msk_migrate.commands", "acls", "plan", "--config", _flow(tmp_path, 9)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--cluster-arn" in res.stderr and len(res.stderr.strip().splitlines()) == 1
