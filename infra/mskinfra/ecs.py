"""ECS: cluster (Container Insights), log groups, Fargate task definitions and services for Connect,
Prometheus and Grafana, and Connect autoscaling.

Connect autoscaling tracks average CPU between connect.min_capacity and connect.max_capacity.
max_capacity is capped at migration.tasks_max by validation: Kafka Connect spreads connector *tasks*
over workers, and MirrorSourceConnector never runs more than tasks.max tasks, so workers beyond
tasks.max receive no replication work and only add rebalances and cost.
"""

from __future__ import annotations

from constructs import Construct
from cdktf import TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.appautoscaling_policy import AppautoscalingPolicy
from cdktf_cdktf_provider_aws.appautoscaling_target import AppautoscalingTarget
from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.ecs_cluster import EcsCluster, EcsClusterSetting
from cdktf_cdktf_provider_aws.ecs_service import EcsService
from cdktf_cdktf_provider_aws.ecs_task_definition import EcsTaskDefinition

from msk_migrate.config.environment import ECR_COMPONENTS, GRAFANA_PORT, PROMETHEUS_PORT, EnvironmentConfig

from .kms import log_group_name
from .tfjson import tf_json

LOG_COMPONENT = {"kafka-connect": "connect", "prometheus": "prometheus", "grafana": "grafana"}


class LogGroups(Construct):
    def __init__(self, scope: Construct, id_: str, cfg: EnvironmentConfig, kms_key_arn: str | None) -> None:
        super().__init__(scope, id_)
        self.groups: dict[str, CloudwatchLogGroup] = {
            component: CloudwatchLogGroup(
                self,
                LOG_COMPONENT[component],
                name=log_group_name(cfg, LOG_COMPONENT[component]),
                retention_in_days=cfg.log_retention_days,
                kms_key_id=kms_key_arn,
            )
            for component in ECR_COMPONENTS
        }


def _env(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in sorted(values.items())]


def _secrets(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "valueFrom": v} for k, v in sorted(values.items())]


class Services(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        images: dict[str, str],
        log_groups: LogGroups,
        execution_role_arns: dict[str, str],
        connect_task_role_arn: str,
        registry_arns: dict[str, str],
        security_group_ids: dict[str, str],
        connect_env: dict[str, str],
        connect_secret_env: dict[str, str],
        prometheus_env: dict[str, str],
        grafana_env: dict[str, str],
        grafana_secret_env: dict[str, str],
        substitutions: dict[str, str],
        depends_on: dict[str, list] | None = None,
    ) -> None:
        super().__init__(scope, id_)
        p = cfg.resource_prefix
        depends_on = depends_on or {}
        self.cluster = EcsCluster(
            self,
            "cluster",
            name=p,
            setting=[EcsClusterSetting(name="containerInsights", value="enabled")],
        )

        def log_config(component: str) -> dict:
            return {
                "logDriver": "awslogs",
                "options": {
                    "awslogs-group": log_group_name(cfg, LOG_COMPONENT[component]),
                    "awslogs-region": cfg.region,
                    "awslogs-stream-prefix": LOG_COMPONENT[component],
                },
            }

        w = cfg.worker
        connect_container = {
            "name": "kafka-connect",
            "image": images["kafka-connect"],
            "essential": True,
            "portMappings": [
                {"name": "rest", "containerPort": w.rest_port, "protocol": "tcp"},
                {"name": "metrics", "containerPort": w.metrics_port, "protocol": "tcp"},
            ],
            "environment": _env(connect_env),
            "secrets": _secrets(connect_secret_env),
            "healthCheck": {
                "command": ["CMD-SHELL", f"curl -fsS -o /dev/null http://localhost:{w.rest_port}/ || exit 1"],
                "interval": 30,
                "timeout": 5,
                "retries": 3,
                "startPeriod": 120,
            },
            "ulimits": [{"name": "nofile", "softLimit": 65536, "hardLimit": 65536}],
            "stopTimeout": 120,
            "logConfiguration": log_config("kafka-connect"),
        }
        prometheus_container = {
            "name": "prometheus",
            "image": images["prometheus"],
            "essential": True,
            "portMappings": [{"name": "http", "containerPort": PROMETHEUS_PORT, "protocol": "tcp"}],
            "environment": _env(prometheus_env),
            "healthCheck": {
                "command": ["CMD-SHELL", f"wget -q -O /dev/null http://localhost:{PROMETHEUS_PORT}/-/healthy || exit 1"],
                "interval": 30,
                "timeout": 5,
                "retries": 3,
                "startPeriod": 30,
            },
            "logConfiguration": log_config("prometheus"),
        }
        grafana_container = {
            "name": "grafana",
            "image": images["grafana"],
            "essential": True,
            "portMappings": [{"name": "http", "containerPort": GRAFANA_PORT, "protocol": "tcp"}],
            "environment": _env(grafana_env),
            "secrets": _secrets(grafana_secret_env),
            "healthCheck": {
                "command": [
                    "CMD-SHELL",
                    f"wget -q -O /dev/null http://localhost:{GRAFANA_PORT}/api/health "
                    f"|| curl -fsS -o /dev/null http://localhost:{GRAFANA_PORT}/api/health || exit 1",
                ],
                "interval": 30,
                "timeout": 5,
                "retries": 3,
                "startPeriod": 60,
            },
            "logConfiguration": log_config("grafana"),
        }

        sizes = {
            "kafka-connect": (cfg.connect.cpu, cfg.connect.memory),
            "prometheus": (cfg.monitoring.prometheus.cpu, cfg.monitoring.prometheus.memory),
            "grafana": (cfg.monitoring.grafana.cpu, cfg.monitoring.grafana.memory),
        }
        containers = {"kafka-connect": connect_container, "prometheus": prometheus_container, "grafana": grafana_container}
        self.task_definitions: dict[str, EcsTaskDefinition] = {}
        self.services: dict[str, EcsService] = {}
        for component in ECR_COMPONENTS:
            cid = LOG_COMPONENT[component]
            cpu, memory = sizes[component]
            td = EcsTaskDefinition(
                self,
                f"{cid}_task",
                family=f"{p}-{component}",
                requires_compatibilities=["FARGATE"],
                network_mode="awsvpc",
                cpu=str(cpu),
                memory=str(memory),
                execution_role_arn=execution_role_arns[component],
                task_role_arn=connect_task_role_arn if component == "kafka-connect" else None,
                runtime_platform={"operating_system_family": "LINUX", "cpu_architecture": "X86_64"},
                container_definitions=tf_json([containers[component]], substitutions, indent=None),
                depends_on=[log_groups.groups[component]],
            )
            self.task_definitions[component] = td
            connect = component == "kafka-connect"
            self.services[component] = EcsService(
                self,
                f"{cid}_service",
                name=f"{p}-{component}",
                cluster=self.cluster.arn,
                task_definition=td.arn,
                desired_count=cfg.connect.desired_count if connect else 1,
                launch_type="FARGATE",
                platform_version="1.4.0",
                network_configuration={
                    "subnets": cfg.subnet_ids,
                    "security_groups": [security_group_ids[component]],
                    "assign_public_ip": False,
                },
                service_registries={"registry_arn": registry_arns[component]},
                deployment_circuit_breaker={"enable": True, "rollback": True},
                deployment_minimum_healthy_percent=100,
                deployment_maximum_percent=200,
                enable_execute_command=False,
                enable_ecs_managed_tags=True,
                propagate_tags="SERVICE",
                wait_for_steady_state=False,
                depends_on=depends_on.get(component) or None,
                # Autoscaling owns the Connect desired count after creation.
                lifecycle=TerraformResourceLifecycle(ignore_changes=["desired_count"]) if connect else None,
            )

        connect_service = self.services["kafka-connect"]
        self.scaling_target = AppautoscalingTarget(
            self,
            "connect_scaling_target",
            service_namespace="ecs",
            scalable_dimension="ecs:service:DesiredCount",
            resource_id=f"service/{self.cluster.name}/{connect_service.name}",
            min_capacity=cfg.connect.min_capacity,
            max_capacity=cfg.connect.max_capacity,
        )
        AppautoscalingPolicy(
            self,
            "connect_cpu_tracking",
            name=f"{p}-connect-cpu",
            policy_type="TargetTrackingScaling",
            service_namespace=self.scaling_target.service_namespace,
            scalable_dimension=self.scaling_target.scalable_dimension,
            resource_id=self.scaling_target.resource_id,
            target_tracking_scaling_policy_configuration={
                "target_value": cfg.connect.cpu_target_percent,
                "predefined_metric_specification": {"predefined_metric_type": "ECSServiceAverageCPUUtilization"},
                "scale_in_cooldown": cfg.connect.scale_in_cooldown_seconds,
                "scale_out_cooldown": cfg.connect.scale_out_cooldown_seconds,
            },
        )
