"""The identity ``cleanup --yes`` deletes with on an IAM target: a role assumed for the deletion only.

The stack gives the operator task role no right to delete (issue 37: no standing destructive grant); its
cleanup role (``<prefix>-cleanup``: DeleteTopic on MM2's and the workers' own topics, DeleteGroup on the
worker's group, assumable only by the operator task role) is named in the operator task's environment
(:data:`~msk_migrate.config.environ.CLEANUP_ROLE_ENV`). ``cleanup --yes`` assumes it with STS for one short
session and signs the MSK IAM tokens of a second admin client with those credentials; listing and every
other command keep the task's own role. Clusters that do not use IAM delete with the session's own client
(their ACLs are the operator's to scope: ``acls plan``).

Invariant: a deletion on an IAM target named with a cleanup role never falls back to the caller's identity:
an STS refusal is one line naming the role, and nothing is deleted."""

from __future__ import annotations

import os
import re
from typing import Any

from ..access.admin import AdminSession
from ..access.client_security import msk_iam_token
from ..config.environ import CLEANUP_ROLE_ENV
from ..config.identifiers import msk_region
from ..errors import UsageError
from .session import MigrationSession

#: A deletion takes seconds: the shortest session STS grants.
SESSION_SECONDS = 900


_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")


def cleanup_role_arn(environ: dict[str, str] | None = None) -> str | None:
    """The named cleanup role, checked for shape before anything connects (a malformed value is bad input)."""
    env = os.environ if environ is None else environ
    value = env.get(CLEANUP_ROLE_ENV) or None
    if value is not None and not _ROLE_ARN.match(value):
        raise UsageError(CLEANUP_ROLE_ENV, f"{value!r} is not an IAM role ARN",
                         "give arn:aws:iam::<account>:role/<prefix>-cleanup (the stack's cleanup role) or unset it")
    return value


def assume_cleanup_role(role_arn: str, region: str, sts: Any = None) -> Any:
    """Frozen botocore credentials of one ``msk-migrate-cleanup`` session of ``role_arn``."""
    import boto3
    from botocore.credentials import Credentials
    from botocore.exceptions import BotoCoreError, ClientError

    client = sts or boto3.client("sts", region_name=region)
    try:
        got = client.assume_role(RoleArn=role_arn, RoleSessionName="msk-migrate-cleanup", DurationSeconds=SESSION_SECONDS)
    except (ClientError, BotoCoreError) as exc:
        raise UsageError(CLEANUP_ROLE_ENV, f"cannot assume the cleanup role {role_arn}: {exc}",
                         "run cleanup as the stack's operator task (msk-migrate cleanup --in-vpc), whose role may assume it; "
                         "nothing was deleted") from None
    c = got["Credentials"]
    return Credentials(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"], method="assume-role")


def deleting_session(s: MigrationSession, environ: dict[str, str] | None = None, sts: Any = None) -> AdminSession:
    """The admin client that deletes: the target's own, unless the target uses IAM and a cleanup role is named,
    then one whose tokens are signed as that role."""
    role_arn = cleanup_role_arn(environ)
    endpoint = s.target_endpoint
    if role_arn is None or endpoint is None or endpoint.auth.mode != "iam":
        return s.target
    region = msk_region(endpoint.bootstrap_servers, environ)
    if not region:
        raise UsageError("target.bootstrap_servers", "cannot tell the AWS region of the target MSK cluster", "set AWS_REGION")
    creds = assume_cleanup_role(role_arn, region, sts)
    conf = {k: v for k, v in s.target.conf.items() if k != "error_cb"}
    conf["oauth_cb"] = lambda _config: msk_iam_token(region, creds)
    conf["client.id"] = "msk-migrate-cleanup"
    return AdminSession("target", conf, s.target.timeout, s.target.fix)
