"""Small shared helpers for the constructs."""

from __future__ import annotations

import ipaddress
import re

from msk_migrate.config.environment import EnvironmentConfig

from .tfjson import tf_json


def dns_suffix(cfg: EnvironmentConfig) -> str:
    return "amazonaws.com.cn" if cfg.partition == "aws-cn" else "amazonaws.com"


def arn(cfg: EnvironmentConfig, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
    return f"arn:{cfg.partition}:{service}:{cfg.region if region else ''}:{cfg.account_id if account else ''}:{resource}"


def policy_json(statements: list[dict]) -> str:
    """An IAM/resource policy document as a Terraform string (tokens resolved, literals escaped)."""
    return tf_json({"Version": "2012-10-17", "Statement": statements}, indent=None)


def construct_id(*parts: object) -> str:
    """A stable construct id from readable parts (sg-0abc, 10.0.0.0/16 -> sg-0abc, 10-0-0-0-16)."""
    return "_".join(re.sub(r"[^A-Za-z0-9]+", "-", str(p)).strip("-") for p in parts)


def cidr_args(cidr: str) -> dict[str, str]:
    net = ipaddress.ip_network(cidr, strict=False)
    return {"cidr_ipv6": cidr} if net.version == 6 else {"cidr_ipv4": cidr}
