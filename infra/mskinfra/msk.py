"""The MSK target.

- :class:`CreatedMsk` (in the long-lived ``target-<env>`` stack): a new cluster with KMS at rest, TLS in
  transit, IAM auth, optional SCRAM, broker logs, open monitoring, storage autoscaling and safe broker
  defaults. Its outputs (:data:`TARGET_OUTPUTS`) are what ``migration-<env>`` reads.
- :class:`TargetMsk` (in ``migration-<env>``): the cluster the migration writes to -- read from the
  ``target-<env>`` state, or an existing cluster referenced by ARN. Either way it exposes the bootstrap
  string of the chosen auth mode as a Terraform reference, which flows into the connector configs in
  S3 and the Connect workers' environment.
"""

from __future__ import annotations

from pathlib import Path

from cdktf import Postcondition, TerraformOutput, TerraformResourceLifecycle, TerraformStack
from cdktf_cdktf_provider_aws.appautoscaling_policy import AppautoscalingPolicy
from cdktf_cdktf_provider_aws.appautoscaling_target import AppautoscalingTarget
from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.data_aws_msk_bootstrap_brokers import DataAwsMskBootstrapBrokers
from cdktf_cdktf_provider_aws.msk_cluster import MskCluster
from cdktf_cdktf_provider_aws.msk_configuration import MskConfiguration
from cdktf_cdktf_provider_aws.msk_scram_secret_association import MskScramSecretAssociation
from constructs import Construct

from msk_migrate.config.environment import SAFE_BROKER_DEFAULTS, EnvironmentConfig
from msk_migrate.config.identifiers import parse_msk_arn

from .base import remote_state
from .kms import log_group_name
from .util import arn

#: Attribute of aws_msk_cluster / aws_msk_bootstrap_brokers per auth mode (private connectivity).
BOOTSTRAP_ATTRIBUTE = {
    "plaintext": "bootstrap_brokers",
    "mtls": "bootstrap_brokers_tls",
    "scram": "bootstrap_brokers_sasl_scram",
    "iam": "bootstrap_brokers_sasl_iam",
}


def broker_properties(cfg: EnvironmentConfig) -> str:
    props = {**cfg.target.create.server_properties, **SAFE_BROKER_DEFAULTS}
    return "".join(f"{k}={v}\n" for k, v in sorted(props.items()))


#: Outputs of ``target-<env>`` that ``migration-<env>`` reads (name -> description).
TARGET_OUTPUTS = {
    "cluster_arn": "Target MSK cluster ARN",
    "cluster_name": "Target MSK cluster name",
    "cluster_uuid": "Target MSK cluster UUID (IAM topic/group ARNs)",
    "bootstrap_brokers_sasl_iam": "Bootstrap brokers, IAM (9098)",
    "bootstrap_brokers_sasl_scram": "Bootstrap brokers, SCRAM (9096; empty without create.scram)",
    "msk_security_group_id": "Security group of the brokers",
    "kms_key_arn": "KMS key of the environment (MSK at rest; also used by migration-<env>)",
    "broker_log_group": "CloudWatch log group of the broker logs",
    "broker_endpoints": "Broker DNS names, comma-separated (Prometheus scrapes their open-monitoring exporters)",
}


def broker_endpoints_expression(stack: TerraformStack, cluster_arn: str) -> str:
    """``b-1…,b-2…``: every broker's DNS name of ``cluster_arn`` (data.aws_msk_broker_nodes)."""
    from cdktf_cdktf_provider_aws.data_aws_msk_broker_nodes import DataAwsMskBrokerNodes

    nodes = DataAwsMskBrokerNodes(stack, "msk_broker_nodes", cluster_arn=cluster_arn)
    ref = f"data.aws_msk_broker_nodes.{stack.get_logical_id(nodes)}"
    return "${join(\",\", sort(flatten(" + ref + ".node_info_list[*].endpoints)))}"


class CreatedMsk(Construct):
    """A new MSK cluster and what it needs to keep serving (lives in ``target-<env>``)."""

    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        kms_key_arn: str,
        security_group_id: str,
        log_kms_key_arn: str | None,
    ) -> None:
        super().__init__(scope, id_)
        c = cfg.target.create
        self.cluster_name = cfg.msk_cluster_name
        self.log_group = CloudwatchLogGroup(
            self,
            "broker_logs",
            name=log_group_name(cfg, "msk-broker"),
            retention_in_days=cfg.log_retention_days,
            kms_key_id=log_kms_key_arn,
        )
        self.configuration = MskConfiguration(
            self,
            "configuration",
            name=f"{cfg.resource_prefix}-brokers",
            description="msk-migrate safe defaults: no unclean election, no topic auto-creation, min ISR 2, RF 3",
            kafka_versions=[c.kafka_version],
            server_properties=broker_properties(cfg),
        )
        self.cluster = MskCluster(
            self,
            "cluster",
            cluster_name=self.cluster_name,
            kafka_version=c.kafka_version,
            number_of_broker_nodes=c.broker_count,
            enhanced_monitoring=c.enhanced_monitoring,
            broker_node_group_info={
                "instance_type": c.instance_type,
                "client_subnets": c.subnet_ids or cfg.subnet_ids,
                "security_groups": [security_group_id],
                "storage_info": {"ebs_storage_info": {"volume_size": c.ebs_gb}},
            },
            encryption_info={
                "encryption_at_rest_kms_key_arn": kms_key_arn,
                "encryption_in_transit": {"client_broker": "TLS", "in_cluster": True},
            },
            client_authentication={"sasl": {"iam": True, "scram": c.scram}, "unauthenticated": False},
            configuration_info={"arn": self.configuration.arn, "revision": self.configuration.latest_revision},
            open_monitoring={
                "prometheus": {
                    "jmx_exporter": {"enabled_in_broker": True},
                    "node_exporter": {"enabled_in_broker": True},
                }
            },
            logging_info={
                "broker_logs": {"cloudwatch_logs": {"enabled": True, "log_group": self.log_group.name}},
            },
            # The target cluster holds the migrated data and outlives the migration tooling: its stack
            # (target-<env>) is never destroyed by the runbooks, and a destroy of it must be deliberate.
            lifecycle=TerraformResourceLifecycle(
                prevent_destroy=True,
                # Storage autoscaling grows the volumes; Terraform must not shrink them back (MSK cannot).
                ignore_changes=(
                    ["broker_node_group_info[0].storage_info[0].ebs_storage_info[0].volume_size"]
                    if c.max_ebs_gb > c.ebs_gb else None
                ),
            ),
        )
        scram_secrets = list(c.scram_secret_arns)
        if cfg.target.auth.mode == "scram" and cfg.target.auth.secret_arn not in scram_secrets:
            scram_secrets.insert(0, cfg.target.auth.secret_arn)
        if c.scram and scram_secrets:
            MskScramSecretAssociation(
                self, "scram_secrets", cluster_arn=self.cluster.arn, secret_arn_list=scram_secrets
            )
        if c.max_ebs_gb > c.ebs_gb:
            # MSK storage autoscaling: target tracking on KafkaBrokerStorageUtilization, grow only.
            scaling = AppautoscalingTarget(
                self,
                "storage_scaling_target",
                service_namespace="kafka",
                scalable_dimension="kafka:broker-storage:VolumeSize",
                resource_id=self.cluster.arn,
                min_capacity=1,
                max_capacity=c.max_ebs_gb,
            )
            AppautoscalingPolicy(
                self,
                "storage_scaling_policy",
                name=f"{cfg.resource_prefix}-broker-storage",
                policy_type="TargetTrackingScaling",
                service_namespace=scaling.service_namespace,
                scalable_dimension=scaling.scalable_dimension,
                resource_id=scaling.resource_id,
                target_tracking_scaling_policy_configuration={
                    "predefined_metric_specification": {"predefined_metric_type": "KafkaBrokerStorageUtilization"},
                    "target_value": c.storage_target_percent,
                    "disable_scale_in": True,
                },
            )

    def add_outputs(self, stack: TerraformStack, *, security_group_id: str, kms_key_arn: str) -> None:
        values = {
            "cluster_arn": self.cluster.arn,
            "cluster_name": self.cluster.cluster_name,
            "cluster_uuid": self.cluster.cluster_uuid,
            "bootstrap_brokers_sasl_iam": self.cluster.bootstrap_brokers_sasl_iam,
            "bootstrap_brokers_sasl_scram": self.cluster.bootstrap_brokers_sasl_scram,
            "msk_security_group_id": security_group_id,
            "kms_key_arn": kms_key_arn,
            "broker_log_group": self.log_group.name,
            # Read here, where the cluster is created (deferred to apply on a first plan), so migration-<env>
            # gets plain names from this state instead of calling ListNodes itself.
            "broker_endpoints": broker_endpoints_expression(stack, self.cluster.arn),
        }
        for name, description in TARGET_OUTPUTS.items():
            TerraformOutput(stack, name, value=values[name], description=description)


class TargetMsk(Construct):
    """The cluster ``migration-<env>`` writes to: from the ``target-<env>`` state, or existing by ARN."""

    cluster_arn: str
    cluster_name: str
    bootstrap: str  #: bootstrap string of target.auth.mode (a Terraform reference)
    bootstrap_by_mode: dict[str, str]
    topic_arn_prefix: str  #: arn:...:topic/NAME/UUID
    group_arn_prefix: str  #: arn:...:group/NAME/UUID
    security_group_id: str | None  #: the created cluster's broker security group (None: existing cluster)
    kms_key_arn: str | None  #: the environment key kept by target-<env> (None: existing cluster)

    def __init__(
        self, scope: Construct, id_: str, cfg: EnvironmentConfig, *, outdir: Path, local_state_dir: Path
    ) -> None:
        super().__init__(scope, id_)
        mode = cfg.target.auth.mode
        self.cluster_name = cfg.msk_cluster_name
        if cfg.target.create:
            self._from_target_stack(cfg, outdir, local_state_dir)
        else:
            self._existing(cfg)
        self.bootstrap = self.bootstrap_by_mode[mode]

    def _from_target_stack(self, cfg: EnvironmentConfig, outdir: Path, local_state_dir: Path) -> None:
        state = remote_state(self, "target_state", cfg, cfg.target_stack_name, outdir, local_state_dir)
        state.add_override(
            "lifecycle.postcondition",
            [{
                "condition": '${can(self.outputs.cluster_arn)}',
                "error_message": f"{cfg.target_stack_name} holds no MSK cluster yet: deploy it first "
                f"(npx cdktf deploy {cfg.target_stack_name}), then {cfg.stack_name}.",
            }],
        )
        self.cluster_arn = state.get_string("cluster_arn")
        uuid = state.get_string("cluster_uuid")
        self.bootstrap_by_mode = {"iam": state.get_string("bootstrap_brokers_sasl_iam")}
        if cfg.target.create.scram:
            self.bootstrap_by_mode["scram"] = state.get_string("bootstrap_brokers_sasl_scram")
        self.security_group_id = state.get_string("msk_security_group_id")
        self.kms_key_arn = state.get_string("kms_key_arn")
        self.broker_endpoints: str | None = state.get_string("broker_endpoints")
        # arn:aws:kafka:R:A:cluster/NAME/UUID -> arn:aws:kafka:R:A:topic/NAME/UUID
        self.topic_arn_prefix = arn(cfg, "kafka", f"topic/{self.cluster_name}/{uuid}")
        self.group_arn_prefix = arn(cfg, "kafka", f"group/{self.cluster_name}/{uuid}")

    def _existing(self, cfg: EnvironmentConfig) -> None:
        self.security_group_id = None
        self.kms_key_arn = None
        cluster_arn = cfg.target.existing_cluster_arn
        parts = parse_msk_arn(cluster_arn)
        mode = cfg.target.auth.mode
        attribute = BOOTSTRAP_ATTRIBUTE[mode]
        self.brokers = DataAwsMskBootstrapBrokers(
            self,
            "bootstrap",
            cluster_arn=cluster_arn,
            lifecycle=TerraformResourceLifecycle(
                postcondition=[
                    Postcondition(
                        condition=f'${{self.{attribute} != ""}}',
                        error_message=f"MSK cluster {parts['name']} has no {mode} listener "
                        f"({attribute} is empty); enable it on the cluster or change target.auth.mode.",
                    )
                ]
            ),
        )
        self.cluster_arn = cluster_arn
        self.bootstrap_by_mode = {m: getattr(self.brokers, attr) for m, attr in BOOTSTRAP_ATTRIBUTE.items()}
        self.topic_arn_prefix = arn(cfg, "kafka", f"topic/{parts['name']}/{parts['uuid']}")
        self.group_arn_prefix = arn(cfg, "kafka", f"group/{parts['name']}/{parts['uuid']}")
