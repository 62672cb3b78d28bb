"""IAM policy documents of the stacks, as plain data (no jsii: unit tests import this in milliseconds).

MSK IAM resource patterns come from the migration's topic/group regexes (:mod:`.scope`) and the MM2
topic names from :mod:`msk_migrate.kafka.names`; :mod:`.iam` turns these documents into roles.
"""

from __future__ import annotations

from msk_migrate.aws.ecs_task import STARTED_BY_TAG
from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.config.flow import ledger_key_prefix
from msk_migrate.kafka.names import HEARTBEATS_TOPIC, flow_internal_topics

from .scope import name_patterns
from .util import arn, dns_suffix, policy_json

TARGET_CLUSTER_ACTIONS = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:WriteDataIdempotently"]
TARGET_TOPIC_ACTIONS = [
    "kafka-cluster:DescribeTopic",
    "kafka-cluster:CreateTopic",
    "kafka-cluster:WriteData",
    "kafka-cluster:ReadData",
    "kafka-cluster:AlterTopic",
    "kafka-cluster:DescribeTopicDynamicConfiguration",
    "kafka-cluster:AlterTopicDynamicConfiguration",
]
TARGET_GROUP_ACTIONS = ["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"]
SOURCE_CLUSTER_ACTIONS = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"]
SOURCE_TOPIC_ACTIONS = ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData", "kafka-cluster:DescribeTopicDynamicConfiguration"]
SOURCE_GROUP_ACTIONS = ["kafka-cluster:DescribeGroup"]
ECR_PULL_ACTIONS = ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]


def internal_topics(cfg: EnvironmentConfig) -> list[str]:
    """Topics the workers and MM2 keep on the target: the workers' storage topics, then MM2's (offset
    syncs located on the target, checkpoints, heartbeats and the source's replicated heartbeats)."""
    w = cfg.worker
    return [
        w.config_storage_topic,
        w.offset_storage_topic,
        w.status_storage_topic,
        *flow_internal_topics(cfg.source.alias, cfg.target.alias, cfg.migration.internal_namespace),
    ]


def target_topic_patterns(cfg: EnvironmentConfig) -> list[str]:
    m = cfg.migration
    return name_patterns(m.topics, list(m.topic_renames.values()) + internal_topics(cfg))


def target_group_patterns(cfg: EnvironmentConfig) -> list[str]:
    return name_patterns(cfg.migration.groups, [cfg.worker.group_id])


def source_topic_patterns(cfg: EnvironmentConfig) -> list[str]:
    m = cfg.migration
    return name_patterns(m.topics, [*list(m.topic_renames), HEARTBEATS_TOPIC])


def source_group_patterns(cfg: EnvironmentConfig) -> list[str]:
    return name_patterns(cfg.migration.groups)


def trust_policy(cfg: EnvironmentConfig) -> str:
    return policy_json(
        [
            {
                "Sid": "EcsTasksOfThisAccount",
                "Effect": "Allow",
                "Principal": {"Service": "ecs-tasks.amazonaws.com"},
                "Action": "sts:AssumeRole",
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": cfg.account_id},
                    "ArnLike": {"aws:SourceArn": arn(cfg, "ecs", "*")},
                },
            }
        ]
    )


def msk_statements(sid: str, cluster_arn: str, topic_prefix: str, group_prefix: str,
                    cluster_actions: list[str], topic_actions: list[str], group_actions: list[str],
                    topics: list[str], groups: list[str]) -> list[dict]:
    return [
        {"Sid": f"{sid}Cluster", "Effect": "Allow", "Action": cluster_actions, "Resource": [cluster_arn]},
        {"Sid": f"{sid}Topics", "Effect": "Allow", "Action": topic_actions, "Resource": [f"{topic_prefix}/{t}" for t in topics]},
        {"Sid": f"{sid}Groups", "Effect": "Allow", "Action": group_actions, "Resource": [f"{group_prefix}/{g}" for g in groups]},
    ]


TARGET_TRANSACTIONAL_ID_ACTIONS = ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"]


def transactional_ids(cfg: EnvironmentConfig) -> list[str]:
    """Exactly the transactional ids an exactly-once Connect cluster uses (KIP-618, Kafka's own formats):
    the leader's ``connect-cluster-<group.id>`` and one ``<group.id>-<connector>-<task>`` per task."""
    m, group = cfg.migration, cfg.worker.group_id
    names = m.connector_names()
    ids = [f"connect-cluster-{group}"]
    ids += [f"{group}-{names['source']}-{i}" for i in range(m.tasks_max)]
    ids += [f"{group}-{names['checkpoint']}-{i}" for i in range(m.tasks_max_checkpoint)]
    ids += [f"{group}-{names['heartbeat']}-0"]
    return ids


def transactional_id_statement(cfg: EnvironmentConfig, target_topic_arn_prefix: str) -> dict:
    prefix = target_topic_arn_prefix.replace(":topic/", ":transactional-id/", 1)
    return {"Sid": "TargetMskTransactionalIds", "Effect": "Allow", "Action": TARGET_TRANSACTIONAL_ID_ACTIONS,
            "Resource": [f"{prefix}/{t}" for t in transactional_ids(cfg)]}


#: The operator task (``msk-migrate … --in-vpc``): read and compare on the target, move group offsets
#: (``offsets sync``). Never write data, create or delete topics: deleting is the cleanup role's, assumed by
#: ``cleanup --yes`` for the minutes it deletes (:func:`cleanup_statements`).
OPERATOR_CLUSTER_ACTIONS = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:DescribeClusterDynamicConfiguration"]
OPERATOR_TOPIC_ACTIONS = ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData", "kafka-cluster:DescribeTopicDynamicConfiguration"]
OPERATOR_GROUP_ACTIONS = ["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"]
#: The cleanup role: delete MM2's and the workers' own topics and the worker's group, nothing else.
CLEANUP_CLUSTER_ACTIONS = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"]
CLEANUP_TOPIC_ACTIONS = ["kafka-cluster:DescribeTopic", "kafka-cluster:DeleteTopic"]
CLEANUP_GROUP_ACTIONS = ["kafka-cluster:DescribeGroup", "kafka-cluster:DeleteGroup"]
#: How long one cleanup may hold the role (IAM's minimum maximum): a deletion takes seconds.
CLEANUP_SESSION_SECONDS = 3600
#: Groups the operator's own readers use (validate's consumers, lag/offset probes): prefixed, never an application's.
OPERATOR_OWN_GROUPS = "msk-migrate-*"


def operator_statements(cfg: EnvironmentConfig, cluster_arn: str, topic_prefix: str, group_prefix: str) -> list[dict]:
    """MSK IAM of the operator task role on the target (IAM targets only)."""
    if cfg.target.auth.mode != "iam":
        return []
    statements = msk_statements(
        "OperatorTargetMsk", cluster_arn, topic_prefix, group_prefix,
        OPERATOR_CLUSTER_ACTIONS, OPERATOR_TOPIC_ACTIONS, OPERATOR_GROUP_ACTIONS,
        target_topic_patterns(cfg), [*target_group_patterns(cfg), OPERATOR_OWN_GROUPS],
    )
    return statements


def cleanup_statements(cfg: EnvironmentConfig, cluster_arn: str, topic_prefix: str, group_prefix: str) -> list[dict]:
    """The cleanup role's MSK IAM (IAM targets only): delete exactly the internal topics and the worker's group."""
    if cfg.target.auth.mode != "iam":
        return []
    return msk_statements("CleanupTargetMsk", cluster_arn, topic_prefix, group_prefix,
                          CLEANUP_CLUSTER_ACTIONS, CLEANUP_TOPIC_ACTIONS, CLEANUP_GROUP_ACTIONS,
                          internal_topics(cfg), [cfg.worker.group_id])


def cleanup_trust_policy(cfg: EnvironmentConfig, operator_task_role_arn: str) -> str:
    """Only the operator task role may assume the cleanup role, from this account."""
    return policy_json([{
        "Sid": "OperatorTaskForCleanup", "Effect": "Allow", "Principal": {"AWS": operator_task_role_arn},
        "Action": "sts:AssumeRole", "Condition": {"StringEquals": {"aws:PrincipalAccount": cfg.account_id}},
    }])


def ledger_statements(cfg: EnvironmentConfig, bucket_arn: str, key_arn: str) -> list[dict]:
    """The operator task's access to the migration's ledger in the config bucket: ``lag`` and the gates read
    it, the commands that change state append to it (a new object per event, created only if absent: PutObject
    with If-None-Match), so read, write and list on that one prefix, with the stack key through S3 only.
    Nothing to delete, no retention to change or bypass: the bucket policy refuses an event written without
    If-None-Match, and Object Lock keeps every version (infra/mskinfra/config_bucket.py)."""
    prefix = ledger_key_prefix(cfg.migration.name)
    return [
        {"Sid": "ReadAndAppendTheLedger", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
         "Resource": [f"{bucket_arn}/{prefix}*"]},
        {"Sid": "ListTheLedger", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": [bucket_arn],
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
        {"Sid": "LedgerEncryption", "Effect": "Allow", "Action": ["kms:Decrypt", "kms:GenerateDataKey"], "Resource": [key_arn],
         "Condition": {"StringEquals": {"kms:ViaService": f"s3.{cfg.region}.{dns_suffix(cfg)}"}}},
    ]


#: What ``msk-migrate … --in-vpc`` itself calls (python/msk_migrate/aws): RunTask (+ TagResource, which
#: ECS checks for the tags of a RunTask), DescribeTasks, StopTask (a task still running at the timeout),
#: DescribeServices (the Connect network), DescribeTaskDefinition, GetLogEvents (the command's output).
OPERATOR_POLICY_NAME = "operator"
#: IAM's policy variable for the caller's unique id (``AIDA…`` for a user, ``AROA…:<session>`` for a role).
CALLER_USER_ID = "${aws:userid}"


def operator_user_statements(cfg: EnvironmentConfig, *, operator_roles: list[str], operator_log_group_arn: str,
                             connect_log_group_arn: str) -> list[dict]:
    """The managed policy the stack ships for the people who run the runbook (attach it to their group or
    role): exactly the calls of ``--in-vpc``, on this stack's ECS cluster, its operator task definition and
    log group; ``iam:PassRole`` on the two operator roles, to ECS tasks only. The task itself overrides
    neither command nor role (python/msk_migrate/aws/operator_entry.py), so this is the whole right.

    Who started a task: RunTask is allowed only with the request tag ``msk-migrate:started-by`` equal to the
    caller's own ``${aws:userid}`` (a missing or other value matches no Allow), TagResource only as part of
    that RunTask (``ecs:CreateAction``), never to retag a running task, and StopTask only on a task whose tag
    is the caller's: a runbook user stops the tasks they started, not Connect, Prometheus or someone else's.
    DescribeTasks stays on every task of the cluster (reading status stops nothing).

    Why a worker died (``lag``/``connectors status`` when Connect does not answer, python/msk_migrate/aws/
    connect_tasks.py): ListTasks of the cluster's stopped tasks (ListTasks' resource is the container instance,
    scoped to this cluster with the cluster condition too) and GetLogEvents on the Connect log group (the JVM's ``OutOfMemoryError`` line)."""
    cluster = arn(cfg, "ecs", f"cluster/{cfg.resource_prefix}")
    on_cluster = {"ArnEquals": {"ecs:cluster": cluster}}
    tasks = [arn(cfg, "ecs", f"task/{cfg.resource_prefix}/*")]
    tagged_by_caller = {"StringEquals": {f"aws:RequestTag/{STARTED_BY_TAG}": CALLER_USER_ID}}
    return [
        {"Sid": "RunTheOperatorTask", "Effect": "Allow", "Action": "ecs:RunTask",
         "Resource": [arn(cfg, "ecs", f"task-definition/{cfg.resource_prefix}-operator:*")],
         "Condition": {**on_cluster, **tagged_by_caller}},
        {"Sid": "TagTheOperatorTaskAtRunTask", "Effect": "Allow", "Action": "ecs:TagResource", "Resource": tasks,
         "Condition": {"StringEquals": {"ecs:CreateAction": "RunTask", **tagged_by_caller["StringEquals"]}}},
        {"Sid": "FollowTheOperatorTask", "Effect": "Allow", "Action": "ecs:DescribeTasks", "Resource": tasks,
         "Condition": on_cluster},
        {"Sid": "StopOwnOperatorTasks", "Effect": "Allow", "Action": "ecs:StopTask", "Resource": tasks,
         "Condition": {**on_cluster, "StringEquals": {f"aws:ResourceTag/{STARTED_BY_TAG}": CALLER_USER_ID}}},
        {"Sid": "ReadTheConnectNetwork", "Effect": "Allow", "Action": "ecs:DescribeServices",
         "Resource": [arn(cfg, "ecs", f"service/{cfg.resource_prefix}/*")]},
        # DescribeTaskDefinition has no resource-level permissions (the Service Authorization Reference).
        {"Sid": "ReadTaskDefinitions", "Effect": "Allow", "Action": "ecs:DescribeTaskDefinition", "Resource": "*"},
        {"Sid": "PassTheOperatorRoles", "Effect": "Allow", "Action": "iam:PassRole", "Resource": sorted(operator_roles),
         "Condition": {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}},
        {"Sid": "ReadTheOperatorLog", "Effect": "Allow", "Action": "logs:GetLogEvents",
         "Resource": [f"{operator_log_group_arn}:log-stream:*"]},
        {"Sid": "ListTheClustersTasks", "Effect": "Allow", "Action": "ecs:ListTasks",
         "Resource": [arn(cfg, "ecs", f"container-instance/{cfg.resource_prefix}/*")], "Condition": on_cluster},
        {"Sid": "ReadTheConnectLog", "Effect": "Allow", "Action": "logs:GetLogEvents",
         "Resource": [f"{connect_log_group_arn}:log-stream:*"]},
    ]
