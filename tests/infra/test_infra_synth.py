"""Assertions on the synthesized Terraform JSON of every environment (synthesized once per session)."""

from __future__ import annotations

import json
import re

import pytest
from infra_helpers import ALL_ENVS, AWS_PROVIDER_VERSION, DEV_DIGESTS, SHIPPED, Synth, env_config

from msk_migrate.config.environment import ECR_COMPONENTS, GRAFANA_PORT, PROMETHEUS_PORT, PROOF_METRICS_PORT, SAFE_BROKER_DEFAULTS
from msk_migrate.connectors import render_connectors, worker_environment
from msk_migrate.connectors.worker_env import CA_SEED_KEY, ECS_REST, ENV_REST_TLS_CA_SEED, worker_secret_env
from mskinfra import iam_policy as iam_mod
from mskinfra.ecs import SERVING_CERT
from mskinfra.glue_validation import EC2_DESCRIBE as GLUE_EC2_DESCRIBE
from mskinfra.msk import BOOTSTRAP_ATTRIBUTE
from mskinfra.tfjson import unescape_template

#: A Terraform reference to the target's bootstrap string inside a synthesized string.
BOOTSTRAP_REF = re.compile(
    r"\$\{(?:(?:data\.)?aws_msk_(?:cluster|bootstrap_brokers)\.[A-Za-z0-9_]+|data\.terraform_remote_state\.[A-Za-z0-9_]+\.outputs)"
    r"\.(bootstrap_brokers[a-z_]*)\}"
)
#: The environment's internal-CA seed (mskinfra.credentials.InternalCaSeed), read by every task at start.
INTERNAL_CA_SECRET = "${aws_secretsmanager_secret.internal_ca_secret_9EC2389E.arn}"
#: How migration-<env> refers to an output of target-<env>.
TARGET_OUTPUT_REF = r"\$\{data\.terraform_remote_state\.\w+\.outputs\.%s\}"
SECRET_LOOKING = [
    re.compile(r"-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----"),
    re.compile(r"\bA(KIA|SIA)[0-9A-Z]{16}\b"),
    re.compile(r"(?i)aws_secret_access_key"),
    re.compile(r'(?i)(username|password)="(?!\$[{[]env:MM2_[A-Z_]+[}\]])'),
    # KEY=value lines (.env/.properties) whose key says secret: the value must be a reference
    re.compile(r"(?im)^\s*[a-z0-9_.]*(password|secret|token|private_key|keystore\.key)[a-z0-9_.]*\s*=\s*(?!\$\{env:)\S"),
]
#: Connector config keys that carry credentials: values must be ${env:...} references.
SECRET_CONFIG_KEY = re.compile(r"password|secret|token|keystore\.key$|keystore\.certificate\.chain$|truststore\.certificates$")
SECRET_ENV_NAME = re.compile(r"PASSWORD|SECRET|PRIVATE_KEY|CERTIFICATE|TOKEN|_TLS_CA$|USERNAME|SEED")


def _names_a_secret(variable: dict) -> bool:
    """A ``*_SECRET_ARN`` variable whose value is a Secrets Manager ARN: it names a secret (the operator task's
    REST secret, msk_migrate.aws.operator_stack), it holds none."""
    return variable["name"].endswith("_SECRET_ARN") and bool(
        re.fullmatch(r"\$\{aws_secretsmanager_secret\.\w+\.arn\}|arn:aws[a-z-]*:secretsmanager:[^=\s]+", variable["value"]))


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def sample_bootstrap(synth: Synth, env: str) -> str:
    cfg = synth.configs[env]
    return ",".join(f"b-{i}.sample.kafka.{cfg.region}.amazonaws.com:{cfg.target.port}" for i in (1, 2, 3))


def objects(synth: Synth, env: str) -> dict[str, dict]:
    return {o["key"]: o for o in synth.resources(env, "aws_s3_object").values()}


def containers(synth: Synth, env: str) -> dict[str, dict]:
    """The service container of each task definition (not its serving-certificate init container)."""
    out = {}
    for td in synth.resources(env, "aws_ecs_task_definition").values():
        (c,) = [c for c in json.loads(unescape_template(td["container_definitions"])) if c["name"] != SERVING_CERT]
        out[c["name"]] = {**c, "_task": td}
    return out


def policy_documents(synth: Synth, env: str) -> list[tuple[str, dict]]:
    docs = [(f"aws_iam_role_policy.{k}", json.loads(v["policy"])) for k, v in synth.resources(env, "aws_iam_role_policy").items()]
    docs += [(f"aws_iam_role.{k}", json.loads(v["assume_role_policy"])) for k, v in synth.resources(env, "aws_iam_role").items()]
    return docs


def connect_task_statements(synth: Synth, env: str) -> dict[str, dict]:
    (policy,) = [v for v in synth.resources(env, "aws_iam_role_policy").values() if v["name"] == "connect"]
    return {s["Sid"]: s for s in json.loads(policy["policy"])["Statement"]}


def glue_self_rule(synth: Synth, env: str, rule: dict) -> bool:
    """Glue's requirement on its connection's group (``validation.glue``, glue_validation.py): all TCP to and from
    the validation group itself, between the job's workers (test_infra_glue_validation.py)."""
    own = rule["security_group_id"] == rule.get("referenced_security_group_id") == sg_ref(synth, env, "validation")
    return synth.configs[env].validation.glue and own and (rule["from_port"], rule["to_port"]) == (0, 65535)


def ingress_rules(synth: Synth, env: str) -> list[dict]:
    return list(synth.resources(env, "aws_vpc_security_group_ingress_rule").values())


def egress_rules(synth: Synth, env: str) -> list[dict]:
    return list(synth.resources(env, "aws_vpc_security_group_egress_rule").values())


def sg_ref(synth: Synth, env: str, name: str) -> str:
    (key,) = [k for k, v in synth.resources(env, "aws_security_group").items() if v["name"] == f"{synth.configs[env].resource_prefix}-{name}"]
    return "${aws_security_group." + key + ".id}"


# ---------------------------------------------------------------- stacks, provider, state


def test_every_shipped_environment_synthesizes_its_own_stack(synth: Synth) -> None:
    manifest = json.loads((synth.outdir / "manifest.json").read_text())
    assert {f"migration-{e}" for e in SHIPPED} <= set(manifest["stacks"])
    assert set(synth.stacks) == set(ALL_ENVS)
    print(f"\nsynth of {len(ALL_ENVS)} stacks took {synth.seconds:.1f}s")


@pytest.mark.parametrize("env", ALL_ENVS)
def test_aws_provider_is_pinned_with_default_tags_and_account_guard(synth: Synth, env: str) -> None:
    stack, cfg = synth.stacks[env], synth.configs[env]
    assert stack["terraform"]["required_providers"]["aws"]["version"] == AWS_PROVIDER_VERSION
    (provider,) = stack["provider"]["aws"]
    assert provider["region"] == cfg.region
    assert provider["allowed_account_ids"] == [cfg.account_id]
    tags = provider["default_tags"][0]["tags"]
    assert tags["environment"] == env and tags["project"] == cfg.project and tags["owner"] == cfg.owner


@pytest.mark.parametrize("env", ALL_ENVS)
def test_state_is_in_s3_with_locking_when_configured_else_local(synth: Synth, env: str) -> None:
    backend, cfg = synth.stacks[env]["terraform"]["backend"], synth.configs[env]
    if cfg.backend is None:
        local = backend["local"]["path"]
        assert not local.startswith("/"), "relative, so it works from any checkout"
        assert (synth.stack_dir(env) / local).resolve() == synth.state_dir / f"migration-{env}.tfstate"
    else:
        s3 = backend["s3"]
        assert s3["bucket"] == cfg.backend.bucket and s3["encrypt"] is True
        assert s3["key"] == (cfg.backend.key or f"msk-migrate/{env}/terraform.tfstate")
        assert s3.get("dynamodb_table") == cfg.backend.dynamodb_table
        assert s3.get("use_lockfile", False) == cfg.backend.use_lockfile
        assert s3.get("dynamodb_table") or s3.get("use_lockfile")


# ---------------------------------------------------------------- network


@pytest.mark.parametrize("env", ALL_ENVS)
def test_no_ingress_is_open_to_the_internet(synth: Synth, env: str) -> None:
    for group in synth.resources(env, "aws_security_group").values():
        assert "ingress" not in group and "egress" not in group, "rules are separate resources"
    for rule in ingress_rules(synth, env):
        assert rule.get("cidr_ipv4") != "0.0.0.0/0" and rule.get("cidr_ipv6") != "::/0", rule
        assert rule["ip_protocol"] == "tcp" and (rule["from_port"] == rule["to_port"] or glue_self_rule(synth, env, rule)), rule
    assert "0.0.0.0/0" not in json.dumps(synth.resources(env, "aws_vpc_security_group_ingress_rule"))


@pytest.mark.parametrize("env", ALL_ENVS)
def test_egress_goes_only_to_known_peers_and_ports(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    allowed_ports = {443, cfg.target.port, cfg.worker.rest_port, cfg.worker.metrics_port, PROMETHEUS_PORT, GRAFANA_PORT, *cfg.source.ports()}
    allowed_ports |= {11001, 11002} if cfg.target.create else set()  # Prometheus -> MSK open monitoring
    if cfg.monitoring.alertmanager:
        allowed_ports |= set(cfg.monitoring.alertmanager.ports())
    if cfg.proof.follower:
        allowed_ports.add(PROOF_METRICS_PORT)  # Prometheus -> the proof follower (test_infra_proof_follower.py)
    if cfg.schema_registry:  # the operator task, proof follower and validation job -> the registries
        allowed_ports |= {cfg.schema_registry.port("source"), cfg.schema_registry.port("target")}
    for rule in egress_rules(synth, env):
        if glue_self_rule(synth, env, rule):
            continue
        assert rule["ip_protocol"] == "tcp" and rule["from_port"] == rule["to_port"], rule
        assert rule["from_port"] in allowed_ports, rule
        if rule.get("cidr_ipv4") == "0.0.0.0/0" or rule.get("cidr_ipv6") == "::/0":  # test_infra_aws_endpoints.py
            assert rule["from_port"] == 443 and cfg.network.allow_internet_https, rule


@pytest.mark.parametrize("env", ALL_ENVS)
def test_security_groups_carry_exactly_the_migration_flows(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    connect, prom, graf = (sg_ref(synth, env, n) for n in ("connect", "prometheus", "grafana"))

    def has(rules, sg, port, peer) -> bool:
        return any(
            r["security_group_id"] == sg and r["from_port"] == port
            and peer in (r.get("referenced_security_group_id"), r.get("cidr_ipv4"), r.get("cidr_ipv6"), r.get("prefix_list_id"))
            for r in rules
        )

    ing, eg = ingress_rules(synth, env), egress_rules(synth, env)
    rest, metrics = cfg.worker.rest_port, cfg.worker.metrics_port
    assert has(ing, connect, metrics, prom) and has(eg, prom, metrics, connect)
    assert has(ing, prom, PROMETHEUS_PORT, graf) and has(eg, graf, PROMETHEUS_PORT, prom)
    assert has(ing, connect, rest, connect) and has(eg, connect, rest, connect)
    peers = cfg.operator_access.cidrs + cfg.operator_access.prefix_list_ids + cfg.operator_access.security_group_ids
    alb = sg_ref(synth, env, "operator-alb")
    for sg, port, listener in ((connect, rest, rest), (prom, PROMETHEUS_PORT, PROMETHEUS_PORT), (graf, GRAFANA_PORT, 443)):
        for peer in peers:
            assert has(ing, alb, listener, peer), (alb, listener, peer)
            assert not has(ing, sg, port, peer), f"operators reach {sg} only through the HTTPS load balancer"
        assert has(eg, alb, port, sg) and has(ing, sg, port, alb)
    assert {r["from_port"] for r in ing if r["security_group_id"] == alb} == {443, PROMETHEUS_PORT, rest}
    for port in cfg.source.ports():
        for peer in cfg.source.network.cidrs + cfg.source.network.security_group_ids + cfg.source.network.prefix_list_ids:
            assert has(eg, connect, port, peer)
    if cfg.target.create:
        # The broker group lives in target-<env>: the clients' rules there, the migration's flows here.
        msk = sg_ref(synth, env, "msk")
        (msk_out,) = {r["security_group_id"] for r in ing if re.fullmatch(TARGET_OUTPUT_REF % "msk_security_group_id", r["security_group_id"])}
        assert has(eg, connect, cfg.target.port, msk_out) and has(ing, msk_out, cfg.target.port, connect)
        for port in (11001, 11002):
            assert has(eg, prom, port, msk_out) and has(ing, msk_out, port, prom)
        assert {r["from_port"] for r in ing if r["security_group_id"] == msk_out} == {cfg.target.port, 11001, 11002}
        msk_ingress = [r for r in ing if r["security_group_id"] == msk]
        assert {r["from_port"] for r in msk_ingress} <= {9098, 9096}
    else:
        for sg in cfg.target.network.security_group_ids:
            assert has(eg, connect, cfg.target.port, sg)
            assert has(ing, sg, cfg.target.port, connect) == cfg.target.add_ingress_rules
    # Nothing reaches Grafana or Prometheus but operators and Grafana.
    assert {r["from_port"] for r in ing if r["security_group_id"] == graf} == {GRAFANA_PORT}
    assert {r["from_port"] for r in ing if r["security_group_id"] == prom} == {PROMETHEUS_PORT}


def test_msk_ports_follow_the_auth_mode(synth: Synth) -> None:
    ports = {env: synth.configs[env].target.port for env in ALL_ENVS}
    assert ports["dev"] == 9098 and ports["msk-scram"] == 9096 and ports["existing-mtls"] == 9094
    assert synth.configs["existing-mtls"].source.ports() == [9092, 19092]


# ---------------------------------------------------------------- IAM


@pytest.mark.parametrize("env", ALL_ENVS)
def test_every_iam_statement_is_scoped(synth: Synth, env: str) -> None:
    assert "kafka-cluster:*" not in json.dumps(synth.stacks[env])
    for where, doc in policy_documents(synth, env):
        for st in doc["Statement"]:
            actions = as_list(st["Action"])
            assert "NotAction" not in st and "NotResource" not in st, where
            assert not any(a == "*" or a.endswith(":*") for a in actions), (where, actions)
            if "Principal" in st:  # trust policy
                assert st["Action"] == "sts:AssumeRole"
                if "AWS" in st["Principal"]:
                    # The cleanup role: the operator task role of this stack only, from this account.
                    assert re.fullmatch(r"\$\{aws_iam_role\.iam_operator_task_\w+\.arn\}", st["Principal"]["AWS"]), where
                    assert st["Condition"] == {"StringEquals": {"aws:PrincipalAccount": synth.configs[env].account_id}}
                    continue
                # ECS tasks, and EMR Serverless / Glue for the validation job's roles (emr_serverless.py,
                # glue_validation.py), of this account only.
                assert st["Principal"] in ({"Service": "ecs-tasks.amazonaws.com"}, {"Service": "emr-serverless.amazonaws.com"},
                                           {"Service": "glue.amazonaws.com"})
                assert st["Condition"]["StringEquals"]["aws:SourceAccount"] == synth.configs[env].account_id
                continue
            resources = as_list(st["Resource"])
            if "*" in resources:
                # Actions IAM gives no resource-level permission: pulling needs a registry token, the operator image's
                # entrypoint reads the security groups on its own interface (task_self_check.py), and Glue reads the
                # network of its validation connection (glue_validation.py).
                assert actions in (["ecr:GetAuthorizationToken"], ["ec2:DescribeNetworkInterfaces"], GLUE_EC2_DESCRIBE) \
                    and resources == ["*"], (where, st)
            for r in resources:
                if any(a.startswith("kafka-cluster:") for a in actions):
                    assert re.match(r"^arn:aws[a-z-]*:kafka:[a-z0-9-]+:\d{12}:(cluster|topic|group)/[^/]+/[^/]+", r) or re.fullmatch(
                        TARGET_OUTPUT_REF % "cluster_arn", r
                    ), (where, r)


@pytest.mark.parametrize("env", ALL_ENVS)
def test_execution_roles_pull_own_images_and_read_only_own_secrets(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    policies = {v["role"]: json.loads(v["policy"]) for v in synth.resources(env, "aws_iam_role_policy").values() if v["name"] == "execution"}
    roles = {v["name"]: "${aws_iam_role." + k + ".id}" for k, v in synth.resources(env, "aws_iam_role").items()}
    grafana_secret = cfg.monitoring.grafana.admin_secret_arn or "${aws_secretsmanager_secret.grafana_admin.arn}"
    rest_auth = "${aws_secretsmanager_secret.connect_rest_auth_secret_B0B02E95.arn}"
    prom_auth = "${aws_secretsmanager_secret.prometheus_web_auth_secret_DF18098D.arn}"
    ca_seed = INTERNAL_CA_SECRET
    # Each person's own login (connect.people) is read by Connect's, Prometheus' and Grafana's execution roles (the
    # REST password, the bcrypt hash Prometheus' web config takes, the password of their Grafana user), by no other role.
    people = ["${aws_secretsmanager_secret." + k + ".arn}" for k, v in synth.resources(env, "aws_secretsmanager_secret").items()
              if v["name"].startswith(f"{cfg.resource_prefix}/connect-rest/")]
    assert len(people) == len(cfg.connect.people)
    expected_secrets = {
        "kafka-connect": [*cfg.secret_arns(), rest_auth, ca_seed, *people],
        "prometheus": [prom_auth, ca_seed, *people],
        "grafana": [grafana_secret, prom_auth, ca_seed, *people],
    }
    for component, secrets in expected_secrets.items():
        statements = {s["Sid"]: s for s in policies[roles[f"{cfg.resource_prefix}-{component}-execution"]]["Statement"]}
        (repo,) = as_list(statements["PullOwnImage"]["Resource"])
        assert re.fullmatch(r"\$\{aws_ecr_repository\.ecr_" + component.replace("-", "_") + r"_\w+\.arn\}", repo), repo
        read = as_list(statements["ReadOwnSecrets"]["Resource"]) if "ReadOwnSecrets" in statements else []
        assert sorted(read) == sorted(secrets), component


def test_connect_task_role_scopes_topics_and_groups_to_the_migration(synth: Synth) -> None:
    st = connect_task_statements(synth, "dev")
    topics = {r.rsplit("/", 1)[1] for r in st["TargetMskTopics"]["Resource"]}
    assert {"orders.*", "payments.*", "customers"} <= topics
    assert {"mm2-connect-configs", "mm2-connect-offsets", "mm2-connect-status"} <= topics
    # MM2's bookkeeping, named per migration (dev's migration.name is read from dev.yaml, not re-typed)
    name = env_config("dev").migration.name
    assert {f"mm2-offset-syncs.{name}.source.internal", f"{name}.source.checkpoints.internal", "heartbeats",
            "source.heartbeats"} <= topics
    assert "*" not in topics
    groups = {r.rsplit("/", 1)[1] for r in st["TargetMskGroups"]["Resource"]}
    assert groups == {"orders-*", "payments-*", "mm2-connect-dev"}
    for sid in ("TargetMskTopics", "TargetMskGroups"):
        for r in st[sid]["Resource"]:
            assert re.match(r"^arn:aws:kafka:eu-west-1:111111111111:(topic|group)/msk-migrate-dev/" + TARGET_OUTPUT_REF % "cluster_uuid" + "/", r), r
    assert set(st["TargetMskCluster"]["Action"]) == set(iam_mod.TARGET_CLUSTER_ACTIONS)
    assert set(st["TargetMskTopics"]["Action"]) >= {
        "kafka-cluster:CreateTopic", "kafka-cluster:WriteData", "kafka-cluster:AlterTopicDynamicConfiguration"
    }


def test_shared_target_grants_name_the_listed_topics_never_all(synth: Synth) -> None:
    st = connect_task_statements(synth, "prod")
    prefix = "arn:aws:kafka:eu-west-1:222222222222:topic/payments-prod/6f1b7c7e-2b4d-4a8e-9c3a-0d5e8f7a1b2c-3/"
    topics = st["TargetMskTopics"]["Resource"]
    assert prefix + "*" not in topics and all(t.startswith(prefix) for t in topics)
    assert {prefix + "payments.*", prefix + "ledger.*"} <= set(topics)
    group_prefix = prefix.replace(":topic/", ":group/")
    assert {group_prefix + "payments-*", group_prefix + "ledger-*"} <= set(st["TargetMskGroups"]["Resource"])
    assert st["TargetMskCluster"]["Resource"] == [synth.configs["prod"].target.existing_cluster_arn]


def test_msk_iam_source_gets_read_only_access_and_non_iam_target_gets_none(synth: Synth) -> None:
    st = connect_task_statements(synth, "msk-scram")
    assert not any(sid.startswith("TargetMsk") for sid in st), "SCRAM target: Kafka ACLs, not IAM"
    assert st["SourceMskReadCluster"]["Resource"] == [synth.configs["msk-scram"].source.msk_cluster_arn]
    read_only = {"kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:DescribeTopic", "kafka-cluster:ReadData",
                 "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:DescribeGroup"}
    for sid in ("SourceMskReadCluster", "SourceMskReadTopics", "SourceMskReadGroups"):
        assert set(st[sid]["Action"]) <= read_only
    assert {r.rsplit("/", 1)[1] for r in st["SourceMskReadTopics"]["Resource"]} == {"orders", "payments", "heartbeats"}


@pytest.mark.parametrize("env", ALL_ENVS)
def test_connect_task_role_reads_the_config_bucket(synth: Synth, env: str) -> None:
    st = connect_task_statements(synth, env)
    (bucket,) = [k for k in synth.resources(env, "aws_s3_bucket") if not k.startswith("configs_access_logs_")]
    assert st["ReadConnectorConfigs"]["Resource"] == ["${aws_s3_bucket." + bucket + ".arn}/*"]
    assert st["ListConnectorConfigs"]["Resource"] == ["${aws_s3_bucket." + bucket + ".arn}"]


@pytest.mark.parametrize("env", ALL_ENVS)
def test_operator_load_balancer_logs_every_request_to_the_access_log_bucket_only_under_its_prefix(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    lb = synth.one(env, "aws_lb")
    (logs,) = [k for k in synth.resources(env, "aws_s3_bucket") if k.startswith("configs_access_logs_")]
    assert lb["access_logs"] == {"bucket": "${aws_s3_bucket." + logs + ".id}", "prefix": "operator-alb", "enabled": True}
    # The load balancer waits for the policy admitting ELB delivery (AWS checks it when logging is turned on).
    assert any(d.startswith("aws_s3_bucket_policy.configs_access_logs_") for d in lb["depends_on"])
    (policy,) = [v for k, v in synth.resources(env, "aws_s3_bucket_policy").items() if k.startswith("configs_access_logs_")]
    st = {s["Sid"]: s for s in json.loads(policy["policy"])["Statement"]}
    where = ["${aws_s3_bucket." + logs + ".arn}/operator-alb/AWSLogs/" + cfg.account_id + "/*"]
    assert st["OperatorAlbAccessLogsDelivery"]["Principal"] == {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}
    assert st["OperatorAlbAccessLogsRegionalElbAccount"]["Principal"]["AWS"].startswith("${data.aws_elb_service_account.")
    for sid in ("OperatorAlbAccessLogsDelivery", "OperatorAlbAccessLogsRegionalElbAccount"):
        assert st[sid]["Action"] == "s3:PutObject" and st[sid]["Resource"] == where
    # The load balancer's checkov skip for access logging is gone with the reason for it.
    assert "checkov:skip=CKV_AWS_91" not in json.dumps(lb)


def test_each_person_has_a_generated_login_that_only_connect_prometheus_and_grafana_receive(synth: Synth) -> None:
    cfg = synth.configs["prod"]
    assert cfg.connect.people == ["alice", "j-smith"]
    secrets = {v["name"]: k for k, v in synth.resources("prod", "aws_secretsmanager_secret").items()}
    for person, upper in (("alice", "ALICE"), ("j-smith", "J_SMITH")):
        key = secrets[f"{cfg.resource_prefix}/connect-rest/{person}"]
        arn = "${aws_secretsmanager_secret." + key + ".arn}"
        injected = []
        for td in synth.resources("prod", "aws_ecs_task_definition").values():
            for c in json.loads(td["container_definitions"]):
                for sec in c.get("secrets", []):
                    if sec["valueFrom"].startswith(arn):
                        injected.append((td["family"], sec["name"], sec["valueFrom"]))
        # The Connect task gets the password (its entrypoint's credentials line), Prometheus the bcrypt hash (its
        # web config's basic_auth_users entry), Grafana the password (images/grafana/people.sh makes the user);
        # no other task gets anything of it.
        assert sorted(injected) == [
            (f"{cfg.resource_prefix}-grafana", f"MM2_GRAFANA_PERSON_{upper}_PASSWORD", arn + ":password::"),
            (f"{cfg.resource_prefix}-kafka-connect", f"CONNECT_REST_PERSON_{upper}", arn + ":password::"),
            (f"{cfg.resource_prefix}-prometheus", f"MM2_PROMETHEUS_PERSON_{upper}_BCRYPT", arn + ":password_bcrypt::"),
        ], injected
        # Only an execution role may read it: the operator task's role never sees a person's password.
        readers = [k for k, v in synth.resources("prod", "aws_iam_role_policy").items() if arn in v["policy"]]
        assert readers and all("exec" in k for k in readers), readers
    outputs = synth.stacks["prod"]["output"]["connect_rest_person_secret_arns"]["value"]
    assert sorted(outputs) == ["alice", "j-smith"]


@pytest.mark.parametrize("env", ALL_ENVS)
def test_kms_key_policy_delegates_to_the_account_and_this_environments_logs(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    key = synth.one(env, "aws_kms_key")
    assert key["enable_key_rotation"] is True
    for st in json.loads(key["policy"])["Statement"]:
        if "AWS" in st["Principal"]:
            assert st["Principal"] == {"AWS": f"arn:aws:iam::{cfg.account_id}:root"}
        else:
            assert st["Principal"] == {"Service": f"logs.{cfg.region}.amazonaws.com"} and cfg.log_kms
            assert st["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"].endswith(f":log-group:/{cfg.resource_prefix}/*")


# ---------------------------------------------------------------- MSK


@pytest.mark.parametrize("env", [e for e in ALL_ENVS if e in ("dev", "msk-scram")])
def test_created_msk_cluster_is_encrypted_authenticated_and_safe(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    cluster = synth.one(env, "aws_msk_cluster")
    assert cluster["encryption_info"]["encryption_in_transit"] == {"client_broker": "TLS", "in_cluster": True}
    assert cluster["encryption_info"]["encryption_at_rest_kms_key_arn"].startswith("${aws_kms_key.")
    assert cluster["client_authentication"] == {"sasl": {"iam": True, "scram": cfg.target.create.scram}, "unauthenticated": False}
    assert cluster["logging_info"]["broker_logs"]["cloudwatch_logs"]["enabled"] is True
    assert cluster["open_monitoring"]["prometheus"]["jmx_exporter"]["enabled_in_broker"] is True
    assert cluster["number_of_broker_nodes"] == cfg.target.create.broker_count
    props = dict(line.split("=", 1) for line in synth.one(env, "aws_msk_configuration")["server_properties"].splitlines())
    for key, value in SAFE_BROKER_DEFAULTS.items():
        assert props[key] == value
    assert props["auto.create.topics.enable"] == "false" and props["min.insync.replicas"] == "2"
    scram = synth.resources(env, "aws_msk_scram_secret_association")
    if cfg.target.create.scram:
        (assoc,) = scram.values()
        assert cfg.target.auth.secret_arn in assoc["secret_arn_list"]
    else:
        assert not scram


@pytest.mark.parametrize("env", [e for e in ALL_ENVS if e in ("prod", "existing-mtls")])
def test_existing_cluster_is_looked_up_by_arn(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    assert not synth.resources(env, "aws_msk_cluster")
    (brokers,) = synth.data(env, "aws_msk_bootstrap_brokers").values()
    assert brokers["cluster_arn"] == cfg.target.existing_cluster_arn
    attribute = BOOTSTRAP_ATTRIBUTE[cfg.target.auth.mode]
    assert brokers["lifecycle"]["postcondition"][0]["condition"] == f'${{self.{attribute} != ""}}'


# ---------------------------------------------------------------- connector configs in S3


@pytest.mark.parametrize("env", ALL_ENVS)
def test_config_bucket_is_hardened(synth: Synth, env: str) -> None:
    def one(rtype: str) -> dict:  # the config bucket's, not the access-log bucket's
        (found,) = [v for k, v in synth.resources(env, rtype).items() if not k.startswith("configs_access_logs_")]
        return found

    bucket = one("aws_s3_bucket")
    assert bucket["bucket"] == synth.configs[env].config_bucket_name and bucket["force_destroy"] is False
    assert one("aws_s3_bucket_versioning")["versioning_configuration"]["status"] == "Enabled"
    sse = one("aws_s3_bucket_server_side_encryption_configuration")["rule"][0]
    assert sse["apply_server_side_encryption_by_default"]["sse_algorithm"] == "aws:kms"
    block = one("aws_s3_bucket_public_access_block")
    assert all(block[k] is True for k in ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"))
    assert one("aws_s3_bucket_ownership_controls")["rule"]["object_ownership"] == "BucketOwnerEnforced"
    statements = {s["Sid"]: s for s in json.loads(one("aws_s3_bucket_policy")["policy"])["Statement"]}
    st = statements["DenyInsecureTransport"]  # the ledger's statements: test_infra_ledger_bucket.py
    assert st["Effect"] == "Deny" and st["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert len(st["Resource"]) == 2 and st["Resource"][1] == st["Resource"][0] + "/*"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_connector_objects_are_exactly_the_renderer_output_with_the_real_bootstrap(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    bootstrap = sample_bootstrap(synth, env)
    expected = render_connectors(cfg.source.endpoint(), cfg.target.endpoint(bootstrap), cfg.migration)
    objs = objects(synth, env)
    assert {k for k in objs if k.startswith("connectors/")} == {f"connectors/{n}.json" for n in expected}
    for name, config in expected.items():
        content = objs[f"connectors/{name}.json"]["content"]
        assert set(BOOTSTRAP_REF.findall(content)) == {BOOTSTRAP_ATTRIBUTE[cfg.target.auth.mode]}
        text = unescape_template(BOOTSTRAP_REF.sub(bootstrap, content))
        assert json.loads(text) == config
        assert text == json.dumps(config, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_worker_env_object_lists_the_plain_worker_environment(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    bootstrap = sample_bootstrap(synth, env)
    target = cfg.target.endpoint(bootstrap)
    content = unescape_template(BOOTSTRAP_REF.sub(bootstrap, objects(synth, env)["worker/connect-worker.env"]["content"]))
    pairs = dict(line.split("=", 1) for line in content.splitlines() if line and not line.startswith("#"))
    assert pairs == worker_environment(target, cfg.worker, cfg.source.endpoint(), rest=ECS_REST, migration=cfg.migration)
    for name in worker_secret_env(target, cfg.source.endpoint()):
        assert f"# {name}\n" in content and f"{name}=" not in content


@pytest.mark.parametrize("env", ALL_ENVS)
def test_no_secret_values_anywhere_in_objects_or_task_environments(synth: Synth, env: str) -> None:
    texts = [unescape_template(o["content"]) for o in objects(synth, env).values()]
    for c in containers(synth, env).values():
        texts += [f"{e['name']}={e['value']}" for e in c["environment"] if not _names_a_secret(e)]
    texts.append(json.dumps(synth.stacks[env]))
    for text in texts:
        for pattern in SECRET_LOOKING[:3]:
            assert not pattern.search(text), (pattern.pattern, text[:200])
    for text in texts[:-1]:
        for pattern in SECRET_LOOKING[3:]:
            assert not pattern.search(text), (pattern.pattern, text[:400])
    for key, obj in objects(synth, env).items():
        if key.endswith(".json"):
            for k, v in json.loads(unescape_template(BOOTSTRAP_REF.sub("x:1", obj["content"]))).items():
                if SECRET_CONFIG_KEY.search(k):
                    assert re.fullmatch(r"\$\{env:MM2_[A-Z_]+\}", v), (key, k, v)


# ---------------------------------------------------------------- ECS


def person_secret(synth: Synth, env: str, person: str) -> str:
    name = f"{synth.configs[env].resource_prefix}/connect-rest/{person}"
    (key,) = [k for k, v in synth.resources(env, "aws_secretsmanager_secret").items() if v["name"] == name]
    return "${aws_secretsmanager_secret." + key + ".arn}"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_passwords_and_keys_reach_containers_only_as_ecs_secrets(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    cs = containers(synth, env)
    for c in cs.values():
        names = [e["name"] for e in c["environment"] if not _names_a_secret(e)]
        assert not [n for n in names if SECRET_ENV_NAME.search(n)], names
    bootstrap = sample_bootstrap(synth, env)
    target, source = cfg.target.endpoint(bootstrap), cfg.source.endpoint()
    connect = cs["kafka-connect"]
    rest_auth = "${aws_secretsmanager_secret.connect_rest_auth_secret_B0B02E95.arn}"
    assert {s["name"]: s["valueFrom"] for s in connect.get("secrets", [])} == {
        **worker_secret_env(target, source),
        "CONNECT_REST_USERNAME": f"{rest_auth}:username::",
        "CONNECT_REST_PASSWORD": f"{rest_auth}:password::",
        ENV_REST_TLS_CA_SEED: f"{INTERNAL_CA_SECRET}:{CA_SEED_KEY}::",
        **{f"CONNECT_REST_PERSON_{p.upper().replace('-', '_')}": f"{person_secret(synth, env, p)}:password::" for p in cfg.connect.people},
    }
    env_values = {e["name"]: BOOTSTRAP_REF.sub(bootstrap, e["value"]) for e in connect["environment"]}
    assert env_values == worker_environment(target, cfg.worker, source, rest=ECS_REST, migration=cfg.migration)
    grafana = cs["grafana"]
    (secret,) = [s for s in grafana["secrets"] if s["name"] == "GF_SECURITY_ADMIN_PASSWORD"]
    assert {s["name"] for s in grafana["secrets"]} == {
        "GF_SECURITY_ADMIN_PASSWORD", "PROMETHEUS_BASIC_AUTH_USER", "PROMETHEUS_BASIC_AUTH_PASSWORD",
        *(f"MM2_GRAFANA_PERSON_{p.upper().replace('-', '_')}_PASSWORD" for p in cfg.connect.people)}
    arn = cfg.monitoring.grafana.admin_secret_arn or "${aws_secretsmanager_secret.grafana_admin.arn}"
    assert secret["valueFrom"] == f"{arn}:{cfg.monitoring.grafana.admin_secret_key}::"
    assert "GF_SECURITY_ADMIN_PASSWORD" not in [e["name"] for e in grafana["environment"]]
    if not cfg.monitoring.grafana.admin_secret_arn:
        created = synth.resources(env, "aws_secretsmanager_secret")["grafana_admin"]
        versions = synth.resources(env, "aws_secretsmanager_secret_version").values()
        assert not [v for v in versions if "secret_string" in v or "grafana" in v["secret_id"]], "no default password"
        # The environment key: this stack's, or the one target-<env> keeps.
        assert created["kms_key_id"].startswith("${aws_kms_key.") or re.fullmatch(TARGET_OUTPUT_REF % "kms_key_arn", created["kms_key_id"])


@pytest.mark.parametrize("env", ALL_ENVS)
def test_connect_task_definition_sizes_ports_health_and_roles(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    c = containers(synth, env)["kafka-connect"]
    td = c["_task"]
    assert (td["cpu"], td["memory"]) == (str(cfg.connect.cpu), str(cfg.connect.memory))
    assert td["requires_compatibilities"] == ["FARGATE"] and td["network_mode"] == "awsvpc"
    assert td["runtime_platform"] == {"cpu_architecture": "X86_64", "operating_system_family": "LINUX"}
    assert td["execution_role_arn"] != td["task_role_arn"], "separate execution and task roles"
    assert {p["containerPort"] for p in c["portMappings"]} == {cfg.worker.rest_port, cfg.worker.metrics_port}
    # The worker's certificate is made at start by the internal CA; the check verifies it.
    assert f"--cacert /tmp/connect/rest-tls/ca.pem -o /dev/null https://localhost:{cfg.worker.rest_port}/" in c["healthCheck"]["command"][1]
    assert c["logConfiguration"]["options"]["awslogs-group"] == f"/{cfg.resource_prefix}/connect"
    for name in ("prometheus", "grafana"):
        assert "task_role_arn" not in containers(synth, env)[name]["_task"], "no AWS API calls, no task role"


@pytest.mark.parametrize("env", ALL_ENVS)
def test_connect_autoscaling_tracks_cpu_within_tasks_max(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    (target,) = [t for t in synth.stacks[env]["resource"]["aws_appautoscaling_target"].values()]
    assert (target["min_capacity"], target["max_capacity"]) == (cfg.connect.min_capacity, cfg.connect.max_capacity)
    assert target["max_capacity"] <= cfg.migration.tasks_max
    assert target["scalable_dimension"] == "ecs:service:DesiredCount"
    (policy,) = [p for p in synth.stacks[env]["resource"]["aws_appautoscaling_policy"].values()]
    tt = policy["target_tracking_scaling_policy_configuration"]
    assert policy["policy_type"] == "TargetTrackingScaling"
    assert tt["predefined_metric_specification"]["predefined_metric_type"] == "ECSServiceAverageCPUUtilization"
    assert tt["target_value"] == cfg.connect.cpu_target_percent
    (connect,) = [s for s in synth.resources(env, "aws_ecs_service").values() if s["name"].endswith("-kafka-connect")]
    assert connect["lifecycle"]["ignore_changes"] == ["desired_count"]
    assert connect["desired_count"] == cfg.connect.desired_count


@pytest.mark.parametrize("env", ALL_ENVS)
def test_services_run_private_on_fargate_and_register_in_cloud_map(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    cluster = synth.one(env, "aws_ecs_cluster")
    assert {"name": "containerInsights", "value": "enabled"} in cluster["setting"]
    ns = synth.one(env, "aws_service_discovery_private_dns_namespace")
    assert ns["name"] == cfg.dns_namespace and ns["vpc"] == cfg.vpc_id
    discovery = {v["name"] for v in synth.resources(env, "aws_service_discovery_service").values()}
    follower = {"proof"} if cfg.proof.follower else set()  # the proof follower (test_infra_proof_follower.py)
    assert discovery == {"connect", "prometheus", "grafana", *follower}
    services = synth.resources(env, "aws_ecs_service")
    assert len(services) == 3 + len(follower)
    for s in services.values():
        assert s["launch_type"] == "FARGATE" and s["network_configuration"]["assign_public_ip"] is False
        assert s["network_configuration"]["subnets"] == cfg.subnet_ids
        assert s["service_registries"]["registry_arn"].startswith("${aws_service_discovery_service.")
        assert s["deployment_circuit_breaker"] == {"enable": True, "rollback": True}


@pytest.mark.parametrize("env", ALL_ENVS)
def test_log_groups_have_retention_and_optional_kms(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    groups = synth.resources(env, "aws_cloudwatch_log_group").values()
    # One per ECS component (the three services and the operator task), plus the brokers' when the stack creates MSK.
    assert len(groups) == len(ECR_COMPONENTS) + (1 if cfg.target.create else 0)
    for g in groups:
        assert g["retention_in_days"] == cfg.log_retention_days
        assert g["name"].startswith(f"/{cfg.resource_prefix}/")
        assert ("kms_key_id" in g) == cfg.log_kms


@pytest.mark.parametrize("env", ALL_ENVS)
def test_ecr_repositories_are_immutable_scanned_encrypted_and_pruned(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    repos = synth.resources(env, "aws_ecr_repository").values()
    assert {r["name"] for r in repos} == set(cfg.ecr_repository_names().values())
    for r in repos:
        assert r["image_tag_mutability"] == "IMMUTABLE"
        assert r["image_scanning_configuration"] == {"scan_on_push": True}
        assert r["encryption_configuration"][0]["encryption_type"] == "KMS"
    lifecycle = synth.resources(env, "aws_ecr_lifecycle_policy").values()
    assert len(lifecycle) == len(ECR_COMPONENTS)
    for lp in lifecycle:
        rules = json.loads(lp["policy"])["rules"]
        assert rules[-1]["selection"] == {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": cfg.ecr.keep_images}


def test_images_are_pinned_by_digest_when_the_build_manifest_exists(synth: Synth) -> None:
    for name, c in containers(synth, "dev").items():
        assert re.fullmatch(r"\$\{aws_ecr_repository\.\w+\.repository_url\}@" + DEV_DIGESTS[name], c["image"]), c["image"]


def test_images_use_the_configured_tag_without_a_manifest(synth: Synth) -> None:
    for c in containers(synth, "prod").values():
        assert re.fullmatch(r"\$\{aws_ecr_repository\.\w+\.repository_url\}:0\.1\.0", c["image"]), c["image"]


def test_prometheus_and_grafana_find_their_upstreams_through_cloud_map(synth: Synth) -> None:
    cs = containers(synth, "dev")
    prom = {e["name"]: e["value"] for e in cs["prometheus"]["environment"]}
    assert prom["MM2_CONNECT_DNS_NAME"] == "connect.msk-migrate-dev.internal" and prom["MM2_CONNECT_METRICS_PORT"] == "9404"
    graf = {e["name"]: e["value"] for e in cs["grafana"]["environment"]}
    assert graf["PROMETHEUS_URL"] == "https://prometheus.msk-migrate-dev.internal:9090"
    assert graf["GF_AUTH_ANONYMOUS_ENABLED"] == "false"


# ---------------------------------------------------------------- outputs


@pytest.mark.parametrize("env", ALL_ENVS)
def test_outputs_cover_urls_configs_repositories_brokers_and_services(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    out = {k: v["value"] for k, v in synth.stacks[env]["output"].items()}
    # The certificate's DNS name when the environment gives one (a Route 53 record points it at the load balancer).
    lb = cfg.operator_tls.dns_name or "${aws_lb.operator_alb_52782A49.dns_name}"
    assert out["connect_rest_url"] == f"https://{lb}:{cfg.worker.rest_port}"
    assert out["prometheus_url"] == f"https://{lb}:{PROMETHEUS_PORT}"
    assert out["grafana_url"] == f"https://{lb}"
    assert set(out["connector_config_s3_uris"]) == set(cfg.migration.connector_names().values())
    assert all(u.startswith(f"s3://{cfg.config_bucket_name}/connectors/") for u in out["connector_config_s3_uris"].values())
    assert set(out["ecr_repository_urls"]) == set(ECR_COMPONENTS) == {"kafka-connect", "prometheus", "grafana", "operator"}
    (family,) = [td["family"] for td in synth.resources(env, "aws_ecs_task_definition").values() if td["family"].endswith("-operator")]
    assert re.fullmatch(r"\$\{aws_ecs_task_definition\.\w+\.family\}", out["operator_task_definition"]) and family == f"{cfg.resource_prefix}-operator"
    assert cfg.target.auth.mode in out["target_bootstrap_brokers"]
    assert set(out["ecs_service_names"]) == {"kafka-connect", "prometheus", "grafana"}
    for key in ("ecs_cluster_name", "target_cluster_arn", "config_bucket", "worker_env_s3_uri", "grafana_admin_secret_arn"):
        assert out[key], key
