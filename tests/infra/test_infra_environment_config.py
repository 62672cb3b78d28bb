"""The environment file: validated once, bad input = one line naming the field and the fix, exit 2.

These run infra/main.py before the jsii runtime starts, so they are fast.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from infra_helpers import MAIN, SHIPPED, SHIPPED_DIR, VARIANTS, VARIANTS_DIR, env_config, run_main, write_manifest

from msk_migrate.config.environment import ecr_repository_names, load_environment
from msk_migrate.errors import UsageError


@pytest.mark.parametrize("name", SHIPPED + VARIANTS)
def test_every_environment_file_validates(name: str) -> None:
    cfg = env_config(name)
    assert cfg.name == name
    assert cfg.stack_name == f"migration-{name}"


def test_dev_and_prod_examples_are_shipped() -> None:
    assert {"dev", "prod"} <= set(SHIPPED)


def test_check_mode_validates_all_shipped_environments_without_synth(tmp_path: Path) -> None:
    proc = run_main("--check", "--outdir", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [w for env in SHIPPED for w in (f"migration-{env}:", "ok")]
    assert not (tmp_path / "out").exists()


def test_ecr_repository_names_follow_the_prefix() -> None:
    assert env_config("dev").ecr_repository_names() == {
        "kafka-connect": "msk-migrate-dev-kafka-connect",
        "prometheus": "msk-migrate-dev-prometheus",
        "grafana": "msk-migrate-dev-grafana",
        "operator": "msk-migrate-dev-operator",
    }
    assert env_config("msk-scram").ecr_repository_names() == ecr_repository_names("mm2-scramtest")


def _edit(data: dict, path: str, value: object) -> None:
    keys = path.split(".")
    for key in keys[:-1]:
        data = data.setdefault(key, {})
    if value is _DELETE:
        del data[keys[-1]]
    else:
        data[keys[-1]] = value


_DELETE = object()


def _load_main():
    import importlib.util

    spec = importlib.util.spec_from_file_location("msk_migrate_infra_main", MAIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


INFRA_MAIN = _load_main()

#: Checked through a real process (exit status) as well as in-process.
SUBPROCESS_CASES = {"autoscaling above tasks_max", "operator CIDR open to the internet", "unknown field", "shared target with every topic"}

# (what, edits on dev.yaml, the field the error must name, a word of the fix/explanation)
BAD = [
    ("autoscaling above tasks_max", {"connect.max_capacity": 8}, "connect.max_capacity", "tasks_max"),
    ("more workers than Cloud Map DNS returns", {"migration.tasks_max": 16, "connect.max_capacity": 9}, "connect.max_capacity", "Cloud Map"),
    ("operator CIDR open to the internet", {"operator_access.cidrs": ["0.0.0.0/0"]}, "operator_access.cidrs", "internet"),
    ("operator IPv6 CIDR open to the internet", {"operator_access.cidrs": ["::/0"]}, "operator_access.cidrs", "internet"),
    ("unknown field", {"worker.hep": "1g"}, "worker.hep", "remove it"),
    ("unknown top-level field", {"regon": "eu-west-1"}, "regon", "spelling"),
    ("missing required field", {"vpc_id": _DELETE}, "vpc_id", "add it"),
    ("unquoted account id", {"account_id": 111111111111}, "account_id", "quoted"),
    ("name differs from file name", {"name": "staging"}, "name", "set name: dev"),
    ("no operator access at all", {"operator_access": {}}, "operator_access", "at least one"),
    ("source network missing", {"source.network": {}}, "source.network", "cidrs"),
    ("source broker CIDR open to the internet", {"source.network.cidrs": ["0.0.0.0/0"]}, "source.network.cidrs", "internet"),
    ("create and existing together", {"target.existing_cluster_arn": "arn:aws:kafka:eu-west-1:111111111111:cluster/x/abc-1"}, "target", "exactly one"),
    ("existing cluster in another account", {"target.create": _DELETE, "target.existing_cluster_arn": "arn:aws:kafka:eu-west-1:999999999999:cluster/x/abc-1", "target.network": {"security_group_ids": ["sg-0123456789abcdef0"]}}, "target.existing_cluster_arn", "account"),  # noqa: E501
    ("broker count not a multiple of subnets", {"target.create.broker_count": 4}, "target.create.broker_count", "multiple"),
    ("mtls on a created cluster", {"target.auth": {"mode": "mtls", "secret_arn": "arn:aws:secretsmanager:eu-west-1:111111111111:secret:x-AbCdEf"}}, "target", "iam"),  # noqa: E501
    ("safe broker default overridden", {"target.create.server_properties": {"unclean.leader.election.enable": "true"}}, "target.create.server_properties", "fixed"),  # noqa: E501
    ("fargate size that does not exist", {"connect.memory": 1000}, "connect", "Fargate"),
    ("proof follower of a size Fargate lacks", {"proof": {"follower": True, "cpu": 512, "memory": 8192}}, "proof", "Fargate"),
    ("proof follower passes too far apart", {"proof": {"follower": True, "interval_seconds": 3600}}, "proof.interval_seconds", "300"),
    ("glue job below Glue's worker minimum", {"validation": {"glue": True, "glue_workers": 1}}, "validation.glue_workers", "2"),
    ("unknown validation home", {"validation": {"databricks": True}}, "validation.databricks", "unknown field"),
    ("heap larger than the task", {"worker.heap": "4g"}, "connect.memory", "heap"),
    ("desired count outside the bounds", {"connect.desired_count": 6}, "connect", "desired_count"),
    ("partial secret ARN", {"source.auth.secret_arn": "arn:aws:secretsmanager:eu-west-1:111111111111:secret:msk-migrate/dev/source-scram"}, "source", "suffix"),
    ("floating image tag", {"image_tag": "latest"}, "image_tag", "immutable"),
    ("log retention CloudWatch does not offer", {"log_retention_days": 10}, "log_retention_days", "retention"),
    ("unlocked remote state", {"backend": {"bucket": "my-state"}}, "backend", "locking"),
    ("tag that shadows a default tag", {"tags": {"owner": "x"}}, "tags", "owner field"),
    ("invalid topic regex", {"migration.topics": ["orders("]}, "migration.topics", "regex"),
    # issue 11: values the real system would reject, and unsafe defaults that need an explicit opt-in
    ("region that does not exist", {"region": "eu-westt-1"}, "region", "eu-west-1"),
    ("region-shaped name AWS does not have", {"region": "eu-north-9"}, "region", "MSK"),
    ("MSK version that does not exist", {"target.create.kafka_version": "9.9.9"}, "target.create.kafka_version", "3.9.x"),
    ("MSK version past its end of support", {"target.create.kafka_version": "3.6.0"}, "target.create.kafka_version", "supported"),
    ("broker instance type that does not exist", {"target.create.instance_type": "kafka.t9.huge"}, "target.create.instance_type", "kafka.m7g.large"),
    ("replication factor above the broker count", {"migration.replication_factor": 5}, "migration.replication_factor", "3 brokers"),
    ("internal replication factor below min ISR + 1", {"migration.internal_replication_factor": 2}, "migration.internal_replication_factor", "min.insync.replicas"),  # noqa: E501
    ("worker topics replication factor below min ISR + 1", {"worker.replication_factor": 1}, "worker.replication_factor", "at least 3"),
    ("operator CIDR of half the internet", {"operator_access.cidrs": ["0.0.0.0/1"]}, "operator_access.cidrs", "allow_wide_cidrs"),
    ("operator CIDR wider than the bound", {"operator_access.cidrs": ["10.0.0.0/8"]}, "operator_access.cidrs", "/16"),
    ("operator IPv6 CIDR wider than the bound", {"operator_access.cidrs": ["2001:db8::/32"]}, "operator_access.cidrs", "/48"),
    ("plaintext source without opt-in", {"source.auth": {"mode": "plaintext"}}, "source.auth.mode", "allow_plaintext"),
    ("plaintext source by default", {"source.auth": _DELETE}, "source.auth.mode", "allow_plaintext"),
    ("both stacks' state in one object", {"backend": {"bucket": "tf-state", "dynamodb_table": "locks", "key": "m.tfstate", "target_key": "m.tfstate"}}, "backend.target_key", "own object"),  # noqa: E501
    ("storage autoscaling below the initial size", {"target.create.max_ebs_gb": 100}, "target.create.max_ebs_gb", "only grow"),
]

#: An existing shared target cluster (prod.yaml) needs explicit topic and group patterns.
BAD_PROD = [
    ("shared target with every topic", {"migration.topics": [".*"]}, "migration.topics", "literal prefix"),
    ("shared target with topics by default", {"migration.topics": _DELETE}, "migration.topics", "literal prefix"),
    ("shared target with a prefix-less group regex", {"migration.groups": ["[a-z]+-consumers"]}, "migration.groups", "literal prefix"),
    ("plaintext existing target without opt-in", {"target.auth": {"mode": "plaintext"}}, "target.auth.mode", "allow_plaintext"),
    ("a person named like no login", {"connect.people": ["Alice"]}, "connect.people", "lower-case letters"),
    ("the machine login listed as a person", {"connect.people": ["mm2-operator"]}, "connect.people", "name the person"),
    ("a person listed twice", {"connect.people": ["alice", "alice"]}, "connect.people", "list each person once"),
    ("Grafana's admin login listed as a person", {"connect.people": ["alice", "admin"]}, "connect.people", "Grafana's admin login"),
]


CASES = [("dev", *b) for b in BAD] + [("prod", *b) for b in BAD_PROD]


@pytest.mark.parametrize("env,what,edits,field,hint", CASES, ids=[c[1] for c in CASES])
def test_bad_environment_fails_with_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture, env: str, what: str, edits: dict, field: str, hint: str
) -> None:
    data = yaml.safe_load((SHIPPED_DIR / f"{env}.yaml").read_text())
    for path, value in edits.items():
        _edit(data, path, value)
    envs = tmp_path / "environments"
    envs.mkdir()
    (envs / f"{env}.yaml").write_text(yaml.safe_dump(data))
    args = ["--environments", str(envs), "--outdir", str(tmp_path / "out")]
    if what in SUBPROCESS_CASES:
        proc = run_main(*args)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        code = INFRA_MAIN.main(args)
        out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {env}.yaml: {field}:"), lines[0]
    assert hint.lower() in lines[0].lower(), lines[0]
    assert out == ""
    assert not (tmp_path / "out").exists(), "nothing may be synthesized from a bad environment"


def test_one_bad_environment_stops_the_whole_synth(tmp_path: Path) -> None:
    envs = tmp_path / "environments"
    shutil.copytree(SHIPPED_DIR, envs)
    (envs / "zzz.yaml").write_text("name: zzz\n")
    proc = run_main("--environments", str(envs), "--outdir", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert re.match(r"error: zzz\.yaml: \w+: required field is missing", proc.stderr)
    assert not (tmp_path / "out").exists()


def test_unknown_environment_name_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_main("--env", "staging", "--outdir", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --env: no staging.yaml") and "dev" in proc.stderr


def test_build_manifest_of_another_account_is_refused(tmp_path: Path) -> None:
    cfg = env_config("dev")
    path = write_manifest(tmp_path, cfg, {c: "sha256:" + "d" * 64 for c in cfg.ecr_repository_names()})
    path.write_text(path.read_text().replace('"account": "111111111111"', '"account": "999999999999"'))
    proc = run_main("--env", "dev", "--build-dir", str(tmp_path), "--check")
    assert proc.returncode == 2
    assert "manifest-111111111111-eu-west-1.json: account" in proc.stderr and "999999999999" in proc.stderr


def test_loading_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="file not found"):
        load_environment(tmp_path / "nope.yaml")


def test_variant_files_live_beside_the_tests() -> None:
    assert VARIANTS and all((VARIANTS_DIR / f"{v}.yaml").is_file() for v in VARIANTS)


def test_cross_field_checks_do_not_depend_on_the_order_of_the_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = yaml.safe_load((SHIPPED_DIR / "dev.yaml").read_text())
    data["connect"]["max_capacity"] = 8
    envs = tmp_path / "environments"
    envs.mkdir()
    errors = []
    for order in (list(data), list(reversed(data))):
        (envs / "dev.yaml").write_text(yaml.safe_dump({k: data[k] for k in order}, sort_keys=False))
        assert INFRA_MAIN.main(["--environments", str(envs), "--check"]) == 2
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1] and errors[0].startswith("error: dev.yaml: connect.max_capacity:")
