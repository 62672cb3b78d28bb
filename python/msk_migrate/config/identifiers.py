"""AWS and image identifiers: one definition each, shared by the environment model (config), the
stacks (infra/mskinfra) and ``build_images.py`` (imagebuild/inputs.py).

Every ``check_*`` returns the value or raises ``ValueError`` with a message that says what a valid
value looks like; callers turn that into their own one-line error (a pydantic field error, or a
:class:`~msk_migrate.errors.UsageError` naming a command-line argument).
"""

from __future__ import annotations

import difflib
import functools
import os
import re

#: Environment name: the file stem of ``infra/environments/<env>.yaml`` and part of every resource name.
#: Lowercase letters, digits and single ``-`` between them, starting with a letter, at most 20.
ENV_NAME = re.compile(r"^(?=.{1,20}$)[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
#: AWS account id: exactly 12 digits (a string: YAML would drop leading zeros of a number).
ACCOUNT_ID = re.compile(r"^\d{12}$")
#: Shape of a region name (commercial, GovCloud, ISO); :func:`msk_regions` says which exist.
REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
#: Docker tag grammar (https://docs.docker.com/reference/cli/docker/image/tag/).
IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
#: An OCI image digest as ECR reports it.
IMAGE_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
VPC_ID = re.compile(r"^vpc-[0-9a-f]{8,17}$")
SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8,17}$")
SECURITY_GROUP_ID = re.compile(r"^sg-[0-9a-f]{8,17}$")
PREFIX_LIST_ID = re.compile(r"^pl-[0-9a-f]{8,17}$")
MSK_CLUSTER_ARN = re.compile(r"^arn:aws[a-z-]*:kafka:([a-z0-9-]+):(\d{12}):cluster/([A-Za-z0-9-]{1,64})/([A-Za-z0-9-]+)$")
KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:(.+)$")
#: Secrets Manager appends ``-`` and 6 random characters to a secret's name in its full ARN.
SECRET_ARN_SUFFIX = re.compile(r"-[A-Za-z0-9]{6}$")
DNS_NAME = re.compile(r"^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def check_env_name(value: str) -> str:
    if not isinstance(value, str) or not ENV_NAME.fullmatch(value):  # fullmatch: "$" alone lets a final newline through
        raise ValueError(f"{value!r} is not an environment name: lowercase letters, digits and single '-', starting with a letter, at most 20 (e.g. dev, prod-eu)")  # noqa: E501
    return value


def check_account_id(value: object) -> str:
    if not isinstance(value, str) or not ACCOUNT_ID.match(value):
        raise ValueError(f"{value!r} is not an AWS account id: a quoted 12-digit string, e.g. \"111111111111\"")
    return value


def check_image_tag(value: str) -> str:
    if not IMAGE_TAG.match(value):
        raise ValueError(f"{value!r} is not an image tag: letters, digits, '_', '.', '-' (max 128), e.g. 0.1.0")
    if value == "latest":
        raise ValueError("'latest' is not a release tag (repositories are tag-immutable, so it cannot move); use a version such as 0.1.0")
    return value


def check_image_digest(value: str) -> str:
    if not IMAGE_DIGEST.match(value):
        raise ValueError(f"{value!r} is not an image digest (sha256: and 64 hex digits)")
    return value


def partition_of(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


@functools.cache
def regions_of(service: str) -> dict[str, str]:
    """Regions where the AWS ``service`` exists -> partition, from botocore's bundled endpoint data
    (botocore is pinned in requirements.lock; no network)."""
    import boto3

    session = boto3.session.Session()
    return {
        region: partition
        for partition in session.get_available_partitions()
        for region in session.get_available_regions(service, partition_name=partition)
    }


def msk_regions() -> dict[str, str]:
    """Regions with Amazon MSK (botocore service ``kafka``) -> partition."""
    return regions_of("kafka")


def check_region(value: str, service: str = "kafka", what: str = "MSK") -> str:
    if not REGION.match(value):
        raise ValueError(f"region {value!r} is not an AWS region (e.g. eu-west-1)")
    known = regions_of(service)
    if value not in known:
        close = difflib.get_close_matches(value, sorted(known), n=4, cutoff=0.6) or ["us-east-1", "eu-west-1"]
        raise ValueError(f"region {value!r} is not an AWS region with {what} (botocore's endpoint data); did you mean {' or '.join(close)}?")
    return value


def parse_msk_arn(arn: str) -> dict[str, str]:
    """``{region, account, name, uuid}`` of an MSK cluster ARN."""
    m = MSK_CLUSTER_ARN.match(arn)
    if not m:
        raise ValueError(f"{arn!r} is not an MSK cluster ARN (arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID)")
    return dict(zip(("region", "account", "name", "uuid"), m.groups()))  # noqa: B905 - zip(strict) is 3.10+; the Spark job runs on 3.9


def check_kms_key_arn(value: str) -> str:
    if not KMS_KEY_ARN.match(value):
        raise ValueError(f"{value!r} is not a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID)")
    return value


def check_secret_arn(value: str, field: str) -> str:
    if not SECRET_ARN.match(value):
        raise ValueError(f"{field} {value!r} is not a Secrets Manager ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)")
    return value


def secret_region(arn: str) -> str:
    """The region of a Secrets Manager secret ARN (a client reads the secret from that region's endpoint)."""
    if SECRET_ARN.match(arn) is None:
        raise ValueError(f"{arn!r} is not a Secrets Manager secret ARN")
    return arn.split(":")[3]


def secret_name(arn: str) -> str:
    """The name part of a Secrets Manager ARN (with its random suffix)."""
    m = SECRET_ARN.match(arn)
    if m is None:
        raise ValueError(f"{arn!r} is not a Secrets Manager secret ARN")
    return m.group(1)


def check_ids(values: list[str], pattern: re.Pattern[str], what: str, example: str) -> list[str]:
    """A list of AWS resource ids (vpc-, subnet-, sg-, pl-): each well-formed, none twice."""
    for v in values:
        if not pattern.match(v):
            raise ValueError(f"{v!r} is not a {what} (e.g. {example})")
    if len(set(values)) != len(values):
        raise ValueError(f"duplicate {what} entries; list each once")
    return values


#: An MSK broker host (``b-N.<cluster>.<id>.cN.kafka.<region>.amazonaws.com``) and its region.
_MSK_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com", re.I)


def msk_region(bootstrap_servers: str, environ: dict[str, str] | None = None) -> str | None:
    """The AWS region of an MSK bootstrap (from its host names), else AWS_REGION/AWS_DEFAULT_REGION."""
    env = environ if environ is not None else os.environ
    m = _MSK_HOST.search(bootstrap_servers)
    if m:
        return m.group(1).lower()
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
