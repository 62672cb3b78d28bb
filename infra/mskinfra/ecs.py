"""ECS: cluster (Container Insights), log groups, Fargate task definitions and services for Connect,
Prometheus and Grafana, and Connect autoscaling.

Connect autoscaling tracks average CPU between connect.min_capacity and connect.max_capacity.
max_capacity is capped at migration.tasks_max by validation: Kafka Connect spreads connector *tasks*
over workers, and MirrorSourceConnector never runs more than tasks.max tasks, so workers beyond
tasks.max receive no replication work and only add rebalances and cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdktf import TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.appautoscaling_policy import AppautoscalingPolicy
from cdktf_cdktf_provider_aws.appautoscaling_target import AppautoscalingTarget
from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.ecs_cluster import EcsCluster, EcsClusterSetting
from cdktf_cdktf_provider_aws.ecs_service import EcsService, EcsServiceLoadBalancer
from cdktf_cdktf_provider_aws.ecs_task_definition import EcsTaskDefinition, EcsTaskDefinitionVolume
from constructs import Construct

from msk_migrate.config.environment import ECR_COMPONENTS, GRAFANA_PORT, PROMETHEUS_PORT, SERVICE_COMPONENTS, EnvironmentConfig
from msk_migrate.connectors.worker_env import ECS_REST, health_check_command

from .checkov import skip
from .kms import log_group_name
from .tfjson import tf_json

LOG_COMPONENT = {"kafka-connect": "connect", "prometheus": "prometheus", "grafana": "grafana", "operator": "operator"}

#: The init container that makes Prometheus' and Grafana's TLS certificate at task start: the Connect image's
#: serving-cert.sh (openssl), issuing from the environment's internal CA (credentials.InternalCaSeed). It
#: writes into SERVING_CERT_VOLUME mounted at its /tmp (world-writable in its image, so a non-root user may
#: create the directory); the service container reads the volume read-only at SERVING_CERT_MOUNT.
SERVING_CERT = "serving-cert"
SERVING_CERT_SCRIPT = "/opt/kafka-connect/serving-cert.sh"
SERVING_CERT_VOLUME = "serving-cert"
SERVING_CERT_MOUNT = "/run/serving-cert"
#: Where the service container finds cert.pem, key.pem and ca.pem.
SERVING_CERT_DIR = f"{SERVING_CERT_MOUNT}/tls"
#: Read-only mounts of the service containers (besides their writable paths): the serving certificate.
READ_ONLY_MOUNTS: dict[str, tuple[str, ...]] = {"prometheus": (SERVING_CERT_MOUNT,), "grafana": (SERVING_CERT_MOUNT,)}
#: Users the init container runs as, so the key it writes (0600) is readable by the service's own user.
SERVICE_USER = {"prometheus": "65534", "grafana": "472"}

#: The only paths each image writes to; everything else is the read-only root filesystem. One Fargate
#: ephemeral volume per path (task storage; Fargate copies the image's directory, owner and mode into
#: the empty volume). Where the paths come from:
#:   kafka-connect  /tmp  -- CONNECT_CONFIG_DIR (/tmp/connect: worker.properties, log4j, JAAS) and the
#:                           JVM's java.io.tmpdir (hsperfdata, native libraries unpacked by clients)
#:   prometheus     /prometheus -- --storage.tsdb.path (images/prometheus/Dockerfile CMD)
#:                  /tmp  -- the rendered prometheus.yml and web config (prometheus/entrypoint.sh)
#:   grafana        /var/lib/grafana -- GF_PATHS_DATA (sqlite database, sessions, plugins)
#:                  /tmp  -- Grafana's temporary files (image renders, CSV exports)
#:   operator       /tmp  -- the flow file of --in-vpc, the command's captured output, reports
#:   proof-follower /tmp  -- the operator image as the proof follower service (mskinfra.proof_follower): its flow file
#:   serving-cert   /tmp  -- the init container of Prometheus and Grafana: its certificate (SERVING_CERT_VOLUME)
#: tests/infra/test_infra_container_hardening.py checks every task definition against this table and
#: the table against the images' own files.
WRITABLE_PATHS: dict[str, tuple[str, ...]] = {
    "kafka-connect": ("/tmp",),
    "prometheus": ("/prometheus", "/tmp"),
    "grafana": ("/var/lib/grafana", "/tmp"),
    "operator": ("/tmp",),
    "proof-follower": ("/tmp",),
    SERVING_CERT: ("/tmp",),
}

#: Size of the one-off operator task (msk-migrate: Python, librdkafka; validate's native pass).
OPERATOR_CPU, OPERATOR_MEMORY = 1024, 2048


def volume_name(path: str) -> str:
    """Task volume name of a writable path (/var/lib/grafana -> var-lib-grafana)."""
    return path.strip("/").replace("/", "-")


def hardened(container: dict, component: str) -> dict:
    """``container`` with a read-only root filesystem, one writable volume per path the image writes,
    every Linux capability dropped (so setuid binaries gain nothing) and an init process that reaps
    the zombies of health-check shells."""
    return {
        **container,
        "readonlyRootFilesystem": True,
        "mountPoints": [
            {"sourceVolume": volume_name(path), "containerPath": path, "readOnly": False}
            for path in WRITABLE_PATHS[component]
        ],
        # Fargate accepts capability drops (and only SYS_PTRACE as an add); `privileged` is not a Fargate
        # parameter, so it is left out rather than set to false.
        "linuxParameters": {"capabilities": {"drop": ["ALL"], "add": []}, "initProcessEnabled": True},
    }


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
        for group in self.groups.values():
            skip_short_retention(group, cfg)


#: checkov's CKV_AWS_338 asks for a year of logs; shorter is the environment's explicit choice.
RECOMMENDED_LOG_RETENTION_DAYS = 365


def skip_short_retention(group: CloudwatchLogGroup, cfg: EnvironmentConfig) -> None:
    """Record why a log group keeps less than a year of logs, or has no KMS key (only when it does)."""
    if not cfg.log_kms:
        skip(group, "CKV_AWS_158", f"environment {cfg.name} sets log_kms: false (CloudWatch Logs' own encryption "
             "at rest); the logs carry no secret values")
    if cfg.log_retention_days < RECOMMENDED_LOG_RETENTION_DAYS:
        skip(group, "CKV_AWS_338", f"environment {cfg.name} sets log_retention_days: {cfg.log_retention_days} "
             "(docs/infra.md: keep 365 where the logs are migration evidence)")


def _env(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in sorted(values.items())]


def _secrets(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "valueFrom": v} for k, v in sorted(values.items())]


def serving_cert_container(image: str, user: str, dns: tuple[str, ...], secret_env: dict[str, str], logs: dict) -> dict:
    """The init container making a service's TLS certificate (SERVING_CERT): runs once, as the service's
    user, and must succeed before the service starts. Its seed variable is the only entry of ``secret_env``."""
    (seed_env,) = secret_env
    container = {
        "name": SERVING_CERT,
        "image": image,
        "essential": False,
        "user": user,
        "entryPoint": [SERVING_CERT_SCRIPT],
        "command": ["--out", "/tmp/tls", "--seed-env", seed_env, *[a for name in dns for a in ("--dns", name)]],
        "secrets": _secrets(secret_env),
        "logConfiguration": logs,
    }
    out = hardened(container, SERVING_CERT)
    out["mountPoints"] = [{"sourceVolume": SERVING_CERT_VOLUME, "containerPath": "/tmp", "readOnly": False}]
    return out


@dataclass(frozen=True)
class ServiceSpec:
    """What one service's container gets beyond what every task gets (image, logs, hardening, roles)."""

    env: dict[str, str]
    secret_env: dict[str, str]
    #: DNS names the serving certificate must also carry (Prometheus: its Cloud Map name, Grafana's datasource
    #: verifies it); None = the service makes no certificate through the init container (Connect makes its own).
    serving_cert_dns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TaskRoles:
    execution: dict[str, str]  #: component -> execution role ARN (pull, logs, secrets)
    connect_task: str
    operator_task: str
    cleanup: str | None = None  #: the cleanup role ``cleanup --yes`` assumes (IAM targets), named in the operator task


def log_config(cfg: EnvironmentConfig, component: str, prefix: str | None = None) -> dict:
    """awslogs into the component's log group (a stream prefix per container)."""
    return {
        "logDriver": "awslogs",
        "options": {
            "awslogs-group": log_group_name(cfg, LOG_COMPONENT[component]),
            "awslogs-region": cfg.region,
            "awslogs-stream-prefix": prefix or LOG_COMPONENT[component],
        },
    }


def service_size(cfg: EnvironmentConfig, component: str) -> tuple[int, int]:
    """(cpu units, memory MiB) of a service's task."""
    return {
        "kafka-connect": (cfg.connect.cpu, cfg.connect.memory),
        "prometheus": (cfg.monitoring.prometheus.cpu, cfg.monitoring.prometheus.memory),
        "grafana": (cfg.monitoring.grafana.cpu, cfg.monitoring.grafana.memory),
    }[component]


def connect_container(cfg: EnvironmentConfig, image: str, spec: ServiceSpec) -> dict:
    w = cfg.worker
    return {
        "name": "kafka-connect",
        "image": image,
        "essential": True,
        "portMappings": [
            {"name": "rest", "containerPort": w.rest_port, "protocol": "tcp"},
            {"name": "metrics", "containerPort": w.metrics_port, "protocol": "tcp"},
        ],
        "environment": _env(spec.env),
        "secrets": _secrets(spec.secret_env),
        "healthCheck": {
            # Authenticated (the REST API refuses anonymous requests) and over the worker's own HTTPS,
            # verified against the internal CA; curl reads the credentials on stdin (never in a process list).
            "command": health_check_command(w, ECS_REST),
            "interval": 30,
            "timeout": 5,
            "retries": 3,
            "startPeriod": 120,
        },
        "ulimits": [{"name": "nofile", "softLimit": 65536, "hardLimit": 65536}],
        "stopTimeout": 120,
        "logConfiguration": log_config(cfg, "kafka-connect"),
    }


def prometheus_container(cfg: EnvironmentConfig, image: str, spec: ServiceSpec) -> dict:
    return {
        "name": "prometheus",
        "image": image,
        "essential": True,
        "portMappings": [{"name": "https", "containerPort": PROMETHEUS_PORT, "protocol": "tcp"}],
        "environment": _env({**spec.env, "MM2_PROMETHEUS_TLS_DIR": SERVING_CERT_DIR}),
        "secrets": _secrets(spec.secret_env),
        "healthCheck": {
            # promtool logs in (basic auth) over HTTPS and verifies the certificate (internal CA); its
            # HTTP client config is written by prometheus/entrypoint.sh beside the rendered config.
            "command": [
                "CMD", "/bin/promtool", "check", "healthy", f"--url=https://localhost:{PROMETHEUS_PORT}",
                "--http.config.file=/tmp/promtool-http.yml",
            ],
            "interval": 30,
            "timeout": 5,
            "retries": 3,
            "startPeriod": 30,
        },
        "logConfiguration": log_config(cfg, "prometheus"),
    }


def grafana_container(cfg: EnvironmentConfig, image: str, spec: ServiceSpec) -> dict:
    return {
        "name": "grafana",
        "image": image,
        "essential": True,
        "portMappings": [{"name": "https", "containerPort": GRAFANA_PORT, "protocol": "tcp"}],
        "environment": _env({
            **spec.env,
            "GF_SERVER_PROTOCOL": "https",
            "GF_SERVER_CERT_FILE": f"{SERVING_CERT_DIR}/cert.pem",
            "GF_SERVER_CERT_KEY": f"{SERVING_CERT_DIR}/key.pem",
        }),
        "secrets": _secrets(spec.secret_env),
        "healthCheck": {
            "command": [
                "CMD-SHELL",
                f"curl -fsS --cacert {SERVING_CERT_DIR}/ca.pem -o /dev/null https://localhost:{GRAFANA_PORT}/api/health "
                "|| exit 1",
            ],
            "interval": 30,
            "timeout": 5,
            "retries": 3,
            "startPeriod": 60,
        },
        "logConfiguration": log_config(cfg, "grafana"),
    }


class Services(Construct):
    """The ECS cluster, the three services behind the operators' load balancer (each serving HTTPS with a
    certificate made at start), the operator task definition and Connect's autoscaling."""

    def __init__(
        self,
        scope: Construct,
        id_: str,
        cfg: EnvironmentConfig,
        *,
        images: dict[str, str],
        log_groups: LogGroups,
        roles: TaskRoles,
        registry_arns: dict[str, str],
        security_group_ids: dict[str, str],
        specs: dict[str, ServiceSpec],
        serving_cert_secret_env: dict[str, str],
        load_balancer,
        substitutions: dict[str, str],
        operator_env: dict[str, str],
        depends_on: dict[str, list] | None = None,
    ) -> None:
        super().__init__(scope, id_)
        self.operator_env = operator_env
        self.cfg, self.substitutions, self.log_groups = cfg, substitutions, log_groups
        self.cluster = EcsCluster(
            self,
            "cluster",
            name=cfg.resource_prefix,
            setting=[EcsClusterSetting(name="containerInsights", value="enabled")],
        )
        containers = {
            "kafka-connect": connect_container(cfg, images["kafka-connect"], specs["kafka-connect"]),
            "prometheus": prometheus_container(cfg, images["prometheus"], specs["prometheus"]),
            "grafana": grafana_container(cfg, images["grafana"], specs["grafana"]),
        }
        self.task_definitions: dict[str, EcsTaskDefinition] = {}
        self.services: dict[str, EcsService] = {}
        for component in SERVICE_COMPONENTS:
            task_containers, volumes = self._with_serving_cert(
                component, hardened(containers[component], component), specs[component].serving_cert_dns,
                images["kafka-connect"], serving_cert_secret_env)
            td = self._task_definition(component, task_containers, volumes, roles.execution[component],
                                       roles.connect_task if component == "kafka-connect" else None)
            self.task_definitions[component] = td
            self.services[component] = self._service(
                component, td, containers[component]["healthCheck"]["startPeriod"], registry_arns[component],
                security_group_ids[component], load_balancer, (depends_on or {}).get(component) or [])
        self.operator_task_definition = self._operator_task(images["operator"], roles)
        self.task_definitions["operator"] = self.operator_task_definition
        self._autoscaling()

    def _with_serving_cert(self, component: str, main: dict, dns: tuple[str, ...] | None, init_image: str,
                           secret_env: dict[str, str]) -> tuple[list[dict], list[EcsTaskDefinitionVolume]]:
        """The task's containers and volumes: with ``dns`` (Prometheus, Grafana), an init container first makes
        the service's certificate into a volume the service mounts read-only (it starts after that succeeded)."""
        volumes = [EcsTaskDefinitionVolume(name=volume_name(path)) for path in WRITABLE_PATHS[component]]
        if dns is None:
            return [main], volumes
        main["mountPoints"] = [*main["mountPoints"],
                               {"sourceVolume": SERVING_CERT_VOLUME, "containerPath": SERVING_CERT_MOUNT, "readOnly": True}]
        main["dependsOn"] = [{"containerName": SERVING_CERT, "condition": "SUCCESS"}]
        init = serving_cert_container(init_image, SERVICE_USER[component], dns, secret_env,
                                      log_config(self.cfg, component, SERVING_CERT))
        return [init, main], [*volumes, EcsTaskDefinitionVolume(name=SERVING_CERT_VOLUME)]

    def _task_definition(self, component: str, containers: list[dict], volumes: list[EcsTaskDefinitionVolume],
                         execution_role: str, task_role: str | None) -> EcsTaskDefinition:
        cpu, memory = service_size(self.cfg, component)
        return EcsTaskDefinition(
            self,
            f"{LOG_COMPONENT[component]}_task",
            family=f"{self.cfg.resource_prefix}-{component}",
            requires_compatibilities=["FARGATE"],
            network_mode="awsvpc",
            cpu=str(cpu),
            memory=str(memory),
            execution_role_arn=execution_role,
            task_role_arn=task_role,
            runtime_platform={"operating_system_family": "LINUX", "cpu_architecture": "X86_64"},
            container_definitions=tf_json(containers, self.substitutions, indent=None),
            volume=volumes,
            depends_on=[self.log_groups.groups[component]],
        )

    def _service(self, component: str, td: EcsTaskDefinition, grace_seconds: int, registry_arn: str,
                 security_group_id: str, load_balancer, depends_on: list) -> EcsService:
        cfg = self.cfg
        connect = component == "kafka-connect"
        port = {"kafka-connect": cfg.worker.rest_port, "prometheus": PROMETHEUS_PORT, "grafana": GRAFANA_PORT}[component]
        return EcsService(
            self,
            f"{LOG_COMPONENT[component]}_service",
            name=f"{cfg.resource_prefix}-{component}",
            cluster=self.cluster.arn,
            task_definition=td.arn,
            desired_count=cfg.connect.desired_count if connect else 1,
            launch_type="FARGATE",
            # Fargate's current platform (security patches without a task definition change).
            platform_version="LATEST",
            network_configuration={
                "subnets": cfg.subnet_ids,
                "security_groups": [security_group_id],
                "assign_public_ip": False,
            },
            service_registries={"registry_arn": registry_arn},
            deployment_circuit_breaker={"enable": True, "rollback": True},
            deployment_minimum_healthy_percent=100,
            deployment_maximum_percent=200,
            enable_execute_command=False,
            enable_ecs_managed_tags=True,
            propagate_tags="SERVICE",
            wait_for_steady_state=False,
            load_balancer=[
                EcsServiceLoadBalancer(
                    target_group_arn=load_balancer.target_groups[component].arn,
                    container_name=component,
                    container_port=port,
                )
            ],
            health_check_grace_period_seconds=grace_seconds,
            depends_on=[*depends_on, load_balancer.listeners[component]],
            # Autoscaling owns the Connect desired count after creation.
            lifecycle=TerraformResourceLifecycle(ignore_changes=["desired_count"]) if connect else None,
        )

    def _operator_task(self, image: str, roles: TaskRoles) -> EcsTaskDefinition:
        """No service: `msk-migrate … --in-vpc` runs it once per command (RunTask) in the Connect subnets and
        security group, as the operator task role (infra/mskinfra/iam.py). Its environment is the stack's whole
        say on what the command may reach (msk_migrate.aws.operator_stack): the caller sends only the request."""
        cfg = self.cfg
        container = {
            "name": "operator",
            "image": image,
            "essential": True,
            "environment": _env({**self.operator_env, "AWS_REGION": cfg.region}),
            "logConfiguration": log_config(cfg, "operator"),
        }
        return EcsTaskDefinition(
            self,
            "operator_task",
            family=f"{cfg.resource_prefix}-operator",
            requires_compatibilities=["FARGATE"],
            network_mode="awsvpc",
            cpu=str(OPERATOR_CPU),
            memory=str(OPERATOR_MEMORY),
            execution_role_arn=roles.execution["operator"],
            task_role_arn=roles.operator_task,
            runtime_platform={"operating_system_family": "LINUX", "cpu_architecture": "X86_64"},
            container_definitions=tf_json([hardened(container, "operator")], self.substitutions, indent=None),
            volume=[EcsTaskDefinitionVolume(name=volume_name(path)) for path in WRITABLE_PATHS["operator"]],
            depends_on=[self.log_groups.groups["operator"]],
        )

    def _autoscaling(self) -> None:
        cfg, p = self.cfg, self.cfg.resource_prefix
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
