"""TLS from the operators' load balancer to every task, in the synthesized stacks: HTTPS target groups and
health checks, each service serving a certificate it makes at start from the environment's internal CA
(Connect in its entrypoint, Prometheus and Grafana through the serving-cert init container), the CA's seed
generated without entering the state and readable only by the services' execution roles."""

from __future__ import annotations

import json
import re

import pytest
from infra_helpers import ALL_ENVS, REPO, Synth

from msk_migrate.config.environment import PROMETHEUS_PORT
from msk_migrate.connectors.worker_env import CA_SEED_KEY, ENV_REST_TLS_CA_SEED
from mskinfra.ecs import (
    SERVICE_USER,
    SERVING_CERT,
    SERVING_CERT_DIR,
    SERVING_CERT_MOUNT,
    SERVING_CERT_SCRIPT,
    SERVING_CERT_VOLUME,
)
from mskinfra.monitoring import SERVING_CERT_SEED_ENV
from mskinfra.tfjson import unescape_template


def tasks(synth: Synth, env: str) -> dict[str, list[dict]]:
    """family suffix (component) -> its container definitions, in order."""
    prefix = synth.configs[env].resource_prefix
    return {td["family"].removeprefix(f"{prefix}-"): json.loads(unescape_template(td["container_definitions"]))
            for td in synth.resources(env, "aws_ecs_task_definition").values()}


def seed_secret_arn(synth: Synth, env: str) -> str:
    (key,) = [k for k in synth.resources(env, "aws_secretsmanager_secret") if k.startswith("internal_ca_")]
    return "${aws_secretsmanager_secret." + key + ".arn}"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_load_balancer_reaches_every_task_over_https(synth: Synth, env: str) -> None:
    tgs = synth.resources(env, "aws_lb_target_group").values()
    assert len(tgs) == 3
    for tg in tgs:
        assert tg["protocol"] == "HTTPS" and tg["health_check"]["protocol"] == "HTTPS", tg["name"]


@pytest.mark.parametrize("env", ALL_ENVS)
def test_connect_workers_make_their_rest_certificate_from_the_internal_ca(synth: Synth, env: str) -> None:
    (connect,) = tasks(synth, env)["kafka-connect"]
    environment = {e["name"]: e["value"] for e in connect["environment"]}
    props = dict(line.split("=", 1) for line in environment["CONNECT_WORKER_PROPERTIES"].split("\\n"))
    assert props["listeners"].startswith("https://") and props["rest.advertised.listener"] == "https"
    assert props["listeners.https.ssl.truststore.location"].endswith("/truststore.p12")
    assert ENV_REST_TLS_CA_SEED in environment["CONNECT_REQUIRED_ENV"].split()
    secrets = {s["name"]: s["valueFrom"] for s in connect["secrets"]}
    assert secrets[ENV_REST_TLS_CA_SEED] == f"{seed_secret_arn(synth, env)}:{CA_SEED_KEY}::"
    check = connect["healthCheck"]["command"][1]
    assert "https://localhost" in check and "--cacert" in check and " -k" not in check


@pytest.mark.parametrize("env", ALL_ENVS)
@pytest.mark.parametrize("component", ["prometheus", "grafana"])
def test_ui_services_start_after_their_certificate_is_made_and_read_it_only(synth: Synth, env: str, component: str) -> None:
    init, main = tasks(synth, env)[component]
    assert init["name"] == SERVING_CERT and init["essential"] is False
    assert init["entryPoint"] == [SERVING_CERT_SCRIPT] and init["user"] == SERVICE_USER[component]
    assert init["image"] == tasks(synth, env)["kafka-connect"][0]["image"]  # the Connect image's openssl
    assert {s["name"]: s["valueFrom"] for s in init["secrets"]} == {
        SERVING_CERT_SEED_ENV: f"{seed_secret_arn(synth, env)}:{CA_SEED_KEY}::"}
    args = init["command"]
    assert args[args.index("--seed-env") + 1] == SERVING_CERT_SEED_ENV and SERVING_CERT_SEED_ENV not in args[args.index("--out"):args.index("--seed-env")]
    assert [m for m in init["mountPoints"] if m["sourceVolume"] == SERVING_CERT_VOLUME] == [
        {"sourceVolume": SERVING_CERT_VOLUME, "containerPath": "/tmp", "readOnly": False}]
    assert f"{SERVING_CERT_MOUNT}/{args[args.index('--out') + 1].removeprefix('/tmp/')}" == SERVING_CERT_DIR
    assert main["dependsOn"] == [{"containerName": SERVING_CERT, "condition": "SUCCESS"}]
    assert {"sourceVolume": SERVING_CERT_VOLUME, "containerPath": SERVING_CERT_MOUNT, "readOnly": True} in main["mountPoints"]
    env_vars = {e["name"]: e["value"] for e in main["environment"]}
    if component == "prometheus":
        assert env_vars["MM2_PROMETHEUS_TLS_DIR"] == SERVING_CERT_DIR
        # Grafana reaches Prometheus by its Cloud Map name: the certificate names it.
        grafana_env = {e["name"]: e["value"] for e in tasks(synth, env)["grafana"][1]["environment"]}
        host = re.fullmatch(r"https://(.+):(\d+)", grafana_env["PROMETHEUS_URL"])
        assert host and int(host.group(2)) == PROMETHEUS_PORT
        assert args[args.index("--dns") + 1] == host.group(1)
        assert main["healthCheck"]["command"][:5] == ["CMD", "/bin/promtool", "check", "healthy", f"--url=https://localhost:{PROMETHEUS_PORT}"]
    else:
        assert env_vars["GF_SERVER_PROTOCOL"] == "https"
        assert env_vars["GF_SERVER_CERT_FILE"] == f"{SERVING_CERT_DIR}/cert.pem"
        assert env_vars["GF_SERVER_CERT_KEY"] == f"{SERVING_CERT_DIR}/key.pem"
        datasource = (REPO / "grafana" / "provisioning" / "datasources" / "prometheus.yaml").read_text()
        assert f"$__file{{{SERVING_CERT_DIR}/ca.pem}}" in datasource  # Grafana trusts the internal CA only
        assert f"--cacert {SERVING_CERT_DIR}/ca.pem" in main["healthCheck"]["command"][1]


@pytest.mark.parametrize("env", ALL_ENVS)
def test_the_ca_seed_is_generated_write_only_and_read_only_by_the_services_execution_roles(synth: Synth, env: str) -> None:
    arn = seed_secret_arn(synth, env)
    key = arn.split(".")[1]
    (version,) = [v for v in synth.resources(env, "aws_secretsmanager_secret_version").values()
                  if v["secret_id"] == "${aws_secretsmanager_secret." + key + ".id}"]
    assert "secret_string" not in version and f"{CA_SEED_KEY} = ephemeral.aws_secretsmanager_random_password." in version["secret_string_wo"]
    readers, pullers = set(), {}
    connect_repo = [k for k, r in synth.resources(env, "aws_ecr_repository").items() if r["name"].endswith("kafka-connect")]
    for policy in synth.resources(env, "aws_iam_role_policy").values():
        for st in json.loads(policy["policy"])["Statement"]:
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            if arn in resources:
                readers.add((policy["name"], policy["role"]))
            if st.get("Sid") == "PullInitImages":
                pullers[policy["role"]] = resources
    assert {name for name, _ in readers} == {"execution"} and len(readers) == 3  # Connect, Prometheus, Grafana
    assert not any("operator" in role or "connect_task" in role for _, role in readers)
    assert len(pullers) == 2 and all(r == ["${aws_ecr_repository." + connect_repo[0] + ".arn}"] for r in pullers.values())


def test_the_script_the_init_container_runs_is_in_the_connect_image() -> None:
    dockerfile = (REPO / "images" / "kafka-connect" / "Dockerfile").read_text()
    assert re.search(rf"COPY --chmod=0755 images/kafka-connect/serving-cert\.sh {re.escape(SERVING_CERT_SCRIPT)}\n", dockerfile)
    assert "command -v openssl; command -v keytool" in dockerfile  # the build fails without the tools
