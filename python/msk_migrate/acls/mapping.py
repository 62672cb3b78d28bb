"""The ONE table from Kafka ACL operations to MSK IAM actions (``kafka-cluster:*``).

Source of the IAM side: AWS, "Semantics of IAM authorization actions and resources"
(https://docs.aws.amazon.com/msk/latest/developerguide/kafka-actions.html), which names for every
action the Kafka ACL it is equivalent to and the actions it requires. docs/acls.md's table is generated
from :data:`ACL_TO_IAM` (``python -m msk_migrate.acls.docs``); tests/unit/test_acls_mapping.py checks the
table against the documented action list in tests/unit/data/msk_iam_actions.json.

Keys are ``(resource type, operation)`` as Kafka's AdminClient names them (``ResourceType``,
``AclOperation``); values are the IAM actions granted on the ACL's own resource, plus, for the few ACLs
whose IAM equivalent lives on another resource type, :data:`ON_OTHER_RESOURCE`. Kafka's own implications
(READ/WRITE/DELETE/ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) and IAM's required
actions (:data:`REQUIRED`) are both applied, so a policy never lacks an action its grant needs.
"""

from __future__ import annotations

PREFIX = "kafka-cluster:"

#: AWS's "Required actions" column: granting the key is useless without these (on the same resource type,
#: except Connect, which is on the cluster, and ReadData's AlterGroup, which is on the consumer group:
#: that one comes from the group's own READ ACL and is reported when missing).
REQUIRED: dict[str, tuple[str, ...]] = {
    "Connect": (),
    "DescribeCluster": ("Connect",),
    "AlterCluster": ("Connect", "DescribeCluster"),
    "DescribeClusterDynamicConfiguration": ("Connect",),
    "AlterClusterDynamicConfiguration": ("Connect", "DescribeClusterDynamicConfiguration"),
    "WriteDataIdempotently": ("Connect", "WriteData"),
    "CreateTopic": ("Connect",),
    "DescribeTopic": ("Connect",),
    "AlterTopic": ("Connect", "DescribeTopic"),
    "DeleteTopic": ("Connect", "DescribeTopic"),
    "ReadData": ("Connect", "DescribeTopic", "AlterGroup"),
    "WriteData": ("Connect", "DescribeTopic"),
    "DescribeTopicDynamicConfiguration": ("Connect",),
    "AlterTopicDynamicConfiguration": ("Connect", "DescribeTopicDynamicConfiguration"),
    "AlterGroup": ("Connect",),
    "DescribeGroup": ("Connect",),
    "DeleteGroup": ("Connect",),
    "DescribeTransactionalId": ("Connect",),
    "AlterTransactionalId": ("Connect", "DescribeTransactionalId", "WriteData"),
}

#: The resource type each action is granted on (AWS's "Required resources" column).
RESOURCE_OF: dict[str, str] = {
    **{a: "cluster" for a in ("Connect", "DescribeCluster", "AlterCluster", "DescribeClusterDynamicConfiguration",
                              "AlterClusterDynamicConfiguration", "WriteDataIdempotently")},
    **{a: "topic" for a in ("CreateTopic", "DescribeTopic", "AlterTopic", "DeleteTopic", "ReadData", "WriteData",
                            "DescribeTopicDynamicConfiguration", "AlterTopicDynamicConfiguration")},
    **{a: "group" for a in ("AlterGroup", "DescribeGroup", "DeleteGroup")},
    **{a: "transactional-id" for a in ("DescribeTransactionalId", "AlterTransactionalId")},
}

_TOPIC_ALL = ("DescribeTopic", "CreateTopic", "AlterTopic", "DeleteTopic", "ReadData", "WriteData",
              "DescribeTopicDynamicConfiguration", "AlterTopicDynamicConfiguration")

#: (Kafka resource type, Kafka operation) -> IAM actions on that resource. Anything not here (CLUSTER_ACTION,
#: delegation tokens, USER resources, ...) has no IAM equivalent and is reported, never granted.
ACL_TO_IAM: dict[tuple[str, str], tuple[str, ...]] = {
    ("TOPIC", "READ"): ("ReadData", "DescribeTopic"),
    ("TOPIC", "WRITE"): ("WriteData", "DescribeTopic"),
    ("TOPIC", "CREATE"): ("CreateTopic",),
    ("TOPIC", "DELETE"): ("DeleteTopic", "DescribeTopic"),
    ("TOPIC", "ALTER"): ("AlterTopic", "DescribeTopic"),
    ("TOPIC", "DESCRIBE"): ("DescribeTopic",),
    ("TOPIC", "DESCRIBE_CONFIGS"): ("DescribeTopicDynamicConfiguration",),
    ("TOPIC", "ALTER_CONFIGS"): ("AlterTopicDynamicConfiguration", "DescribeTopicDynamicConfiguration"),
    ("TOPIC", "ALL"): _TOPIC_ALL,
    ("GROUP", "READ"): ("AlterGroup", "DescribeGroup"),
    ("GROUP", "DESCRIBE"): ("DescribeGroup",),
    ("GROUP", "DELETE"): ("DeleteGroup", "DescribeGroup"),
    ("GROUP", "ALL"): ("AlterGroup", "DescribeGroup", "DeleteGroup"),
    ("CLUSTER", "DESCRIBE"): ("DescribeCluster",),
    ("CLUSTER", "ALTER"): ("AlterCluster", "DescribeCluster"),
    ("CLUSTER", "DESCRIBE_CONFIGS"): ("DescribeClusterDynamicConfiguration",),
    ("CLUSTER", "ALTER_CONFIGS"): ("AlterClusterDynamicConfiguration", "DescribeClusterDynamicConfiguration"),
    ("CLUSTER", "IDEMPOTENT_WRITE"): ("WriteDataIdempotently",),
    ("CLUSTER", "CREATE"): (),  # CreateTopic on every topic: ON_OTHER_RESOURCE
    ("CLUSTER", "ALL"): ("DescribeCluster", "AlterCluster", "DescribeClusterDynamicConfiguration",
                         "AlterClusterDynamicConfiguration", "WriteDataIdempotently"),
    ("TRANSACTIONAL_ID", "DESCRIBE"): ("DescribeTransactionalId",),
    ("TRANSACTIONAL_ID", "WRITE"): ("AlterTransactionalId", "DescribeTransactionalId"),
    ("TRANSACTIONAL_ID", "ALL"): ("AlterTransactionalId", "DescribeTransactionalId"),
}

#: ACLs on the cluster whose IAM equivalent is on every topic: Kafka's CREATE CLUSTER lets a principal create
#: any topic, IAM's CreateTopic is granted on topic ARNs (``topic/<cluster>/<uuid>/*``).
ON_OTHER_RESOURCE: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("CLUSTER", "CREATE"): ("topic", ("CreateTopic",)),
    ("CLUSTER", "ALL"): ("topic", ("CreateTopic",)),
}

#: Why an ACL has no IAM equivalent (shown in the plan).
NOT_EXPRESSIBLE: dict[tuple[str, str], str] = {
    ("CLUSTER", "CLUSTER_ACTION"): "inter-broker operations; MSK runs the brokers, clients never need it",
    ("DELEGATION_TOKEN", "*"): "MSK IAM has no delegation tokens",
    ("USER", "*"): "SCRAM credential and token management of users has no MSK IAM action",
}

#: Resource types an ACL may name, as IAM names them in ARNs.
ARN_TYPE = {"TOPIC": "topic", "GROUP": "group", "TRANSACTIONAL_ID": "transactional-id", "CLUSTER": "cluster"}


def actions_for(resource_type: str, operation: str) -> tuple[str, ...] | None:
    """The IAM actions (without prefix) an ALLOW ACL maps to on its own resource; None = not expressible."""
    return ACL_TO_IAM.get((resource_type, operation))


def closure(actions: set[str]) -> set[str]:
    """``actions`` with every action AWS requires beside them (AlterGroup excepted: it is on a group)."""
    out = set(actions)
    todo = list(actions)
    while todo:
        for req in REQUIRED[todo.pop()]:
            if req == "AlterGroup":
                continue
            if req not in out:
                out.add(req)
                todo.append(req)
    return out
