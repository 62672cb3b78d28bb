"""Stack outputs: where to reach things and what to hand to the runbook."""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformStack

from msk_migrate.config.environment import GRAFANA_PORT, PROMETHEUS_PORT, EnvironmentConfig


def add_outputs(stack: TerraformStack, cfg: EnvironmentConfig, *, discovery, bucket, repos, msk, services, network, grafana_secret_arn: str) -> None:
    def out(name: str, value, description: str) -> None:
        TerraformOutput(stack, name, value=value, description=description)

    out("connect_rest_url", f"http://{discovery.dns_name('kafka-connect')}:{cfg.worker.rest_port}", "Kafka Connect REST API (Cloud Map DNS, inside the VPC)")
    out("prometheus_url", f"http://{discovery.dns_name('prometheus')}:{PROMETHEUS_PORT}", "Prometheus (Cloud Map DNS)")
    out("grafana_url", f"http://{discovery.dns_name('grafana')}:{GRAFANA_PORT}", "Grafana (Cloud Map DNS)")
    out("grafana_admin_secret_arn", grafana_secret_arn, "Secrets Manager secret holding the Grafana admin password")
    out("config_bucket", bucket.bucket.bucket, "Connector-config bucket")
    out(
        "connector_config_s3_uris",
        {name: f"s3://{cfg.config_bucket_name}/{key}" for name, key in bucket.connector_keys.items()},
        "Rendered MM2 connector configs (PUT /connectors/<name>/config bodies)",
    )
    out("worker_env_s3_uri", f"s3://{cfg.config_bucket_name}/worker/connect-worker.env", "Connect worker environment (reference)")
    out("ecr_repository_urls", {c: r.repository_url for c, r in repos.repos.items()}, "ECR repositories (build_images.py pushes here)")
    out("target_cluster_arn", msk.cluster_arn, "Target MSK cluster")
    out("target_bootstrap_brokers", msk.bootstrap_by_mode, "Target bootstrap brokers per auth mode")
    out("target_bootstrap_brokers_connect", msk.bootstrap, f"Bootstrap brokers Connect uses ({cfg.target.auth.mode})")
    out("ecs_cluster_name", services.cluster.name, "ECS cluster")
    out("ecs_service_names", {c: s.name for c, s in services.services.items()}, "ECS services")
    out("connect_security_group_id", network.connect.id, "Connect workers' security group (allow it on the source brokers' firewall)")
