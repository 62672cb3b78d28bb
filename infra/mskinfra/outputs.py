"""Stack outputs: where to reach things and what to hand to the runbook."""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformStack

from msk_migrate.config.environment import EnvironmentConfig


def add_outputs(stack: TerraformStack, cfg: EnvironmentConfig, *, discovery, bucket, repos, msk, services, network, grafana_secret_arn: str, load_balancer, credentials) -> None:  # noqa: E501
    def out(name: str, value, description: str) -> None:
        TerraformOutput(stack, name, value=value, description=description)

    lb = load_balancer
    out("connect_rest_url", lb.url("kafka-connect", cfg), "Kafka Connect REST API (HTTPS, basic auth: connect_rest_auth_secret_arn)")
    out("prometheus_url", lb.url("prometheus", cfg), "Prometheus (HTTPS, basic auth: prometheus_auth_secret_arn)")
    out("grafana_url", lb.url("grafana", cfg), "Grafana (HTTPS, admin password: grafana_admin_secret_arn)")
    out("operator_load_balancer_dns_name", lb.lb.dns_name, "Internal load balancer of the operator endpoints: point the certificate's DNS name at it")
    out("connect_rest_auth_secret_arn", credentials.connect_rest.arn, "Secret with the Connect REST basic-auth username/password (generated)")
    out("connect_rest_person_secret_arns", {n: c.arn for n, c in credentials.people.items()},
        "Each person's own Connect REST login (connect.people): grant each person GetSecretValue on their own only")
    out("prometheus_auth_secret_arn", credentials.prometheus_web.arn, "Secret with the Prometheus basic-auth username/password (generated)")
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
    out("operator_task_definition", services.operator_task_definition.family,
        "Task definition of msk-migrate --in-vpc (the default --task-definition: <ecs_cluster_name>-operator)")
    out("ecs_service_names", {c: s.name for c, s in services.services.items()}, "ECS services")
    out("connect_security_group_id", network.connect.id, "Connect workers' security group (allow it on the source brokers' firewall)")
