"""Small shared helpers for the constructs."""

from __future__ import annotations

import ipaddress
import re

from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.errors import UsageError

from .tfjson import tf_json


def dns_suffix(cfg: EnvironmentConfig) -> str:
    return "amazonaws.com.cn" if cfg.partition == "aws-cn" else "amazonaws.com"


def arn(cfg: EnvironmentConfig, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
    return f"arn:{cfg.partition}:{service}:{cfg.region if region else ''}:{cfg.account_id if account else ''}:{resource}"


def pass_role_refusal(statements: list[dict]) -> str | None:
    """Why ``statements`` would let someone hand any role to any service (one line), or None.

    ``iam:PassRole`` (or an action wildcard covering it) is allowed only on named roles (no ``*`` in a
    resource) and only with an ``iam:PassedToService`` condition: the right to start a task must not be the
    right to start it as any role (issue 37)."""
    for st in statements:
        if st.get("Effect") != "Allow":
            continue
        actions = [st.get("Action")] if isinstance(st.get("Action"), str) else list(st.get("Action") or [])
        if not any(isinstance(a, str) and re.fullmatch(re.escape(a).replace(r"\*", ".*"), "iam:PassRole", re.IGNORECASE) for a in actions):
            continue
        resources = [st.get("Resource")] if isinstance(st.get("Resource"), str) else list(st.get("Resource") or [])
        sid = st.get("Sid", "(no Sid)")
        if not resources or any("*" in str(r) for r in resources):
            return f"statement {sid}: iam:PassRole on '*' (or a wildcard): name the roles it may pass"
        conditions = st.get("Condition") or {}
        if not any("iam:PassedToService" in (keys or {}) for keys in conditions.values()):
            return f"statement {sid}: iam:PassRole without an iam:PassedToService condition: add one (e.g. ecs-tasks.amazonaws.com)"
    return None


def policy_json(statements: list[dict]) -> str:
    """An IAM/resource policy document as a Terraform string (tokens resolved, literals escaped). Refuses a
    document that grants ``iam:PassRole`` on ``*`` or without ``iam:PassedToService`` (:func:`pass_role_refusal`)."""
    refusal = pass_role_refusal(statements)
    if refusal:
        raise UsageError("iam:PassRole", refusal, "grant iam:PassRole on the named roles with an iam:PassedToService condition")
    return tf_json({"Version": "2012-10-17", "Statement": statements}, indent=None)


def construct_id(*parts: object) -> str:
    """A stable construct id from readable parts (sg-0abc, 10.0.0.0/16 -> sg-0abc, 10-0-0-0-16)."""
    return "_".join(re.sub(r"[^A-Za-z0-9]+", "-", str(p)).strip("-") for p in parts)


def cidr_args(cidr: str) -> dict[str, str]:
    net = ipaddress.ip_network(cidr, strict=False)
    return {"cidr_ipv6": cidr} if net.version == 6 else {"cidr_ipv4": cidr}
