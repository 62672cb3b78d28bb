"""The validation job's home: an EMR Serverless application, its security group and its execution role.

``msk-migrate validate --env E --on emr-serverless`` submits the PySpark validation job here
(:mod:`msk_migrate.aws.emr_serverless` holds the names both sides use). Why EMR Serverless is the home
every environment gets: the job is a plain ``spark-submit`` of ``spark_entry.py`` with
``--jars``/``--py-files`` (what EMR Serverless takes as is), the application costs nothing while idle
(auto-stop), runs in the environment's own subnets with its own security group, and the Spark release is
pinned by one label. Glue 5 is the second home, per environment and off by default (:mod:`.glue_validation`).

- application ``<prefix>-validation``: Spark on :data:`RELEASE_LABEL`, in ``subnet_ids``, stopped after
  15 idle minutes, capped at :data:`MAX_CAPACITY`;
- security group ``<prefix>-validation``: egress to the source brokers' ports, to the target brokers'
  port (and the matching ingress on a created cluster's group, or on ``target.network`` groups when
  ``add_ingress_rules``), to the schema registries' ports, HTTPS to AWS APIs (:mod:`.endpoints`); no ingress at all;
- execution role ``<prefix>-validation-job`` (trusted by EMR Serverless of this account only): the job
  package read-only under ``validation/job/``, reports and logs written under ``validation/reports/`` and
  ``validation/logs/`` of the config bucket (+ the stack key through S3), the migration's proof mark under
  ``proof/<migration>/`` read and replaced (the follower's chained runs continue it), the clusters' secrets,
  and read-only MSK IAM on the migration's topics and groups.
"""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformStack
from cdktf_cdktf_provider_aws.emrserverless_application import EmrserverlessApplication
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from msk_migrate.aws.emr_serverless import (
    JOB_PREFIX,
    LOGS_PREFIX,
    RELEASE_LABEL,
    REPORTS_PREFIX,
    application_name,
    execution_role_name,
)
from msk_migrate.config.environment import EnvironmentConfig, parse_msk_arn

from .checkov import skip
from .iam_policy import (
    SOURCE_CLUSTER_ACTIONS,
    SOURCE_GROUP_ACTIONS,
    SOURCE_TOPIC_ACTIONS,
    msk_statements,
    source_group_patterns,
    source_topic_patterns,
    target_group_patterns,
    target_topic_patterns,
)
from .network import _group, _Rules
from .proof_policy import mark_statements
from .util import construct_id, dns_suffix, policy_json

#: Upper bound of one application's workers (a validation of terabytes fits; the bill stops here).
MAX_CAPACITY = {"cpu": "64 vCPU", "memory": "256 GB", "disk": "1000 GB"}
#: Minutes without a job before the application stops (no charge while stopped).
IDLE_STOP_MINUTES = 15


def trust_policy(cfg: EnvironmentConfig) -> str:
    return policy_json([{
        "Sid": "EmrServerlessOfThisAccount",
        "Effect": "Allow",
        "Principal": {"Service": "emr-serverless.amazonaws.com"},
        "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"aws:SourceAccount": cfg.account_id}},
    }])


def execution_statements(cfg: EnvironmentConfig, *, bucket_arn: str, key_arn: str, secret_arns: list[str], secret_kms_keys: list[str],
                         target_cluster_arn: str, target_topic_arn_prefix: str, target_group_arn_prefix: str) -> list[dict]:
    """The execution role's policy: what the job reads and writes, nothing else."""
    s3_via = {"StringEquals": {"kms:ViaService": f"s3.{cfg.region}.{dns_suffix(cfg)}"}}
    statements: list[dict] = [
        {"Sid": "ReadJobPackage", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [f"{bucket_arn}/{JOB_PREFIX}*"]},
        {"Sid": "WriteReportsAndLogs", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
         "Resource": [f"{bucket_arn}/{REPORTS_PREFIX}*", f"{bucket_arn}/{LOGS_PREFIX}*"]},
        {"Sid": "ListValidationPrefixes", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": [bucket_arn],
         "Condition": {"StringLike": {"s3:prefix": [f"{JOB_PREFIX}*", f"{REPORTS_PREFIX}*", f"{LOGS_PREFIX}*"]}}},
        {"Sid": "BucketKeyThroughS3", "Effect": "Allow", "Action": ["kms:Decrypt", "kms:GenerateDataKey"], "Resource": [key_arn],
         "Condition": s3_via},
    ]
    # the follower's chained runs (validate --follow --engine spark --on ...) continue the migration's mark
    statements += mark_statements(cfg, bucket_arn, key_arn, write=True, key=False)
    if secret_arns:
        statements.append({"Sid": "ReadClusterSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                           "Resource": sorted(set(secret_arns))})
        if secret_kms_keys:
            statements.append({"Sid": "DecryptClusterSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                               "Resource": sorted(set(secret_kms_keys)),
                               "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{cfg.region}.{dns_suffix(cfg)}"}}})
    if cfg.target.auth.mode == "iam":
        statements += msk_statements("TargetMskRead", target_cluster_arn, target_topic_arn_prefix, target_group_arn_prefix,
                                     SOURCE_CLUSTER_ACTIONS, SOURCE_TOPIC_ACTIONS, SOURCE_GROUP_ACTIONS,
                                     target_topic_patterns(cfg), target_group_patterns(cfg))
    if cfg.source.auth.mode == "iam":
        src = parse_msk_arn(cfg.source.msk_cluster_arn)
        src_arn = f"arn:{cfg.partition}:kafka:{src['region']}:{src['account']}"
        statements += msk_statements("SourceMskRead", cfg.source.msk_cluster_arn,
                                     f"{src_arn}:topic/{src['name']}/{src['uuid']}", f"{src_arn}:group/{src['name']}/{src['uuid']}",
                                     SOURCE_CLUSTER_ACTIONS, SOURCE_TOPIC_ACTIONS, SOURCE_GROUP_ACTIONS,
                                     source_topic_patterns(cfg), source_group_patterns(cfg))
    return statements


class ValidationJobHome(_Rules):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, msk_security_group_id: str | None, bucket_arn: str,
                 key_arn: str, secret_arns: list[str], secret_kms_keys: list[str], target_cluster_arn: str,
                 target_topic_arn_prefix: str, target_group_arn_prefix: str) -> None:
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        self.security_group = sg = _group(self, cfg, "validation", "msk-migrate validation job (EMR Serverless)")
        skip(sg, "CKV2_AWS_5", "attached to the EMR Serverless application's network_configuration below, "
             "which checkov does not follow")
        for port in cfg.source.ports():
            self._egress_to_peers(sg, port, cfg.source.network, f"validation job to source brokers :{port}")
        tport = cfg.target.port
        if msk_security_group_id is not None:
            self._sg_flow(sg, ("msk_sg", msk_security_group_id), tport, f"validation job to target MSK :{tport}")
        else:
            self._egress_to_peers(sg, tport, cfg.target.network, f"validation job to target MSK :{tport}")
            if cfg.target.add_ingress_rules:
                for sg_id in cfg.target.network.security_group_ids:
                    VpcSecurityGroupIngressRule(
                        self, construct_id("target_in", sg_id, tport), security_group_id=sg_id, referenced_security_group_id=sg.id,
                        ip_protocol="tcp", from_port=tport, to_port=tport, description=f"{p} validation job to MSK :{tport}",
                    )
        # The proof per record reads the schema registries; AWS APIs on 443: mskinfra.endpoints.AwsApis admits this group.
        self._egress_to_registries(sg, cfg, "validation job")

        self.role = IamRole(self, "execution", name=execution_role_name(cfg), assume_role_policy=trust_policy(cfg),
                            description=f"{p} validation job on EMR Serverless: its package, its reports, the clusters read-only")
        policy = IamRolePolicy(self, "execution_policy", name="validation", role=self.role.id, policy=policy_json(execution_statements(
            cfg, bucket_arn=bucket_arn, key_arn=key_arn, secret_arns=secret_arns, secret_kms_keys=secret_kms_keys,
            target_cluster_arn=target_cluster_arn, target_topic_arn_prefix=target_topic_arn_prefix,
            target_group_arn_prefix=target_group_arn_prefix)))
        self.application = EmrserverlessApplication(
            self, "application", name=application_name(cfg), release_label=RELEASE_LABEL, type="SPARK",
            network_configuration={"subnet_ids": list(cfg.subnet_ids), "security_group_ids": [sg.id]},
            auto_start_configuration={"enabled": True},
            auto_stop_configuration={"enabled": True, "idle_timeout_minutes": IDLE_STOP_MINUTES},
            maximum_capacity=MAX_CAPACITY,
            depends_on=[policy],
        )
        stack = TerraformStack.of(self)
        TerraformOutput(stack, "validation_application_id", value=self.application.id,
                        description="EMR Serverless application of the validation job (msk-migrate validate --on emr-serverless)")
        TerraformOutput(stack, "validation_execution_role_arn", value=self.role.arn, description="Execution role of the validation job")
