"""``--in-vpc`` tags the operator task with the person who starts it (issue 42, part 4), against moto's ECS and STS.

The tag ``msk-migrate:started-by`` carries the caller's ``aws:userid`` from STS GetCallerIdentity: the operator
policy allows RunTask only with that tag equal to ``${aws:userid}`` (IAM's evaluation of it is not emulated by
moto; tests/infra/test_infra_ledger_bucket.py checks the statements), so the value sent must be exactly STS's.
"""

from __future__ import annotations

import pytest

from msk_migrate.aws import ecs_task
from msk_migrate.errors import UnreachableError

from . import test_preflight_in_vpc as pf
from .test_preflight_in_vpc import CLUSTER, REGION, finish

# The same moto server and ECS/Logs fixtures as the preflight's --in-vpc tests.
moto_url = pf.moto_url
aws = pf.aws


def _run(aws: dict, **kw):
    return ecs_task.run_in_vpc(aws["ecs"], aws["logs"], cluster=CLUSTER, service=f"{CLUSTER}-kafka-connect",
                               task_definition=f"{CLUSTER}-operator", container="operator", environment={},
                               timeout=60, poll=0.2, **kw)


def _tags(aws: dict, arn: str) -> list[dict]:
    return aws["ecs"].describe_tasks(cluster=CLUSTER, tasks=[arn], include=["TAGS"])["tasks"][0].get("tags", [])


def test_the_task_is_tagged_with_the_callers_user_id_from_sts(aws) -> None:
    import boto3

    user_id = boto3.client("sts", region_name=REGION).get_caller_identity()["UserId"]
    waiter = finish(aws, 0, ["done"])
    result = _run(aws)
    waiter.join(5)
    assert result.ok
    assert _tags(aws, result.task_arn) == [{"key": ecs_task.STARTED_BY_TAG, "value": user_id}]


class AssumedRole:
    """STS as an SSO user sees it: the role's id and the session name."""

    def get_caller_identity(self) -> dict:
        return {"UserId": "AROAEXAMPLEROLEID:alice@example.com", "Account": "123456789012",
                "Arn": "arn:aws:sts::123456789012:assumed-role/Operators/alice@example.com"}


def test_the_tag_is_the_user_id_not_the_arn(aws) -> None:
    waiter = finish(aws, 0, ["done"])
    result = _run(aws, sts=AssumedRole())
    waiter.join(5)
    assert {"key": "msk-migrate:started-by", "value": "AROAEXAMPLEROLEID:alice@example.com"} in _tags(aws, result.task_arn)


class NoCredentials:
    def get_caller_identity(self) -> dict:
        raise RuntimeError("Unable to locate credentials")


def test_without_an_identity_no_task_starts(aws) -> None:
    before = aws["ecs"].list_tasks(cluster=CLUSTER)["taskArns"]
    with pytest.raises(UnreachableError) as failed:
        _run(aws, sts=NoCredentials())
    assert "GetCallerIdentity" in str(failed.value) and "Unable to locate credentials" in str(failed.value)
    assert aws["ecs"].list_tasks(cluster=CLUSTER)["taskArns"] == before
