"""The proof follower as a service of the stack (``proof.follower: true``, the msk-scram variant; issue 34):
``validate --follow`` from the operator image as the stack's own runbook request, its mark under the migration's
proof prefix of the config bucket (and nothing else of it), its metrics port reachable from Prometheus alone, and
its task in Cloud Map under the name Prometheus' ``msk-migrate-proof`` job resolves. Environments without the
field get none of it."""

from __future__ import annotations

import json
import re

import yaml
from infra_helpers import REPO, Synth

from msk_migrate.aws.operator_entry import IN_TASK_FLOW, requested_words
from msk_migrate.aws.operator_stack import CONFIG_ENV, SECURITY_GROUPS_ENV, STACK_ARGV_ENV, SUBNETS_ENV
from msk_migrate.aws.task_view import ARGV_ENV
from msk_migrate.config.environment import PROOF_METRICS_PORT
from msk_migrate.config.migration_file import MigrationFile
from mskinfra.tfjson import unescape_template


# (the rule helpers of test_infra_synth.py, not imported: that module loads the cdktf bindings, this one stays light)
def ingress_rules(synth: Synth, env: str) -> list[dict]:
    return list(synth.resources(env, "aws_vpc_security_group_ingress_rule").values())


def egress_rules(synth: Synth, env: str) -> list[dict]:
    return list(synth.resources(env, "aws_vpc_security_group_egress_rule").values())


def sg_ref(synth: Synth, env: str, name: str) -> str:
    (key,) = [k for k, v in synth.resources(env, "aws_security_group").items() if v["name"] == f"{synth.configs[env].resource_prefix}-{name}"]
    return "${aws_security_group." + key + ".id}"


ENV = "msk-scram"  # IAM source, SCRAM target (a secret with its KMS key), created cluster, own namespace
WITHOUT = "dev"


def _follower(synth: Synth, env: str = ENV) -> tuple[dict, dict, dict]:
    """(service, task definition, container) of the follower."""
    prefix = synth.configs[env].resource_prefix
    (service,) = [s for s in synth.resources(env, "aws_ecs_service").values() if s["name"] == f"{prefix}-proof-follower"]
    (td,) = [t for t in synth.resources(env, "aws_ecs_task_definition").values() if t["family"] == f"{prefix}-proof-follower"]
    (container,) = json.loads(unescape_template(td["container_definitions"]))
    return service, td, container


def _role_key(synth: Synth, env: str, name: str) -> str:
    (key,) = [k for k, v in synth.resources(env, "aws_iam_role").items() if v["name"] == name]
    return key


def _statements(synth: Synth, env: str, policy_name: str) -> list[dict]:
    (doc,) = [json.loads(v["policy"]) for v in synth.resources(env, "aws_iam_role_policy").values() if v["name"] == policy_name]
    return doc["Statement"]


def test_the_follower_runs_validate_follow_from_the_operator_image_as_the_stacks_own_request(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    service, td, c = _follower(synth)
    # the operator image, its entrypoint untouched: no command, no entryPoint (issue 37); the request is data
    assert "command" not in c and "entryPoint" not in c
    assert re.fullmatch(r"\$\{aws_ecr_repository\.ecr_operator_\w+\.repository_url\}:" + re.escape(cfg.image_tag), c["image"]), c["image"]
    env = {e["name"]: e["value"] for e in c["environment"]}
    words, from_caller = requested_words(env)  # the stack's own request, run as the stack wrote it
    assert not from_caller and ARGV_ENV not in env
    assert words[:2] == ["validate", "--follow"]
    opts = dict(zip(words[2::2], words[3::2], strict=False))
    assert opts["--config"] == IN_TASK_FLOW
    assert opts["--mark"] == f"s3://{cfg.config_bucket_name}/proof/{cfg.migration.name}/"
    assert opts["--metrics-port"] == str(PROOF_METRICS_PORT) and opts["--metrics-bind"] == "0.0.0.0"
    assert float(opts["--interval"]) == cfg.proof.interval_seconds
    # the flow: this environment's clusters and migration, the target's real bootstrap (a Terraform reference)
    doc = yaml.safe_load(env[CONFIG_ENV])
    bootstrap = doc["target"]["bootstrap_servers"]
    assert re.fullmatch(r"\$\{data\.terraform_remote_state\.\w+\.outputs\.bootstrap_brokers\w*\}", bootstrap), bootstrap
    doc["target"]["bootstrap_servers"] = "b-1.sample:9096"  # what Terraform puts there at apply
    flow = MigrationFile.model_validate(doc)
    assert flow.migration.name == cfg.migration.name and flow.migration.topics == cfg.migration.topics
    assert flow.source.bootstrap_servers == cfg.source.bootstrap_servers and flow.source.auth.mode == "iam"
    assert flow.target.auth.secret_arn == cfg.target.auth.secret_arn
    assert "target-bootstrap.invalid" not in env[CONFIG_ENV]
    assert json.loads(env[STACK_ARGV_ENV]) == words
    # where ECS must have started it for the entrypoint to run it: the stack's subnets and the follower's group
    assert json.loads(env[SUBNETS_ENV]) == list(cfg.subnet_ids)
    (sg,) = json.loads(env[SECURITY_GROUPS_ENV])
    assert re.fullmatch(r"\$\{aws_security_group\.\w+\.id\}", sg), sg
    # the operator image's hardening, sized by the environment, as its own task role; the operator's execution role
    assert c["readonlyRootFilesystem"] is True and c["linuxParameters"]["capabilities"]["drop"] == ["ALL"]
    assert (td["cpu"], td["memory"]) == (str(cfg.proof.cpu), str(cfg.proof.memory))
    assert td["task_role_arn"] == "${aws_iam_role." + _role_key(synth, ENV, f"{cfg.resource_prefix}-proof-follower-task") + ".arn}"
    assert td["execution_role_arn"] == "${aws_iam_role." + _role_key(synth, ENV, f"{cfg.resource_prefix}-operator-execution") + ".arn}"
    # one follower, never two writing one mark: deployments stop the old task first; private, no load balancer
    assert service["desired_count"] == 1
    assert (service["deployment_minimum_healthy_percent"], service["deployment_maximum_percent"]) == (0, 100)
    assert service["network_configuration"]["assign_public_ip"] is False and not service.get("load_balancer")
    assert service["network_configuration"]["security_groups"] == [sg_ref(synth, ENV, "proof")]


def test_the_follower_role_reads_both_clusters_and_writes_only_its_mark_prefix(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    st = {s["Sid"]: s for s in _statements(synth, ENV, "proof-follower")}
    kafka = {a for s in st.values() for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]) if a.startswith("kafka-cluster:")}
    assert kafka == {"kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:DescribeTopic",
                     "kafka-cluster:ReadData", "kafka-cluster:DescribeGroup"}, "read only: no write, alter or delete"
    # the IAM source's topics of this migration, and the follower's own consumer groups only
    assert st["ProofSourceMskReadCluster"]["Resource"] == [cfg.source.msk_cluster_arn]
    assert all(r.endswith(("/orders", "/payments", "/heartbeats")) for r in st["ProofSourceMskReadTopics"]["Resource"])
    assert all(r.endswith("/msk-migrate-follow-*") for r in st["ProofSourceMskReadGroups"]["Resource"])
    assert "ProofTargetMskReadCluster" not in st  # a SCRAM target: no MSK IAM there, its secret instead
    assert st["ReadClusterSecrets"]["Resource"] == cfg.secret_arns()
    assert st["DecryptClusterSecrets"]["Condition"]["StringEquals"]["kms:ViaService"].startswith("secretsmanager.")
    # S3: the mark prefix only (read, replace, list under it), the stack key through S3 only
    s3 = [s for s in st.values() if any(a.startswith("s3:") for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))]
    prefix = f"proof/{cfg.migration.name}/"
    for s in s3:
        for r in s["Resource"]:
            assert r.endswith(f"/{prefix}*") or s["Condition"]["StringLike"]["s3:prefix"] == [f"{prefix}*"], s
    assert sorted(st["ProofMarkObjects"]["Action"]) == ["s3:GetObject", "s3:PutObject"]
    assert st["ProofMarkEncryption"]["Condition"]["StringEquals"]["kms:ViaService"].startswith("s3.")


def test_the_operator_task_reads_the_mark_for_the_gates_and_never_writes_it(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    st = {s["Sid"]: s for s in _statements(synth, ENV, "operator")}
    assert st["ReadProofMarkObjects"]["Action"] == ["s3:GetObject"]
    assert all(r.endswith(f"/proof/{cfg.migration.name}/*") for r in st["ReadProofMarkObjects"]["Resource"])
    assert "ReadProofMarkObjects" not in {s["Sid"] for s in _statements(synth, WITHOUT, "operator")}


def test_only_prometheus_reaches_the_follower_and_the_follower_reaches_only_the_brokers_and_aws_apis(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    proof, prom = sg_ref(synth, ENV, "proof"), sg_ref(synth, ENV, "prometheus")
    ing = [r for r in ingress_rules(synth, ENV) if r["security_group_id"] == proof]
    assert [(r["from_port"], r.get("referenced_security_group_id")) for r in ing] == [(PROOF_METRICS_PORT, prom)]
    assert any(r["security_group_id"] == prom and r["from_port"] == PROOF_METRICS_PORT
               and r.get("referenced_security_group_id") == proof for r in egress_rules(synth, ENV))
    out = {r["from_port"] for r in egress_rules(synth, ENV) if r["security_group_id"] == proof}
    registries = {cfg.schema_registry.port("source"), cfg.schema_registry.port("target")} if cfg.schema_registry else set()
    assert out == {443, cfg.target.port, *cfg.source.ports(), *registries}  # 443: AWS APIs (test_infra_aws_endpoints.py)


def test_cloud_map_registers_the_follower_under_the_name_prometheus_scrapes(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    service, _td, c = _follower(synth)
    (key,) = [k for k, v in synth.resources(ENV, "aws_service_discovery_service").items() if v["name"] == "proof"]
    assert service["service_registries"]["registry_arn"] == "${aws_service_discovery_service." + key + ".arn}"
    assert c["portMappings"] == [{"name": "metrics", "containerPort": PROOF_METRICS_PORT, "protocol": "tcp"}]
    (prom_td,) = [t for t in synth.resources(ENV, "aws_ecs_task_definition").values() if t["family"].endswith("-prometheus")]
    (prom,) = [x for x in json.loads(unescape_template(prom_td["container_definitions"])) if x["name"] == "prometheus"]
    assert {e["name"]: e["value"] for e in prom["environment"]}["MM2_PROOF_DNS_NAME"] == f"proof.{cfg.dns_namespace}"
    # the scrape job's name and port carry the marker the entrypoint renders (prometheus/entrypoint.sh)
    job = (REPO / "prometheus" / "prometheus.yml").read_text().split("job_name: msk-migrate-proof", 1)[1].split("job_name:", 1)[0]
    assert re.search(r'"proof\.[a-z.-]+"\s+# MM2_PROOF_DNS_NAME', job) and f"port: {PROOF_METRICS_PORT}" in job


def test_environments_without_the_follower_have_no_follower_resources(synth: Synth) -> None:
    assert not synth.configs[WITHOUT].proof.follower
    stack = json.dumps(synth.stacks[WITHOUT])
    assert "proof-follower" not in stack and "MM2_PROOF_DNS_NAME" not in stack
    assert "proof" not in {v["name"] for v in synth.resources(WITHOUT, "aws_service_discovery_service").values()}
