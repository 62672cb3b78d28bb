"""The ledger cannot be rewritten (issue 42, part 4), over the synthesized stack and on moto's S3.

What the stack must hold: the config bucket's policy denies a ledger event written without ``If-None-Match``
and the deletion of an event; Object Lock (GOVERNANCE, ``ledger_retention_days``) on every object version;
the operator policy lets a person run the operator task only tagged with their own ``${aws:userid}`` and stop
only the tasks so tagged.

The behaviour test replays the synthesized bucket policy and lock configuration on moto's server (the deploy
rehearsal's, tests/infra/moto_shims.py) and writes through the ledger's own S3 client. moto stores Object
Lock, enforces retention on a version's deletion and answers ``If-None-Match: *`` with 412 itself; it does not
evaluate a bucket policy's conditions: the shim :func:`moto_shims.s3_policy_conditions` evaluates the two
condition forms the stacks use (``Null s3:if-none-match``, ``Bool aws:SecureTransport``) on the request. So
the statements' effect on these requests is shown, not S3's own policy engine; IAM's evaluation of the
operator policy (``${aws:userid}``, request and resource tags) is not emulated anywhere here: its statements
are checked as documents.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from infra_helpers import Synth

from msk_migrate.aws.ecs_task import STARTED_BY_TAG
from msk_migrate.ledger import Change
from msk_migrate.ledger.book import Ledger, event_name
from msk_migrate.ledger.storage import STARTED_BY_ENV, S3Storage
from mskinfra.tfjson import unescape_template

ENVS = ["dev", "prod"]
TOKEN = re.compile(r"(?<!\$)\$\{aws_s3_bucket\.[^}]+\.arn\}")


def config_bucket_resource(synth: Synth, env: str, rtype: str) -> dict:
    """The config bucket's ``rtype`` resource (not the access-log bucket's)."""
    (found,) = [v for k, v in synth.resources(env, rtype).items() if not k.startswith("configs_access_logs_")]
    return found


def bucket_policy(synth: Synth, env: str, bucket_arn: str = "arn:aws:s3:::BUCKET") -> dict:
    """The config bucket's policy as S3 receives it, the bucket's ARN token replaced by ``bucket_arn``."""
    text = TOKEN.sub(bucket_arn, config_bucket_resource(synth, env, "aws_s3_bucket_policy")["policy"])
    return json.loads(unescape_template(text))


def operator_policy(synth: Synth, env: str) -> dict[str, dict]:
    cfg = synth.configs[env]
    (policy,) = [v for v in synth.resources(env, "aws_iam_policy").values() if v["name"] == f"{cfg.resource_prefix}-operator"]
    return {s["Sid"]: s for s in json.loads(unescape_template(policy["policy"]))["Statement"]}


@pytest.mark.parametrize("env", ENVS)
def test_the_bucket_denies_a_ledger_event_written_without_if_none_match_or_deleted(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    statements = {s["Sid"]: s for s in bucket_policy(synth, env)["Statement"]}
    events = f"arn:aws:s3:::BUCKET/ledger/{cfg.migration.name}/events/*"
    assert statements["LedgerEventsOnlyIfAbsent"] == {
        "Sid": "LedgerEventsOnlyIfAbsent", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
        "Resource": [events], "Condition": {"Null": {"s3:if-none-match": "true"}}}
    assert statements["LedgerEventsNeverDeleted"] == {
        "Sid": "LedgerEventsNeverDeleted", "Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": [events]}
    # Replaced on purpose (docs/infra.md): the view cache, the evidence, the proof mark, the connector configs.
    denied = [r for s in statements.values() if s["Effect"] == "Deny" and "s3:PutObject" in s["Action"] for r in s["Resource"]]
    assert denied == [events]


@pytest.mark.parametrize("env", ENVS)
def test_every_version_in_the_bucket_is_locked_for_the_ledger_retention_before_any_object_is_written(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    lock = config_bucket_resource(synth, env, "aws_s3_bucket_object_lock_configuration")
    assert lock["object_lock_enabled"] == "Enabled"
    assert lock["rule"] == {"default_retention": {"mode": "GOVERNANCE", "days": cfg.ledger_retention_days}}
    bucket = config_bucket_resource(synth, env, "aws_s3_bucket")
    # Enabled by the configuration, not by the bucket's ForceNew attribute: an existing bucket is kept.
    assert "object_lock_enabled" not in bucket
    assert any(d.startswith("aws_s3_bucket_versioning.") for d in lock["depends_on"])
    objects = [v for k, v in synth.resources(env, "aws_s3_object").items() if not k.startswith("configs_access_logs_")]
    assert objects and all(any(d.startswith("aws_s3_bucket_object_lock_configuration.") for d in o["depends_on"]) for o in objects)
    # The bucket's retention locks them; Terraform leaves the lock it reads back alone (never tries to remove it).
    assert all(set(o["lifecycle"]["ignore_changes"]) == {"object_lock_mode", "object_lock_retain_until_date"} for o in objects)


def test_the_retention_is_a_setting_of_the_environment_with_a_default() -> None:
    from msk_migrate.config.environment import EnvironmentConfig

    field = EnvironmentConfig.model_fields["ledger_retention_days"]
    assert field.default == 365


@pytest.mark.parametrize("env", ENVS)
def test_run_task_only_tagged_with_the_callers_own_user_id_and_stop_task_only_on_own_tasks(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    statements = operator_policy(synth, env)
    cluster = f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:cluster/{cfg.resource_prefix}"
    tasks = [f"arn:{cfg.partition}:ecs:{cfg.region}:{cfg.account_id}:task/{cfg.resource_prefix}/*"]
    assert STARTED_BY_TAG == "msk-migrate:started-by"
    run = statements["RunTheOperatorTask"]
    assert run["Condition"] == {"ArnEquals": {"ecs:cluster": cluster},
                                "StringEquals": {f"aws:RequestTag/{STARTED_BY_TAG}": "${aws:userid}"}}
    tag = statements["TagTheOperatorTaskAtRunTask"]
    assert (tag["Action"], tag["Resource"]) == ("ecs:TagResource", tasks)
    assert tag["Condition"] == {"StringEquals": {"ecs:CreateAction": "RunTask", f"aws:RequestTag/{STARTED_BY_TAG}": "${aws:userid}"}}
    stop = statements["StopOwnOperatorTasks"]
    assert (stop["Action"], stop["Resource"]) == ("ecs:StopTask", tasks)
    assert stop["Condition"] == {"ArnEquals": {"ecs:cluster": cluster},
                                 "StringEquals": {f"aws:ResourceTag/{STARTED_BY_TAG}": "${aws:userid}"}}
    follow = statements["FollowTheOperatorTask"]
    assert (follow["Action"], follow["Condition"]) == ("ecs:DescribeTasks", {"ArnEquals": {"ecs:cluster": cluster}})
    granted = [s for s in statements.values() if s["Effect"] == "Allow"]
    assert [s["Sid"] for s in granted if "ecs:StopTask" in s["Action"]] == ["StopOwnOperatorTasks"]
    assert [s["Sid"] for s in granted if "ecs:TagResource" in s["Action"]] == ["TagTheOperatorTaskAtRunTask"]
    assert not [s for s in granted if "ecs:UntagResource" in s["Action"]], "a task's started-by tag is never removed"
    # The variable reaches IAM as written: Terraform would otherwise read ${aws:userid} as its own template.
    (raw,) = [v["policy"] for v in synth.resources(env, "aws_iam_policy").values() if v["name"] == f"{cfg.resource_prefix}-operator"]
    assert "$${aws:userid}" in raw


# ---------------------------------------------------------------- behaviour on moto's S3 (see the module docstring)

@pytest.fixture(scope="module")
def moto_s3(tmp_path_factory):
    import moto_shims

    server = moto_shims.start()
    yield server
    server.stop()


@pytest.fixture()
def ledger_bucket(synth: Synth, moto_s3, monkeypatch):
    """A bucket with the dev stack's versioning, lock configuration and policy, and an S3 client of it."""
    import boto3

    for k, v in {**moto_s3.client_env(), "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv(STARTED_BY_ENV, raising=False)
    cfg = synth.configs["dev"]
    name = f"ledger-{dt.datetime.now().strftime('%H%M%S%f')}"
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    lock = config_bucket_resource(synth, "dev", "aws_s3_bucket_object_lock_configuration")["rule"]["default_retention"]
    s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": lock["mode"], "Days": lock["days"]}}})
    s3.put_bucket_policy(Bucket=name, Policy=json.dumps(bucket_policy(synth, "dev", f"arn:aws:s3:::{name}")))
    return s3, name, f"ledger/{cfg.migration.name}/", cfg


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code"))


def test_on_moto_the_ledger_appends_and_nothing_rewrites_an_event(ledger_bucket, monkeypatch) -> None:
    from botocore.exceptions import ClientError

    s3, bucket, prefix, cfg = ledger_bucket
    monkeypatch.setenv(STARTED_BY_ENV, "AROAEXAMPLEROLEID:alice@example.com")
    ledger = Ledger(S3Storage(f"s3://{bucket}/{prefix}"), cfg.migration.name)
    view = ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], command="connectors apply")
    assert view.version == 1
    first = event_name(1)
    event = json.loads(s3.get_object(Bucket=bucket, Key=prefix + first)["Body"].read())
    assert event["started_by"] == "AROAEXAMPLEROLEID:alice@example.com" and event["by"]

    # A write without If-None-Match (an unconditional PutObject, `aws s3 cp`): refused by the bucket policy.
    for key in (prefix + first, prefix + event_name(2)):
        with pytest.raises(ClientError) as refused:
            s3.put_object(Bucket=bucket, Key=key, Body=b"{}")
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403, key
    # With If-None-Match on an existing event: S3's own 412; the ledger's create says "someone was first".
    assert ledger.storage.create(first, "{}") is False
    # Hiding an event behind a delete marker: refused by the bucket policy.
    with pytest.raises(ClientError) as hidden:
        s3.delete_object(Bucket=bucket, Key=prefix + first)
    assert hidden.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    # Deleting the event's version: refused by Object Lock (GOVERNANCE) without the bypass.
    (version,) = [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket, Prefix=prefix + first)["Versions"]]
    with pytest.raises(ClientError) as locked:
        s3.delete_object(Bucket=bucket, Key=prefix + first, VersionId=version)
    assert _code(locked.value) == "AccessDenied"
    assert ledger.read().get("topic", "orders").started_by == "AROAEXAMPLEROLEID:alice@example.com"


def test_on_moto_replaced_documents_keep_every_version_locked_and_writes_carry_a_checksum(ledger_bucket) -> None:
    s3, bucket, prefix, cfg = ledger_bucket
    sent: list[dict] = []
    storage = S3Storage(f"s3://{bucket}/{prefix}")
    storage.client.meta.events.register("before-send.s3.PutObject", lambda request, **_: sent.append(dict(request.headers)))
    ledger = Ledger(storage, cfg.migration.name)
    ledger.append(ledger.read(), [Change("topic", "orders", "replicating")], command="connectors apply")
    assert len(sent) == 2, "the event, then the view"
    for headers in sent:  # Object Lock requires Content-MD5 or an x-amz-checksum-* on every PutObject
        names = {k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in headers.items()}
        assert names.get("x-amz-sdk-checksum-algorithm") == "SHA256" or "x-amz-checksum-sha256" in names, names
    assert "if-none-match" in {k.lower() for k in sent[0]} and "if-none-match" not in {k.lower() for k in sent[1]}

    # The evidence and the view are replaced on purpose (no If-None-Match); each earlier version stays, locked.
    evidence = f"{prefix}evidence/fence-migration.json"
    for body in (b'{"n": 1}', b'{"n": 2}'):
        s3.put_object(Bucket=bucket, Key=evidence, Body=body, ChecksumAlgorithm="SHA256")
    versions = s3.list_object_versions(Bucket=bucket, Prefix=evidence)["Versions"]
    assert len(versions) == 2
    days = cfg.ledger_retention_days
    for v in versions:
        head = s3.head_object(Bucket=bucket, Key=evidence, VersionId=v["VersionId"])
        assert head["ObjectLockMode"] == "GOVERNANCE"
        left = head["ObjectLockRetainUntilDate"] - dt.datetime.now(dt.UTC)
        assert dt.timedelta(days=days - 1) < left <= dt.timedelta(days=days)
    older = next(v["VersionId"] for v in versions if not v["IsLatest"])
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError):
        s3.delete_object(Bucket=bucket, Key=evidence, VersionId=older)
    # The hand-over's emptying (docs/runbooks/deploy.md) deletes versions with the governance bypass.
    s3.delete_object(Bucket=bucket, Key=evidence, VersionId=older, BypassGovernanceRetention=True)
    assert len(s3.list_object_versions(Bucket=bucket, Prefix=evidence)["Versions"]) == 1
