"""The validation job's Glue home in the synthesized stack (``validation.glue: true``, the existing-mtls variant;
issue 46): a Glue 5.0 Spark job whose script is the version's digest-free entry script in the config bucket,
a NETWORK connection in the environment's first subnet with the EMR home's validation security group (and its
availability zone read from that subnet), and a role trusted by Glue of this account only, holding the EMR
execution role's statements plus the connection's network interfaces and /aws-glue/* logs, nothing wider.
Environments without the setting get none of it."""

from __future__ import annotations

import json

from infra_helpers import Synth

from msk_migrate import __version__
from msk_migrate.aws import glue as glue_mod

ENV = "existing-mtls"
WITHOUT = ("dev", "prod", "msk-scram")
GLUE_TYPES = ("aws_glue_job", "aws_glue_connection")


def _one(synth: Synth, env: str, rtype: str) -> tuple[str, dict]:
    ((key, block),) = synth.resources(env, rtype).items()
    return key, block


def _role(synth: Synth, env: str) -> tuple[str, dict]:
    name = glue_mod.role_name(synth.configs[env])
    ((key, block),) = [(k, v) for k, v in synth.resources(env, "aws_iam_role").items() if v["name"] == name]
    return key, block


def _statements(synth: Synth, env: str) -> dict[str, dict]:
    key, _ = _role(synth, env)
    (policy,) = [v for v in synth.resources(env, "aws_iam_role_policy").values() if v["role"] == "${aws_iam_role." + key + ".id}"]
    return {s["Sid"]: s for s in json.loads(policy["policy"])["Statement"]}


def _validation_sg(synth: Synth, env: str) -> str:
    (key,) = [k for k, v in synth.resources(env, "aws_security_group").items()
              if v["name"] == f"{synth.configs[env].resource_prefix}-validation"]
    return key


def test_the_glue_job_runs_the_versions_entry_script_on_glue_5_with_the_job_jars_first(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    _, job = _one(synth, ENV, "aws_glue_job")
    assert job["name"] == glue_mod.job_name(cfg) == f"{cfg.resource_prefix}-validation"
    assert job["glue_version"] == "5.0" and job["worker_type"] == "G.1X" and job["number_of_workers"] == cfg.validation.glue_workers == 4
    assert job["command"]["name"] == "glueetl" and job["command"]["python_version"] == "3"
    assert job["command"]["script_location"] == f"s3://{cfg.config_bucket_name}/validation/job/{__version__}/spark_entry.py"
    assert job["max_retries"] == 0
    args = job["default_arguments"]
    assert args["--user-jars-first"] == "true" and args["--enable-continuous-cloudwatch-log"] == "true"
    # the digest's zip and jars travel per run (validate --on glue): never pinned in the stack
    assert "--extra-py-files" not in args and "--extra-jars" not in args
    role_key, _ = _role(synth, ENV)
    assert job["role_arn"] == "${aws_iam_role." + role_key + ".arn}"
    conn_key, _ = _one(synth, ENV, "aws_glue_connection")
    assert job["connections"] == ["${aws_glue_connection." + conn_key + ".name}"]


def test_the_connection_is_in_the_first_subnet_and_its_zone_with_the_validation_security_group(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    _, conn = _one(synth, ENV, "aws_glue_connection")
    assert conn["name"] == glue_mod.connection_name(cfg) and conn["connection_type"] == "NETWORK"
    ((data_key, data),) = synth.data(ENV, "aws_subnet").items()
    assert data["id"] == cfg.subnet_ids[0]
    req = conn["physical_connection_requirements"]
    assert req["availability_zone"] == "${data.aws_subnet." + data_key + ".availability_zone}"
    assert req["subnet_id"] == "${data.aws_subnet." + data_key + ".id}"
    sg = _validation_sg(synth, ENV)
    assert req["security_group_id_list"] == ["${aws_security_group." + sg + ".id}"]
    # Glue's requirement between its workers: all TCP to and from the group itself, and nothing else added to it
    ref = "${aws_security_group." + sg + ".id}"
    selfish = [r for rtype in ("aws_vpc_security_group_ingress_rule", "aws_vpc_security_group_egress_rule")
               for r in synth.resources(ENV, rtype).values() if r["security_group_id"] == ref and r.get("referenced_security_group_id") == ref]
    assert len(selfish) == 2 and all((r["ip_protocol"], r["from_port"], r["to_port"]) == ("tcp", 0, 65535) for r in selfish)
    assert not [r for r in synth.resources(ENV, "aws_vpc_security_group_ingress_rule").values()
                if r["security_group_id"] == ref and r.get("referenced_security_group_id") != ref]  # still no ingress from elsewhere


def test_the_role_is_trusted_by_glue_of_this_account_only_and_scoped(synth: Synth) -> None:
    cfg = synth.configs[ENV]
    _, role = _role(synth, ENV)
    (trust,) = json.loads(role["assume_role_policy"])["Statement"]
    assert trust["Principal"] == {"Service": "glue.amazonaws.com"} and trust["Action"] == "sts:AssumeRole"
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": cfg.account_id}}
    st = _statements(synth, ENV)
    # the EMR execution role's statements, the same ones
    emr = {s["Sid"]: s for v in synth.resources(ENV, "aws_iam_role_policy").values()
           for s in json.loads(v["policy"])["Statement"] if v["role"].startswith("${aws_iam_role.validation_execution")}
    assert emr and all(st[sid] == s for sid, s in emr.items())
    assert st["ReadJobPackage"]["Resource"][0].endswith("/validation/job/*")
    # the follower's chained runs continue the migration's mark, and no other object of the bucket
    assert sorted(st["ProofMarkObjects"]["Action"]) == ["s3:GetObject", "s3:PutObject"]
    assert st["ProofMarkObjects"]["Resource"][0].endswith(f"/proof/{cfg.migration.name}/*")
    assert st["ProofMarkList"]["Condition"] == {"StringLike": {"s3:prefix": [f"proof/{cfg.migration.name}/*"]}}
    assert st["ReadClusterSecrets"]["Resource"] == sorted(cfg.secret_arns())
    # the connection: reads IAM cannot scope, interfaces in the connection's subnet with its group only
    assert st["GlueConnectionReads"]["Resource"] == "*"
    assert all(a.startswith("ec2:Describe") for a in st["GlueConnectionReads"]["Action"])
    ec2 = f"arn:aws:ec2:{cfg.region}:{cfg.account_id}"
    (data_key,) = synth.data(ENV, "aws_subnet")
    subnet_arn = "${data.aws_subnet." + data_key + ".arn}"
    assert st["GlueConnectionInterfaces"]["Action"] == "ec2:CreateNetworkInterface"
    assert st["GlueConnectionInterfaces"]["Resource"] == [f"{ec2}:network-interface/*", subnet_arn,
                                                          "${aws_security_group." + _validation_sg(synth, ENV) + ".arn}"]
    assert st["GlueConnectionInterfacesGone"]["Condition"] == {"ArnEquals": {"ec2:Subnet": subnet_arn}}
    assert st["GlueConnectionInterfaceTags"]["Condition"] == {"ForAllValues:StringEquals": {"aws:TagKeys": ["aws-glue-service-resource"]}}
    logs = f"arn:aws:logs:{cfg.region}:{cfg.account_id}:log-group:/aws-glue/*"
    assert st["GlueLogs"]["Resource"] == [logs, f"{logs}:log-stream:*"]
    wildcard = [sid for sid, s in st.items() if "*" in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])]
    assert wildcard == ["GlueConnectionReads"]
    assert not any(a == "*" or a.endswith(":*") for s in st.values() for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))


def test_environments_without_the_setting_get_no_glue(synth: Synth) -> None:
    for env in WITHOUT:
        assert not synth.configs[env].validation.glue
        for rtype in GLUE_TYPES:
            assert not synth.resources(env, rtype), (env, rtype)
        assert not synth.data(env, "aws_subnet"), env
        assert not [v for v in synth.resources(env, "aws_iam_role").values() if v["name"].endswith("-validation-glue")], env
