"""Operator endpoints in the synthesized stacks: TLS on every one, authentication behind every one,
reachable only from operator_access, and credentials that never enter the Terraform state."""

from __future__ import annotations

import json

import pytest
from infra_helpers import ALL_ENVS, Synth

from msk_migrate.config.environment import ALB_TLS_POLICIES, GRAFANA_PORT, PROMETHEUS_PORT
from mskinfra.ecs import SERVING_CERT
from mskinfra.tfjson import unescape_template


def containers(synth: Synth, env: str) -> dict[str, dict]:
    """The service container of each task definition (not the serving-certificate init container)."""
    out = {}
    for td in synth.resources(env, "aws_ecs_task_definition").values():
        (c,) = [c for c in json.loads(unescape_template(td["container_definitions"])) if c["name"] != SERVING_CERT]
        out[c["name"]] = c
    return out


def ref(rtype: str, key: str, attr: str) -> str:
    return "${" + f"{rtype}.{key}.{attr}" + "}"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_every_operator_endpoint_is_an_https_listener_with_the_acm_certificate(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    (lb_key,) = synth.resources(env, "aws_lb")
    lb = synth.resources(env, "aws_lb")[lb_key]
    assert lb["internal"] is True and lb["load_balancer_type"] == "application"
    assert lb["subnets"] == cfg.subnet_ids and lb["drop_invalid_header_fields"] is True
    listeners = synth.resources(env, "aws_lb_listener").values()
    assert {(lst["port"], lst["protocol"]) for lst in listeners} == {(443, "HTTPS"), (PROMETHEUS_PORT, "HTTPS"), (cfg.worker.rest_port, "HTTPS")}
    for lst in listeners:
        assert lst["load_balancer_arn"] == ref("aws_lb", lb_key, "arn")
        assert lst["certificate_arn"] == cfg.operator_tls.certificate_arn
        assert lst["ssl_policy"] == cfg.operator_tls.ssl_policy and lst["ssl_policy"] in ALB_TLS_POLICIES
        assert "TLS13" in lst["ssl_policy"] or "1-2" in lst["ssl_policy"], "TLS 1.2 or newer only"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_each_ui_service_is_reached_only_through_its_https_listener(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    tgs = synth.resources(env, "aws_lb_target_group")
    listeners = {lst["default_action"][0]["target_group_arn"]: lst for lst in synth.resources(env, "aws_lb_listener").values()}
    container_port = {"kafka-connect": cfg.worker.rest_port, "prometheus": PROMETHEUS_PORT, "grafana": GRAFANA_PORT}
    listener_port = {"kafka-connect": cfg.worker.rest_port, "prometheus": PROMETHEUS_PORT, "grafana": 443}
    for service in synth.resources(env, "aws_ecs_service").values():
        component = service["name"].removeprefix(f"{cfg.resource_prefix}-")
        if component not in container_port:  # the proof follower: no UI, never behind the load balancer
            assert "proof" in component, component
            assert not service.get("load_balancer"), component
            continue
        (lb,) = service["load_balancer"]
        assert lb["container_name"] == component and lb["container_port"] == container_port[component]
        (tg_key,) = [k for k in tgs if ref("aws_lb_target_group", k, "arn") == lb["target_group_arn"]]
        tg = tgs[tg_key]
        assert tg["target_type"] == "ip" and tg["port"] == container_port[component] and tg["vpc_id"] == cfg.vpc_id
        assert listeners[lb["target_group_arn"]]["port"] == listener_port[component]


@pytest.mark.parametrize("env", ALL_ENVS)
def test_load_balancer_admits_only_the_operator_networks(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    (alb_sg_key,) = [k for k, v in synth.resources(env, "aws_security_group").items() if v["name"].endswith("-operator-alb")]
    alb_sg = ref("aws_security_group", alb_sg_key, "id")
    peers = set(cfg.operator_access.cidrs + cfg.operator_access.prefix_list_ids + cfg.operator_access.security_group_ids)
    rules = [r for r in synth.resources(env, "aws_vpc_security_group_ingress_rule").values() if r["security_group_id"] == alb_sg]
    # The one more source: the operator task (`msk-migrate … --in-vpc`, in the Connect security group) reaches
    # Connect REST through the load balancer like an operator, on the Connect listener's port only.
    task = [r for r in rules if r.get("referenced_security_group_id", "").startswith("${aws_security_group.network_connect_sg")]
    assert len(task) == 1 and task[0]["from_port"] == task[0]["to_port"] and "operator task" in task[0]["description"]
    rules = [r for r in rules if r not in task]
    sources = {r.get("cidr_ipv4") or r.get("cidr_ipv6") or r.get("prefix_list_id") or r.get("referenced_security_group_id") for r in rules}
    assert sources == peers
    assert len(rules) == 3 * len(peers)


@pytest.mark.parametrize("env", ALL_ENVS)
def test_every_endpoint_behind_the_listeners_authenticates(synth: Synth, env: str) -> None:
    cs = containers(synth, env)
    connect_secrets = {s["name"] for s in cs["kafka-connect"]["secrets"]}
    assert {"CONNECT_REST_USERNAME", "CONNECT_REST_PASSWORD"} <= connect_secrets
    prom_secrets = {s["name"] for s in cs["prometheus"]["secrets"]}
    people = synth.configs[env].connect.people
    # the machine login (Grafana's datasource, the health check) and one bcrypt hash per person
    assert prom_secrets == {"MM2_PROMETHEUS_WEB_USER", "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT", "MM2_PROMETHEUS_WEB_PASSWORD",
                            *(f"MM2_PROMETHEUS_PERSON_{n.upper().replace('-', '_')}_BCRYPT" for n in people)}
    person_refs = {s["name"]: s["valueFrom"] for s in cs["prometheus"]["secrets"] if s["name"].startswith("MM2_PROMETHEUS_PERSON_")}
    assert all(v.endswith(":password_bcrypt::") for v in person_refs.values()), person_refs
    assert "MM2_PROMETHEUS_WEB_AUTH" not in {e["name"] for e in cs["prometheus"]["environment"]}, "never disabled on ECS"
    grafana_env = {e["name"]: e["value"] for e in cs["grafana"]["environment"]}
    assert grafana_env["GF_AUTH_ANONYMOUS_ENABLED"] == "false" and grafana_env["GF_SECURITY_COOKIE_SECURE"] == "true"
    # Health checks log in (the services refuse anonymous requests) and the ALB expects the refusal.
    assert "CONNECT_REST_PASSWORD" in cs["kafka-connect"]["healthCheck"]["command"][1]
    # promtool logs in with the client config prometheus/entrypoint.sh writes (basic auth + the CA).
    assert "--http.config.file=/tmp/promtool-http.yml" in cs["prometheus"]["healthCheck"]["command"]
    matchers = {tg["port"]: tg["health_check"]["matcher"] for tg in synth.resources(env, "aws_lb_target_group").values()}
    assert matchers == {synth.configs[env].worker.rest_port: "401", PROMETHEUS_PORT: "401", GRAFANA_PORT: "200"}


@pytest.mark.parametrize("env", ALL_ENVS)
def test_generated_credentials_never_enter_the_plan_or_state(synth: Synth, env: str) -> None:
    stack = synth.stacks[env]
    versions = synth.resources(env, "aws_secretsmanager_secret_version")
    # Connect REST, Prometheus web, the internal CA's seed, and one REST login per person (connect.people)
    expected = 3 + len(synth.configs[env].connect.people)
    assert len(versions) == expected
    passwords = stack["ephemeral"]["aws_secretsmanager_random_password"]
    assert len(passwords) == expected
    for _key, v in versions.items():
        assert "secret_string" not in v and "secret_binary" not in v, "a stored value would land in the state"
        assert v["secret_string_wo_version"] == 1
        (pw,) = [p for p in passwords if f"ephemeral.aws_secretsmanager_random_password.{p}.random_password" in v["secret_string_wo"]]
        assert passwords[pw]["exclude_punctuation"] is True and passwords[pw]["password_length"] >= 32
    prom = [v for v in versions.values() if "bcrypt(" in v["secret_string_wo"]]
    # Prometheus' web config takes only hashes: its machine login's and each person's (one login per person)
    assert len(prom) == 1 + len(synth.configs[env].connect.people)
    assert not synth.resources(env, "aws_secretsmanager_secret_version").keys() & {"grafana_admin"}


def test_certificate_from_another_region_is_refused(tmp_path) -> None:
    from infra_helpers import SHIPPED_DIR, run_main

    text = (SHIPPED_DIR / "dev.yaml").read_text().replace("arn:aws:acm:eu-west-1:", "arn:aws:acm:us-east-1:")
    (tmp_path / "dev.yaml").write_text(text)
    proc = run_main("--environments", str(tmp_path), "--check")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "operator_tls.certificate_arn" in line and "eu-west-1" in line and "Traceback" not in proc.stderr


@pytest.mark.parametrize("env", ALL_ENVS)
def test_only_the_execution_roles_read_the_generated_credentials(synth: Synth, env: str) -> None:
    """ECS injects the REST/Prometheus credentials through the execution roles; the Connect task role
    (which connectors run with) cannot read them."""
    secrets = {k: ref("aws_secretsmanager_secret", k, "arn") for k in synth.resources(env, "aws_secretsmanager_secret")
               if k.startswith(("connect_rest_auth_", "prometheus_web_auth_"))}
    assert len(secrets) == 2
    readers = {}
    for policy in synth.resources(env, "aws_iam_role_policy").values():
        for st in json.loads(policy["policy"])["Statement"]:
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            for key, arn in secrets.items():
                if arn in resources:
                    readers.setdefault(key, set()).add((policy["name"], policy["role"], st["Action"]))
    rest = next(k for k in secrets if k.startswith("connect_rest_auth_"))
    prom = next(k for k in secrets if k.startswith("prometheus_web_auth_"))
    for key, found in readers.items():
        # the operator task (`--in-vpc` commands) calls Connect REST: it reads the REST credentials, nothing else
        allowed = {"execution", "operator"} if key == rest else {"execution"}
        assert {name for name, _, _ in found} == allowed, (key, found)
        assert {action for _, _, action in found} == {"secretsmanager:GetSecretValue"}
    operator = [role for name, role, _ in readers[rest] if name == "operator"]
    assert len(operator) == 1 and "operator_task" in operator[0]  # the operator task role, never the Connect task role
    assert len(readers[rest]) == 2 and len(readers[prom]) == 2  # Connect + operator; Prometheus and Grafana


@pytest.mark.parametrize("env", ALL_ENVS)
def test_each_persons_secret_is_read_by_the_connect_prometheus_and_grafana_execution_roles_only(synth: Synth, env: str) -> None:
    """A person's one login serves the Connect REST API, Prometheus and Grafana: the three execution roles that inject
    it read it, and no task role does."""
    people = {k: ref("aws_secretsmanager_secret", k, "arn") for k in synth.resources(env, "aws_secretsmanager_secret")
              if k.startswith("connect_rest_person_")}
    assert len(people) == len(synth.configs[env].connect.people)
    for key, arn in people.items():
        readers = set()
        for policy in synth.resources(env, "aws_iam_role_policy").values():
            for st in json.loads(policy["policy"])["Statement"]:
                resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
                if arn in resources:
                    readers.add((policy["name"], policy["role"]))
        assert {name for name, _ in readers} == {"execution"}, (key, readers)
        roles = " ".join(role for _, role in readers)
        assert len(readers) == 3 and "kafka-connect" in roles.replace("_", "-") and "prometheus" in roles and "grafana" in roles, (key, readers)
