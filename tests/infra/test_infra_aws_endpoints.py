"""The tasks' egress: the clusters', the registries', the worker's and AWS's endpoints, never 443 to everywhere.

Over the synthesized stacks (the session's ``synth``): no security group egress rule reaches ``0.0.0.0/0``, ``::/0``
or any public range unless the environment opted in (``existing-mtls``: a NAT gateway, with its reason); with
``network.aws_endpoints: create`` the stack makes the interface endpoints (private DNS on) with a group that admits
443 from the task groups only, and the S3 gateway endpoint whose prefix list is the tasks' other 443 peer; with
``existing`` the 443 peers are exactly ``network.https_egress``. The registries' flows (msk-scram) go to their peers
on their URLs' ports. Bad input: one line naming the field, exit 2.

Which environment covers what: dev (create, route tables named), msk-scram (create, route tables looked up,
registries), prod (existing: the VPC's CIDR + S3 prefix list), existing-mtls (existing: 0.0.0.0/0, opted in).
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
import yaml
from infra_helpers import ALL_ENVS, SHIPPED_DIR, Synth, env_config, run_main

from mskinfra.endpoints import INTERFACE_SERVICES

#: The task groups (``<prefix>-<name>``) that reach AWS's APIs.
TASK_GROUPS = ("connect", "prometheus", "grafana", "validation")
#: Environments whose stack makes the endpoints: dev names its route tables, msk-scram has them looked up.
CREATE = [e for e in ALL_ENVS if env_config(e).network.aws_endpoints == "create"]


def _groups(synth: Synth, env: str) -> dict[str, str]:
    """``<name>`` (without the prefix) -> the group's id reference."""
    prefix = synth.configs[env].resource_prefix + "-"
    return {v["name"].removeprefix(prefix): "${aws_security_group." + k + ".id}"
            for k, v in synth.resources(env, "aws_security_group").items()}


def _task_groups(synth: Synth, env: str) -> dict[str, str]:
    groups = _groups(synth, env)
    names = [*TASK_GROUPS, *(["proof"] if synth.configs[env].proof.follower else [])]
    return {n: groups[n] for n in names}


def _rules(synth: Synth, env: str, direction: str) -> list[dict]:
    return list(synth.resources(env, f"aws_vpc_security_group_{direction}_rule").values())


def _peer(rule: dict) -> str:
    return next(rule[k] for k in ("referenced_security_group_id", "cidr_ipv4", "cidr_ipv6", "prefix_list_id") if rule.get(k))


def _endpoint_refs(synth: Synth, env: str) -> dict[str, str]:
    """service name -> ``aws_vpc_endpoint.<key>``."""
    return {v["service_name"]: f"aws_vpc_endpoint.{k}" for k, v in synth.resources(env, "aws_vpc_endpoint").items()}


# ---------------------------------------------------------------- every stack


@pytest.mark.parametrize("env", ALL_ENVS)
def test_no_egress_reaches_the_internet_unless_the_environment_opted_in(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    tasks = set(_task_groups(synth, env).values())
    internet = []
    for rule in _rules(synth, env, "egress"):
        cidr = rule.get("cidr_ipv4") or rule.get("cidr_ipv6")
        if cidr and ipaddress.ip_network(cidr).is_global:
            internet.append(rule)
    if not cfg.network.allow_internet_https:
        assert internet == [], f"{env}: egress to the internet without network.allow_internet_https: {internet}"
        return
    # Opted in: 443 only, from the task groups only, to exactly the CIDRs the environment names.
    assert internet, f"{env} opted in but no rule uses it (the variant no longer covers the opt-in)"
    assert cfg.network.internet_https_reason
    for rule in internet:
        assert (rule["from_port"], rule["to_port"]) == (443, 443) and rule["security_group_id"] in tasks, rule
        assert _peer(rule) in cfg.network.https_egress.cidrs, rule


@pytest.mark.parametrize("env", ALL_ENVS)
def test_every_task_group_reaches_aws_on_443_through_the_endpoints_only(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    tasks = _task_groups(synth, env)
    if cfg.network.aws_endpoints == "create":
        endpoints = _endpoint_refs(synth, env)
        s3 = endpoints[f"com.amazonaws.{cfg.region}.s3"]
        expected = {_groups(synth, env)["endpoints"], "${" + s3 + ".prefix_list_id}"}
    else:
        assert synth.resources(env, "aws_vpc_endpoint") == {}, "existing: the VPC's own endpoints, none made"
        e = cfg.network.https_egress
        expected = {*e.cidrs, *e.prefix_list_ids, *e.security_group_ids}
    for name, sg in tasks.items():
        # a registry on 443 is its own flow (test_registry_flows_go_to_their_peers_on_their_ports)
        peers = {_peer(r) for r in _rules(synth, env, "egress") if r["security_group_id"] == sg and r["from_port"] == 443
                 and "schema registry" not in r.get("description", "")}
        assert peers == expected, f"{env}: {name} reaches {peers} on 443, expected {expected}"


# ---------------------------------------------------------------- aws_endpoints: create (dev, msk-scram)


def test_the_variants_cover_every_mode() -> None:
    modes = {e: (env_config(e).network.aws_endpoints, bool(env_config(e).network.route_table_ids),
                 env_config(e).network.allow_internet_https) for e in ALL_ENVS}
    assert {("create", True, False), ("create", False, False), ("existing", False, False), ("existing", False, True)} <= set(
        modes.values()), modes


@pytest.mark.parametrize("env", CREATE)
def test_the_stack_makes_the_interface_endpoints_with_private_dns(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    endpoints_sg = _groups(synth, env)["endpoints"]
    interface = {v["service_name"]: v for v in synth.resources(env, "aws_vpc_endpoint").values()
                 if v["vpc_endpoint_type"] == "Interface"}
    assert set(interface) == {f"com.amazonaws.{cfg.region}.{s}" for s in INTERFACE_SERVICES}
    assert {"ecr.api", "ecr.dkr", "logs", "secretsmanager", "sts", "ecs", "ec2"} == set(INTERFACE_SERVICES)
    for name, ep in interface.items():
        assert ep["private_dns_enabled"] is True, name
        assert ep["vpc_id"] == cfg.vpc_id and ep["subnet_ids"] == list(cfg.subnet_ids), name
        assert ep["security_group_ids"] == [endpoints_sg], name
        policy = json.loads(ep["policy"])
        assert [s["Condition"] for s in policy["Statement"]] == [{"StringEquals": {"aws:PrincipalAccount": cfg.account_id}}]


@pytest.mark.parametrize("env", CREATE)
def test_the_endpoints_group_admits_443_from_the_task_groups_only(synth: Synth, env: str) -> None:
    endpoints_sg = _groups(synth, env)["endpoints"]
    ingress = [r for r in _rules(synth, env, "ingress") if r["security_group_id"] == endpoints_sg]
    assert {(r["from_port"], r["to_port"], r["ip_protocol"]) for r in ingress} == {(443, 443, "tcp")}
    assert all(set(r) & {"cidr_ipv4", "cidr_ipv6", "prefix_list_id"} == set() for r in ingress), ingress
    assert sorted(r["referenced_security_group_id"] for r in ingress) == sorted(_task_groups(synth, env).values())
    assert [r for r in _rules(synth, env, "egress") if r["security_group_id"] == endpoints_sg] == [], "endpoints start nothing"


@pytest.mark.parametrize("env", CREATE)
def test_the_s3_gateway_endpoint_is_on_the_subnets_route_tables_and_its_prefix_list_is_the_peer(synth: Synth, env: str) -> None:
    cfg = synth.configs[env]
    ((key, s3),) = [(k, v) for k, v in synth.resources(env, "aws_vpc_endpoint").items() if v["vpc_endpoint_type"] == "Gateway"]
    assert s3["service_name"] == f"com.amazonaws.{cfg.region}.s3"
    tables = synth.data(env, "aws_route_table")
    if cfg.network.route_table_ids:
        assert s3["route_table_ids"] == cfg.network.route_table_ids and tables == {}
    else:  # the table associated with each of the subnets
        assert sorted(t["subnet_id"] for t in tables.values()) == sorted(cfg.subnet_ids)
        assert sorted(s3["route_table_ids"]) == sorted("${data.aws_route_table." + k + ".route_table_id}" for k in tables)
    policy = json.loads(s3["policy"])["Statement"]
    assert policy[0]["Condition"] == {"StringEquals": {"aws:PrincipalAccount": cfg.account_id}}
    assert policy[1]["Resource"] == f"arn:aws:s3:::prod-{cfg.region}-starport-layer-bucket/*"
    pl = "${aws_vpc_endpoint." + key + ".prefix_list_id}"
    for name, sg in _task_groups(synth, env).items():
        assert any(r["security_group_id"] == sg and r.get("prefix_list_id") == pl and r["from_port"] == 443
                   for r in _rules(synth, env, "egress")), name


@pytest.mark.parametrize("env", CREATE)
def test_services_start_after_the_endpoints(synth: Synth, env: str) -> None:
    endpoints = set(_endpoint_refs(synth, env).values())
    services = synth.resources(env, "aws_ecs_service")
    assert len(services) == 3 + synth.configs[env].proof.follower
    for name, service in services.items():
        assert endpoints <= set(service.get("depends_on", [])), name


# ---------------------------------------------------------------- schema registries (msk-scram)


def test_registry_flows_go_to_their_peers_on_their_ports(synth: Synth) -> None:
    cfg = synth.configs["msk-scram"]
    regs = cfg.schema_registry
    assert regs and (regs.port("source"), regs.port("target")) == (8081, 443)
    groups = _groups(synth, "msk-scram")
    egress = _rules(synth, "msk-scram", "egress")

    def reaches(sg: str, port: int, peer: str) -> bool:
        return any(r["security_group_id"] == sg and r["from_port"] == port and _peer(r) == peer for r in egress)

    for name in ("connect", "proof", "validation"):  # the operator task runs in Connect's group
        assert reaches(groups[name], 8081, "10.20.5.0/24"), name
        assert reaches(groups[name], 443, "sg-0123456789abcdef6"), name
    for name in ("prometheus", "grafana"):
        assert not any(r["security_group_id"] == groups[name] and "registry" in r.get("description", "") for r in egress), name


# ---------------------------------------------------------------- bad input


BASE_EXISTING = {"aws_endpoints": "existing", "https_egress": {"cidrs": ["10.60.0.0/16"]}}
#: (what, network section of dev.yaml, the field the error names, a word of the fix)
BAD = [
    ("internet on 443 without the opt-in", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/0"]}},
     "network.https_egress.cidrs", "allow_internet_https"),
    ("IPv6 internet without the opt-in", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["::/0"]}},
     "network.https_egress.cidrs", "allow_internet_https"),
    ("half the internet twice", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/1", "128.0.0.0/1"]}},
     "network.https_egress.cidrs", "allow_internet_https"),
    ("a public range", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["52.218.0.0/17"]}},
     "network.https_egress.cidrs", "reaches the internet"),
    ("opt-in without a reason", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/0"]}, "allow_internet_https": True},
     "network.internet_https_reason", "one line"),
    ("a reason of two lines", {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/0"]}, "allow_internet_https": True,
                               "internet_https_reason": "NAT\nfor now"}, "network.internet_https_reason", "one line"),
    ("opt-in with nothing to allow", {**BASE_EXISTING, "allow_internet_https": True, "internet_https_reason": "NAT"},
     "network.allow_internet_https", "nothing to allow"),
    ("a reason without the opt-in", {**BASE_EXISTING, "internet_https_reason": "NAT"}, "network.internet_https_reason", "allow_internet_https"),
    ("https_egress beside created endpoints", {"aws_endpoints": "create", "https_egress": {"cidrs": ["10.60.0.0/16"]}},
     "network.https_egress", "aws_endpoints: existing"),
    ("existing endpoints not named", {"aws_endpoints": "existing"}, "network.https_egress", "prefix list"),
    ("existing endpoints named empty", {"aws_endpoints": "existing", "https_egress": {}}, "network.https_egress", "prefix list"),
    ("route tables with existing endpoints", {**BASE_EXISTING, "route_table_ids": ["rtb-0a1b2c3d4e5f60718"]},
     "network.route_table_ids", "remove"),
    ("a route table id of the wrong shape", {"route_table_ids": ["rt-123"]}, "network.route_table_ids", "rtb-"),
    ("an endpoint mode that does not exist", {"aws_endpoints": "nat"}, "network.aws_endpoints", "create"),
]


def _bad_dev(tmp_path: Path, network: dict | None = None, **top: object) -> Path:
    data = yaml.safe_load((SHIPPED_DIR / "dev.yaml").read_text())
    if network is not None:
        data["network"] = network
    data.update(top)
    envs = tmp_path / "environments"
    envs.mkdir()
    (envs / "dev.yaml").write_text(yaml.safe_dump(data))
    return envs


def _one_line(proc, field: str, hint: str) -> str:
    """The one error line (a refusal during the synth follows the jsii runtime's Node banner on stderr)."""
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: dev.yaml: {field}:"), lines[0]
    assert hint.lower() in lines[0].lower(), lines[0]
    return lines[0]


@pytest.mark.parametrize("what,network,field,hint", BAD, ids=[b[0] for b in BAD])
def test_bad_network_is_refused_with_one_line(tmp_path: Path, what: str, network: dict, field: str, hint: str) -> None:
    envs = _bad_dev(tmp_path, network)
    proc = run_main("--check", "--environments", str(envs), "--outdir", str(tmp_path / "out"))
    assert proc.stderr.count("\n") == 1, proc.stderr
    _one_line(proc, field, hint)
    assert proc.stdout == ""


def test_internet_https_refused_by_the_synth_too(tmp_path: Path) -> None:
    envs = _bad_dev(tmp_path, {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/0"]}})
    proc = run_main("--environments", str(envs), "--outdir", str(tmp_path / "out"))
    assert proc.stderr.count("\n") == 1, proc.stderr
    _one_line(proc, "network.https_egress.cidrs", "network.allow_internet_https: true with network.internet_https_reason")
    assert not (tmp_path / "out").exists()


def test_the_opt_in_with_its_reason_is_accepted(tmp_path: Path) -> None:
    envs = _bad_dev(tmp_path, {"aws_endpoints": "existing", "https_egress": {"cidrs": ["0.0.0.0/0"]},
                               "allow_internet_https": True, "internet_https_reason": "NAT gateway until the endpoints exist"})
    proc = run_main("--check", "--environments", str(envs), "--outdir", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr


def test_registry_open_to_the_internet_is_refused(tmp_path: Path) -> None:
    envs = _bad_dev(tmp_path, schema_registry={"source": "https://r.corp.example:8081", "target": "https://t.example",
                                               "source_network": {"cidrs": ["0.0.0.0/0"]},
                                               "target_network": {"cidrs": ["10.1.0.0/24"]}})
    proc = run_main("--check", "--environments", str(envs), "--outdir", str(tmp_path / "out"))
    _one_line(proc, "schema_registry.source_network.cidrs", "internet")


@pytest.mark.parametrize("check", [True, False], ids=["check", "synth"])
def test_registry_without_its_network_is_refused_when_the_environment_loads(tmp_path: Path, check: bool) -> None:
    envs = _bad_dev(tmp_path, schema_registry={"source": "https://r.corp.example:8081", "target": "https://t.example",
                                               "source_network": {"cidrs": ["10.1.0.0/24"]}})
    proc = run_main(*(["--check"] if check else []), "--environments", str(envs), "--outdir", str(tmp_path / "out"))
    line = _one_line(proc, "schema_registry.target_network", "security_group_ids")
    assert "https://t.example" in line and not (tmp_path / "out").exists()


def test_msk_migrate_refuses_the_environment_too(tmp_path: Path) -> None:
    """The operator CLI loads the same model: ``--env FILE`` with 443 to the internet stops before anything runs."""
    import subprocess
    import sys

    envs = _bad_dev(tmp_path, {"aws_endpoints": "existing", "https_egress": {"cidrs": ["::/0"]}})
    cli = Path(sys.executable).with_name("msk-migrate")
    proc = subprocess.run([str(cli), "lag", "--env", str(envs / "dev.yaml")], capture_output=True, text=True, timeout=120)
    assert proc.stderr.count("\n") == 1, proc.stderr
    _one_line(proc, "network.https_egress.cidrs", "::/0 reaches the internet")
    assert proc.stdout == ""
