"""What a task of the operator image may read about itself: how ECS started it.

The image's entrypoint (python/msk_migrate/aws/task_view.py) runs nothing until ECS confirms the RunTask carried
no override but the caller's request, in the stack's subnets and security groups, tagged with the caller IAM
authenticated. It reads that with ``ecs:DescribeTasks`` (tasks of the stack's cluster only) and
``ec2:DescribeNetworkInterfaces`` (the security groups on its interface). EC2's Describe actions take no
resource-level permission or condition that would narrow them to one interface, so that statement is ``*``:
it reads network metadata of the account's interfaces and changes nothing.
"""

from __future__ import annotations

from msk_migrate.config.environment import EnvironmentConfig

from .util import arn


def self_check_statements(cfg: EnvironmentConfig, sid: str) -> list[dict]:
    """The two read-only statements the entrypoint's check needs (``sid`` prefixes the statement ids)."""
    cluster = arn(cfg, "ecs", f"cluster/{cfg.resource_prefix}")
    return [
        {"Sid": f"{sid}DescribeOwnTask", "Effect": "Allow", "Action": "ecs:DescribeTasks",
         "Resource": [arn(cfg, "ecs", f"task/{cfg.resource_prefix}/*")], "Condition": {"ArnEquals": {"ecs:cluster": cluster}}},
        {"Sid": f"{sid}DescribeOwnInterface", "Effect": "Allow", "Action": "ec2:DescribeNetworkInterfaces", "Resource": "*"},
    ]
