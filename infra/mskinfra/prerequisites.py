"""What must exist before the first deploy, checked against the account (describe calls only, nothing created).

The environment file names resources the stacks use but do not create: the VPC and its subnets, the
operator certificate, an existing private hosted zone, an existing MSK cluster and its broker security
groups. Terraform would find a missing one only part-way through an apply, after creating other
resources; :func:`check_prerequisites` finds it first and raises one :class:`UsageError` naming the
field of ``<env>.yaml`` and the fix. (A certificate of another region is refused offline already,
when the file is loaded.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.errors import UnreachableError, UsageError

#: Error codes meaning "no such resource" per service (anything else is a real failure, reported as such).
_MISSING = {
    "InvalidVpcID.NotFound", "InvalidSubnetID.NotFound", "InvalidGroup.NotFound", "ResourceNotFoundException",
    "NoSuchHostedZone", "NotFoundException", "InvalidParameterValue", "ValidationException",
}


def _missing(exc: Exception) -> bool:
    from botocore.exceptions import ClientError

    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in _MISSING


def check_prerequisites(cfg: EnvironmentConfig, file_name: str, client: Callable[[str], Any]) -> list[str]:
    """Raise UsageError for the first missing prerequisite; return what was checked (one line each).

    ``client(service)`` makes a boto3 client of the environment's account and region.
    """
    checked: list[str] = []

    def refuse(field: str, problem: str, fix: str) -> UsageError:
        return UsageError(f"{file_name}: {field}", problem, fix)

    def call(what: str, fn: Callable[[], Any], field: str, problem: str, fix: str) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn()
        except ClientError as exc:
            if _missing(exc):
                raise refuse(field, problem, fix) from None
            raise UnreachableError(f"{what}: {exc}") from None
        except BotoCoreError as exc:
            raise UnreachableError(f"{what}: {exc}") from None

    where = f"account {cfg.account_id}, {cfg.region}"
    ec2 = client("ec2")
    call("ec2 DescribeVpcs", lambda: ec2.describe_vpcs(VpcIds=[cfg.vpc_id]), "vpc_id",
         f"{cfg.vpc_id} does not exist in {where}", "create the VPC first or name an existing one")
    checked.append(f"vpc_id {cfg.vpc_id}")
    for i, subnet in enumerate(cfg.subnet_ids):
        found = call("ec2 DescribeSubnets", lambda s=subnet: ec2.describe_subnets(SubnetIds=[s]), f"subnet_ids[{i}]",
                     f"{subnet} does not exist in {where}", "create it first or name an existing private subnet of vpc_id")
        vpc = found["Subnets"][0]["VpcId"]
        if vpc != cfg.vpc_id:
            raise refuse(f"subnet_ids[{i}]", f"{subnet} is in {vpc}, not in vpc_id {cfg.vpc_id}", "name subnets of vpc_id")
    checked.append(f"subnet_ids {', '.join(cfg.subnet_ids)}")
    tls = cfg.operator_tls
    acm = client("acm")
    cert = call("acm DescribeCertificate", lambda: acm.describe_certificate(CertificateArn=tls.certificate_arn),
                "operator_tls.certificate_arn", f"{tls.certificate_arn} does not exist in {where}",
                "request or import the certificate in ACM first")["Certificate"]
    if cert.get("Status") != "ISSUED":
        raise refuse("operator_tls.certificate_arn", f"{tls.certificate_arn} is {cert.get('Status')}, not ISSUED",
                     "complete its validation first")
    checked.append(f"operator_tls.certificate_arn {tls.certificate_arn} (ISSUED)")
    if tls.hosted_zone_id:
        r53 = client("route53")
        zone = call("route53 GetHostedZone", lambda: r53.get_hosted_zone(Id=tls.hosted_zone_id), "operator_tls.hosted_zone_id",
                    f"{tls.hosted_zone_id} does not exist", "create the private zone first, or drop hosted_zone_id to let the stack create it")
        vpcs = {v.get("VPCId") for v in zone.get("VPCs") or []}
        if cfg.vpc_id not in vpcs:
            raise refuse("operator_tls.hosted_zone_id", f"{tls.hosted_zone_id} is not a private zone of vpc_id {cfg.vpc_id}",
                         "associate the zone with the VPC first")
        checked.append(f"operator_tls.hosted_zone_id {tls.hosted_zone_id}")
    arn = cfg.target.existing_cluster_arn
    if arn:
        kafka = client("kafka")
        call("kafka DescribeCluster", lambda: kafka.describe_cluster(ClusterArn=arn), "target.existing_cluster_arn",
             f"{arn} does not exist in {where}", "name the existing cluster's ARN, or use target.create")
        checked.append(f"target.existing_cluster_arn {arn}")
        groups = list(cfg.target.network.security_group_ids)
        for i, sg in enumerate(groups):
            call("ec2 DescribeSecurityGroups", lambda s=sg: ec2.describe_security_groups(GroupIds=[s]),
                 f"target.network.security_group_ids[{i}]", f"{sg} does not exist in {where}", "name the brokers' security group")
        if groups:
            checked.append(f"target.network.security_group_ids {', '.join(groups)}")
    return checked
