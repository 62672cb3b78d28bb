"""The ACL -> MSK IAM table (msk_migrate.acls.mapping) against AWS's documented actions, and the plan it builds."""

from __future__ import annotations

import json
from pathlib import Path

from msk_migrate.acls import docs as acl_docs
from msk_migrate.acls.mapping import ACL_TO_IAM, ON_OTHER_RESOURCE, PREFIX, REQUIRED, RESOURCE_OF
from msk_migrate.acls.plan import Acl, build_plan, terraform_json

DOCUMENTED = json.loads((Path(__file__).parent / "data" / "msk_iam_actions.json").read_text())["actions"]
ROOT = Path(__file__).resolve().parents[2]
ARN = "arn:aws:kafka:eu-west-1:111111111111:cluster/msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"
BASE = "arn:aws:kafka:eu-west-1:111111111111"
PATH = "msk-migrate-dev/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"


def test_every_mapped_action_is_a_documented_msk_iam_action_with_its_documented_requirements() -> None:
    mapped = {a for actions in ACL_TO_IAM.values() for a in actions} | {a for _, ex in ON_OTHER_RESOURCE.values() for a in ex}
    assert mapped and {PREFIX + a for a in mapped} <= set(DOCUMENTED)
    assert {PREFIX + a for a in REQUIRED} == set(DOCUMENTED), "the table knows exactly the documented actions"
    for action, required in REQUIRED.items():
        assert sorted(PREFIX + r for r in required) == sorted(DOCUMENTED[PREFIX + action]["required"]), action
        assert RESOURCE_OF[action] == DOCUMENTED[PREFIX + action]["resource"], action


def test_docs_table_is_generated_from_the_mapping() -> None:
    text = (ROOT / "docs" / "acls.md").read_text()
    assert acl_docs.block() in text, "regenerate: python -m msk_migrate.acls.docs"


def _acl(principal: str, rtype: str, name: str, op: str, pattern: str = "LITERAL", permission: str = "ALLOW", host: str = "*") -> Acl:
    return Acl(principal, rtype, name, pattern, op, permission, host)


def test_a_consumer_gets_read_describe_connect_and_its_group_with_prefixes_as_wildcards() -> None:
    plan = build_plan([_acl("User:orders", "TOPIC", "orders.", "READ", "PREFIXED"), _acl("User:orders", "GROUP", "orders-billing", "READ")],
                      ["orders"], ARN)
    (policy,) = plan.policies
    grants = {(a, r) for s in policy.document["Statement"] for a in s["Action"]
              for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])}
    topic = f"{BASE}:topic/{PATH}/orders.*"
    group = f"{BASE}:group/{PATH}/orders-billing"
    assert {("kafka-cluster:ReadData", topic), ("kafka-cluster:DescribeTopic", topic), ("kafka-cluster:AlterGroup", group),
            ("kafka-cluster:DescribeGroup", group), ("kafka-cluster:Connect", ARN)} == grants
    assert plan.complete and not plan.findings
    tf = terraform_json(plan)["resource"]["aws_iam_policy"]["msk_orders"]
    assert json.loads(tf["policy"]) == policy.document and tf["name"] == "msk-orders"


def test_deny_star_principal_host_and_cluster_action_are_reported_never_dropped() -> None:
    acls = [_acl("User:app", "TOPIC", "secret", "READ", permission="DENY"), _acl("User:app", "TOPIC", "t", "WRITE"),
            _acl("User:*", "TOPIC", "public", "READ"), _acl("User:app", "TOPIC", "x", "READ", host="10.0.0.1"),
            _acl("User:app", "CLUSTER", "kafka-cluster", "CLUSTER_ACTION"), _acl("User:app", "GROUP", "g*x", "READ")]
    plan = build_plan(acls, ["app", "idle"], ARN)
    kinds = sorted(f.kind for f in plan.findings)
    assert kinds == ["all-principals", "deny", "host", "no-acls", "not-expressible", "not-expressible"]
    assert not plan.complete
    (policy,) = plan.policies
    deny = [s for s in policy.document["Statement"] if s["Effect"] == "Deny"]
    assert deny and deny[0]["Resource"] == f"{BASE}:topic/{PATH}/secret" and "kafka-cluster:ReadData" in deny[0]["Action"]
    allowed = {a for s in policy.document["Statement"] if s["Effect"] == "Allow" for a in s["Action"]}
    assert allowed == {"kafka-cluster:WriteData", "kafka-cluster:DescribeTopic", "kafka-cluster:Connect"}
