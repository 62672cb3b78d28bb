"""Validation of the command's arguments. Every failure is a :class:`UsageError` (one line, exit 2)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# One definition of each identifier (account, env name, tag), shared with the environment model and the stacks.
from ..config.identifiers import ACCOUNT_ID as _ACCOUNT
from ..config.identifiers import ENV_NAME as _ENV
from ..config.identifiers import IMAGE_TAG as _TAG
from ..errors import UsageError
from .images import IMAGE_NAMES

# ECR repository names (CreateRepository's pattern), without the namespace slash we never use.
_REPO = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
_KAFKA = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Region:
    name: str
    partition: str
    dns_suffix: str

    def registry(self, account: str) -> str:
        """The ECR registry host of ``account`` in this region."""
        return f"{account}.dkr.ecr.{self.name}.{self.dns_suffix}"


def account_id(value: str) -> str:
    value = value.strip()
    if not _ACCOUNT.match(value):
        raise UsageError("ACCOUNT", f"{value!r} is not a 12-digit AWS account id", "pass the account that `cdktf deploy` used, e.g. 012345678910")
    return value


@functools.cache
def _ecr_regions() -> dict[str, tuple[str, str]]:
    """region -> (partition, dns suffix), from botocore's bundled endpoint data (no network)."""
    import boto3
    import botocore.loaders

    suffixes = {p["partition"]: p["dnsSuffix"] for p in botocore.loaders.Loader().load_data("endpoints")["partitions"]}
    session = boto3.session.Session()
    out: dict[str, tuple[str, str]] = {}
    for partition in session.get_available_partitions():
        for region in session.get_available_regions("ecr", partition_name=partition):
            out[region] = (partition, suffixes.get(partition, "amazonaws.com"))
    return out


def region(value: str) -> Region:
    value = value.strip()
    known = _ecr_regions()
    if value not in known:
        close = sorted(r for r in known if r.split("-")[0] == value.split("-")[0])[:6]
        hint = f"known regions include {', '.join(close)}" if close else "e.g. us-east-1, eu-west-1"
        raise UsageError("REGION", f"{value!r} is not an AWS region with ECR known to botocore", hint)
    partition, suffix = known[value]
    return Region(value, partition, suffix)


def image_names(values: tuple[str, ...] | list[str]) -> list[str]:
    """``--images`` (repeatable, comma-separated) -> names in build order. Empty -> all images."""
    requested = [v.strip() for item in values for v in item.split(",") if v.strip()]
    if not requested:
        return list(IMAGE_NAMES)
    unknown = [v for v in requested if v not in IMAGE_NAMES]
    if unknown:
        raise UsageError("--images", f"unknown image {unknown[0]!r}", f"choose from {', '.join(IMAGE_NAMES)}")
    return [name for name in IMAGE_NAMES if name in requested]


def release_tag(value: str | None) -> str | None:
    if value is None:
        return None
    if not _TAG.match(value):
        raise UsageError("--tag", f"{value!r} is not a valid image tag", "use letters, digits, '_', '.', '-' (max 128), e.g. v1.4.0")
    if value == "latest":
        raise UsageError("--tag", "'latest' is not a release tag", "use a version such as v1.4.0; the manifest pins digests, not tags")
    return value


def env_name(value: str) -> str:
    if not _ENV.match(value):
        raise UsageError("--env", f"{value!r} is not an environment name", "lowercase letters, digits and '-', e.g. dev or prod")
    return value


def repository_name(value: str, field: str = "--repository-prefix") -> str:
    if not (2 <= len(value) <= 256 and _REPO.match(value)):
        raise UsageError(field, f"{value!r} is not a valid ECR repository name", "lowercase letters, digits, '.', '_', '-' and '/' between parts")
    return value


def kafka_version(value: str | None) -> str | None:
    if value is None:
        return None
    m = _KAFKA.match(value)
    if not m:
        raise UsageError("--kafka-version", f"{value!r} is not a Kafka release", "give major.minor.patch, e.g. 3.9.2 or 4.1.2")
    if int(m.group(1)) not in (3, 4):
        raise UsageError("--kafka-version", f"{value} is not a 3.x or 4.x release", "the Connect image supports Kafka 3.x and 4.x")
    return value


_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::(\d{1,5}))?$")


def registry_host(value: str) -> str:
    """``--registry``: a registry host[:port] (no scheme, no path)."""
    value = value.strip()
    m = _HOST.match(value)
    if not m or (m.group(1) and not 0 < int(m.group(1)) < 65536):
        raise UsageError("--registry", f"{value!r} is not a registry host[:port]", "e.g. 127.0.0.1:5000 (no https://, no path)")
    return value
