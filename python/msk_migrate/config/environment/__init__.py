"""The typed description of one deployment environment (``infra/environments/<env>.yaml``).

One file per environment; ``infra/main.py`` turns each into the CDKTF stacks ``migration-<env>`` (and
``target-<env>`` when it creates its MSK cluster). The file is validated once, here, and the first
problem becomes one line that names the field and the fix (:class:`~msk_migrate.errors.UsageError`,
exit code 2). Nothing else re-validates it.

Cut by concern (each module small, each model's fields documented in its ``Field`` definitions, from
which docs/infra.md's tables are generated -- :mod:`.docs`):

- :mod:`..identifiers` -- AWS and image identifiers (shared with infra and build_images.py);
- :mod:`.network` -- network peers (operators, brokers, AWS APIs);
- :mod:`.clusters` -- the source cluster and the MSK target (created or existing);
- :mod:`.services` -- the Fargate services (Connect sizing/autoscaling, Prometheus, Grafana);
- :mod:`.monitoring` -- Cloud Map namespace, Prometheus, Grafana, Alertmanager;
- :mod:`.proof` -- the proof follower service (``validate --follow`` on Fargate);
- :mod:`.validation` -- the validation job's optional Glue home (``validate --on glue``);
- :mod:`.state` -- Terraform state backend and ECR lifecycle;
- :mod:`.model` -- the root :class:`EnvironmentConfig` with its cross-field checks (model validators,
  run once every field is valid) and the loaders.

The Kafka-facing parts reuse the shared models: the source is a :class:`ClusterEndpoint` (plus where
its brokers live on the network), the target's ``auth`` is an :class:`AuthConfig`, ``migration`` is a
:class:`MigrationSpec` and ``worker`` a :class:`WorkerSpec` -- the same models the connector renderer and
the local rehearsal consume. Secrets never appear here: only Secrets Manager ARNs.
"""

from ..identifiers import msk_regions, parse_msk_arn, partition_of
from .clusters import MSK_INSTANCE_TYPES, SAFE_BROKER_DEFAULTS, SUPPORTED_MSK_VERSIONS, MskCreate, SourceCluster, TargetCluster
from .model import LOG_RETENTION_DAYS, EnvironmentConfig, load_environment, load_environments
from .monitoring import GRAFANA_PORT, PROMETHEUS_PORT, AlertmanagerRoute, MonitoringConfig
from .network import ALB_TLS_POLICIES, OPERATOR_CIDR_MIN_PREFIX, HttpsEgress, NetworkConfig, OperatorAccess, OperatorTls, Peers
from .proof import PROOF_DNS_LABEL, PROOF_METRICS_PORT, ProofService, proof_key_prefix
from .services import FARGATE_SIZES, MAX_DISCOVERABLE_WORKERS, ConnectService, GrafanaService, TaskSize
from .state import ECR_COMPONENTS, SERVICE_COMPONENTS, BackendConfig, EcrConfig, default_prefix, ecr_repository_names
from .validation import ValidationHomes

__all__ = [
    "ALB_TLS_POLICIES",
    "ECR_COMPONENTS",
    "FARGATE_SIZES",
    "GRAFANA_PORT",
    "LOG_RETENTION_DAYS",
    "MAX_DISCOVERABLE_WORKERS",
    "MSK_INSTANCE_TYPES",
    "OPERATOR_CIDR_MIN_PREFIX",
    "PROMETHEUS_PORT",
    "PROOF_DNS_LABEL",
    "PROOF_METRICS_PORT",
    "SAFE_BROKER_DEFAULTS",
    "SERVICE_COMPONENTS",
    "SUPPORTED_MSK_VERSIONS",
    "AlertmanagerRoute",
    "BackendConfig",
    "ConnectService",
    "EcrConfig",
    "EnvironmentConfig",
    "GrafanaService",
    "HttpsEgress",
    "MonitoringConfig",
    "MskCreate",
    "NetworkConfig",
    "OperatorAccess",
    "OperatorTls",
    "Peers",
    "ProofService",
    "SourceCluster",
    "TargetCluster",
    "TaskSize",
    "ValidationHomes",
    "default_prefix",
    "ecr_repository_names",
    "load_environment",
    "load_environments",
    "msk_regions",
    "parse_msk_arn",
    "partition_of",
    "proof_key_prefix",
]
