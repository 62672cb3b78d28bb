"""The validation job's second home (``validation.glue: true``): an AWS Glue 5.0 Spark job, its network
connection and its role.

``msk-migrate validate --env E --on glue`` starts runs of this job (:mod:`msk_migrate.aws.glue` holds the
names both sides use). The job runs the same package the build module ships for the EMR Serverless
application (:mod:`.emr_serverless`):

- Spark job ``<prefix>-validation`` (Glue :data:`GLUE_VERSION`, ``glueetl``, Python 3, ``validation.glue_workers``
  G.1X workers): its script is the version's entry script at the digest-free key
  ``validation/job/<version>/spark_entry.py`` of the config bucket (a job's script is the stack's, the
  package's digest changes with every build); ``--extra-py-files``/``--extra-jars`` name the digest's zip and
  jars per run; the job's own jars first (``--user-jars-first``: its kafka-clients over Glue's), driver logs
  continuously to CloudWatch (``/aws-glue/*``), no retries (a run is a verdict, not a task to repeat);
- network connection ``<prefix>-validation`` (NETWORK) in the first of ``subnet_ids`` (its availability zone
  read from the subnet) with the EMR Serverless home's validation security group, which gets the
  self-referencing all-TCP ingress and egress Glue requires between its workers (nothing else changes);
- role ``<prefix>-validation-glue`` (trusted by Glue of this account only): the EMR execution role's
  statements (:func:`.emr_serverless.execution_statements`: the package read, reports and logs written, the
  clusters' secrets, read-only MSK IAM), the network interfaces Glue makes in that subnet with that group,
  and the ``/aws-glue/*`` log groups.
"""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformStack
from cdktf_cdktf_provider_aws.data_aws_subnet import DataAwsSubnet
from cdktf_cdktf_provider_aws.glue_connection import GlueConnection
from cdktf_cdktf_provider_aws.glue_job import GlueJob
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_security_group_egress_rule import VpcSecurityGroupEgressRule
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from msk_migrate import __version__
from msk_migrate.aws.glue import (
    GLUE_VERSION,
    LOG_GROUP_PREFIX,
    TIMEOUT_MINUTES,
    WORKER_TYPE,
    connection_name,
    entry_key,
    job_name,
    role_name,
)
from msk_migrate.config.environment import EnvironmentConfig

from .checkov import skip
from .emr_serverless import execution_statements
from .util import policy_json

#: Runs of the job at once (each ``validate --on glue`` is one; a fourth waits for an error, not a queue).
MAX_CONCURRENT_RUNS = 3
#: Glue's own tag on the network interfaces it makes for a connection (what its role may tag, nothing else).
GLUE_ENI_TAG = "aws-glue-service-resource"
#: EC2 reads Glue makes to set up a connection; IAM gives them no resource-level permission.
EC2_DESCRIBE = ["ec2:DescribeNetworkInterfaces", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups",
                "ec2:DescribeSubnets", "ec2:DescribeVpcAttribute", "ec2:DescribeVpcEndpoints"]


def trust_policy(cfg: EnvironmentConfig) -> str:
    return policy_json([{
        "Sid": "GlueOfThisAccount",
        "Effect": "Allow",
        "Principal": {"Service": "glue.amazonaws.com"},
        "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"aws:SourceAccount": cfg.account_id}},
    }])


def network_statements(cfg: EnvironmentConfig, *, subnet_arn: str, security_group_arn: str) -> list[dict]:
    """What Glue does with the role for the connection: interfaces in the connection's subnet with its group."""
    ec2 = f"arn:{cfg.partition}:ec2:{cfg.region}:{cfg.account_id}"
    return [
        {"Sid": "GlueConnectionReads", "Effect": "Allow", "Action": EC2_DESCRIBE, "Resource": "*"},
        {"Sid": "GlueConnectionInterfaces", "Effect": "Allow", "Action": "ec2:CreateNetworkInterface",
         "Resource": [f"{ec2}:network-interface/*", subnet_arn, security_group_arn]},
        {"Sid": "GlueConnectionInterfacesGone", "Effect": "Allow", "Action": "ec2:DeleteNetworkInterface",
         "Resource": f"{ec2}:network-interface/*", "Condition": {"ArnEquals": {"ec2:Subnet": subnet_arn}}},
        {"Sid": "GlueConnectionInterfaceTags", "Effect": "Allow", "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
         "Resource": f"{ec2}:network-interface/*", "Condition": {"ForAllValues:StringEquals": {"aws:TagKeys": [GLUE_ENI_TAG]}}},
    ]


def log_statements(cfg: EnvironmentConfig) -> list[dict]:
    groups = f"arn:{cfg.partition}:logs:{cfg.region}:{cfg.account_id}:log-group:{LOG_GROUP_PREFIX}*"
    return [{"Sid": "GlueLogs", "Effect": "Allow", "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
             "Resource": [groups, f"{groups}:log-stream:*"]}]


class GlueValidationJob(Construct):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, security_group: SecurityGroup, bucket_arn: str,
                 key_arn: str, secret_arns: list[str], secret_kms_keys: list[str], target_cluster_arn: str,
                 target_topic_arn_prefix: str, target_group_arn_prefix: str) -> None:
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        subnet = DataAwsSubnet(self, "subnet", id=cfg.subnet_ids[0])
        sg = security_group
        # Glue's workers talk to each other through the connection's group: all TCP to and from itself (Glue
        # refuses a connection whose group lacks it).
        self_in = VpcSecurityGroupIngressRule(self, "self_in", security_group_id=sg.id, referenced_security_group_id=sg.id,
                                              ip_protocol="tcp", from_port=0, to_port=65535,
                                              description=f"{p} Glue validation workers among themselves")
        for check in ("CKV_AWS_24", "CKV_AWS_25", "CKV_AWS_260"):
            skip(self_in, check, "self-referencing: only members of this group (the validation job's own Glue workers) are "
                 "admitted, no CIDR at all; Glue requires all TCP between the workers of a job with a connection")
        VpcSecurityGroupEgressRule(self, "self_out", security_group_id=sg.id, referenced_security_group_id=sg.id, ip_protocol="tcp",
                                   from_port=0, to_port=65535, description=f"{p} Glue validation workers among themselves")
        self.connection = GlueConnection(
            self, "connection", name=connection_name(cfg), connection_type="NETWORK",
            description=f"{p} validation job: the environment's subnet and validation security group",
            physical_connection_requirements={"availability_zone": subnet.availability_zone, "subnet_id": subnet.id,
                                              "security_group_id_list": [sg.id]},
        )
        self.role = IamRole(self, "role", name=role_name(cfg), assume_role_policy=trust_policy(cfg),
                            description=f"{p} validation job on Glue: its package, its reports, the clusters read-only")
        statements = execution_statements(
            cfg, bucket_arn=bucket_arn, key_arn=key_arn, secret_arns=secret_arns, secret_kms_keys=secret_kms_keys,
            target_cluster_arn=target_cluster_arn, target_topic_arn_prefix=target_topic_arn_prefix,
            target_group_arn_prefix=target_group_arn_prefix)
        statements += network_statements(cfg, subnet_arn=subnet.arn, security_group_arn=sg.arn)
        statements += log_statements(cfg)
        policy = IamRolePolicy(self, "policy", name="validation", role=self.role.id, policy=policy_json(statements))
        self.job = GlueJob(
            self, "job", name=job_name(cfg), role_arn=self.role.arn, glue_version=GLUE_VERSION, worker_type=WORKER_TYPE,
            number_of_workers=cfg.validation.glue_workers, max_retries=0, timeout=TIMEOUT_MINUTES,
            execution_class="STANDARD",  # started at once (FLEX may wait for spare capacity: a gate waits on this run)
            description=f"{p} validation job (msk-migrate validate --on glue)",
            command={"name": "glueetl", "python_version": "3",
                     "script_location": f"s3://{cfg.config_bucket_name}/{entry_key(__version__)}"},
            connections=[self.connection.name],
            execution_property={"max_concurrent_runs": MAX_CONCURRENT_RUNS},
            default_arguments={"--user-jars-first": "true", "--enable-continuous-cloudwatch-log": "true",
                               "--job-language": "python"},
            depends_on=[policy],
        )
        skip(self.job, "CKV_AWS_195", "what the job writes goes to the config bucket under its default SSE-KMS stack key "
             "(reports through the job's own S3 client), it keeps no job bookmarks, and its logs are Glue's /aws-glue/* "
             "groups; a security configuration would add KMS on those log groups, not provisioned here (docs/validation.md)")
        stack = TerraformStack.of(self)
        TerraformOutput(stack, "validation_glue_job_name", value=self.job.name,
                        description="Glue job of the validation job (msk-migrate validate --on glue)")
        TerraformOutput(stack, "validation_glue_role_arn", value=self.role.arn, description="Role of the Glue validation job")
