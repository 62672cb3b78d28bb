"""The MSK target: created here (KMS at rest, TLS in transit, IAM auth, optional SCRAM, broker logs,
open monitoring, safe broker defaults) or referenced by ARN. Either way :class:`TargetMsk` exposes
the bootstrap string of the chosen auth mode as a Terraform reference, which flows into the connector
configs in S3 and the Connect workers' environment.
"""

from __future__ import annotations

from constructs import Construct
from cdktf import Postcondition, TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.data_aws_msk_bootstrap_brokers import DataAwsMskBootstrapBrokers
from cdktf_cdktf_provider_aws.msk_cluster import MskCluster
from cdktf_cdktf_provider_aws.msk_configuration import MskConfiguration
from cdktf_cdktf_provider_aws.msk_scram_secret_association import MskScramSecretAssociation

from msk_migrate.config.environment import SAFE_BROKER_DEFAULTS, EnvironmentConfig, parse_msk_arn

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


class TargetMsk(Construct):
    cluster_arn: str
    cluster_name: str
    bootstrap: str  #: bootstrap string of target.auth.mode (a Terraform reference)
    bootstrap_by_mode: dict[str, str]
    topic_arn_prefix: str  #: arn:...:topic/NAME/UUID
    group_arn_prefix: str  #: arn:...:group/NAME/UUID

    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        kms_key_arn: str,
        security_group_id: str | None,
        log_kms_key_arn: str | None,
    ) -> None:
        super().__init__(scope, id_)
        mode = cfg.target.auth.mode
        self.cluster_name = cfg.msk_cluster_name
        if cfg.target.create:
            self._create(cfg, kms_key_arn, security_group_id, log_kms_key_arn)
        else:
            self._existing(cfg)
        self.bootstrap = self.bootstrap_by_mode[mode]

    def _create(self, cfg: EnvironmentConfig, kms_key_arn: str, sg_id: str, log_kms_key_arn: str | None) -> None:
        c = cfg.target.create
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
                "security_groups": [sg_id],
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
            # The target cluster holds the migrated data and outlives the migration tooling: a
            # `cdktf destroy` of this stack must never take it along (docs/runbooks/migration.md step 10).
            lifecycle=TerraformResourceLifecycle(prevent_destroy=True),
        )
        scram_secrets = list(c.scram_secret_arns)
        if cfg.target.auth.mode == "scram" and cfg.target.auth.secret_arn not in scram_secrets:
            scram_secrets.insert(0, cfg.target.auth.secret_arn)
        if c.scram and scram_secrets:
            MskScramSecretAssociation(
                self, "scram_secrets", cluster_arn=self.cluster.arn, secret_arn_list=scram_secrets
            )
        self.cluster_arn = self.cluster.arn
        self.bootstrap_by_mode = {"iam": self.cluster.bootstrap_brokers_sasl_iam}
        if c.scram:
            self.bootstrap_by_mode["scram"] = self.cluster.bootstrap_brokers_sasl_scram
        # arn:aws:kafka:R:A:cluster/NAME/UUID -> arn:aws:kafka:R:A:topic/NAME/UUID (uuid known after apply)
        self.topic_arn_prefix = arn(cfg, "kafka", f"topic/{self.cluster_name}/{self.cluster.cluster_uuid}")
        self.group_arn_prefix = arn(cfg, "kafka", f"group/{self.cluster_name}/{self.cluster.cluster_uuid}")

    def _existing(self, cfg: EnvironmentConfig) -> None:
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
