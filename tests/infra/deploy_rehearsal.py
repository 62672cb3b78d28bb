#!/usr/bin/env python3
"""The deploy rehearsal: every stack of two environments applied, re-planned and torn down against moto.

    .venv/bin/python tests/infra/deploy_rehearsal.py [--workdir DIR]      # = make deploy-rehearse

1. moto's server behind the shims of :mod:`moto_shims` (each names the moto limitation it covers);
2. per environment, what a deployer has before the first deploy, created in moto: the VPC and its three
   subnets (dev's with their route table, where the stack's S3 gateway endpoint goes), the operator
   certificate (ACM, the environment's region), the secrets the YAML names (and the KMS key of prod's
   secrets), prod's existing MSK cluster with its broker security group, its private hosted zone, the
   operators' prefix list and bastion group; the shipped ``dev.yaml`` (creates its cluster) and
   ``prod.yaml`` (an existing cluster) are rewritten with those ids, and the validation job's Glue home is
   switched on in :data:`GLUE_ON` (``validation.glue``, off in the shipped files), nothing else changed;
3. ``infra/prerequisites.py`` checks them, ``infra/main.py`` synthesizes, ``terraform apply`` runs
   target-dev, migration-dev and migration-prod, one pass each; the build module's last step ships the
   validation job package into each stack's bucket, checked as ``validate --on`` checks it;
4. a second ``terraform plan`` of each stack must change nothing but :data:`UNSTORED` (attributes moto
   does not store, each entry naming the limitation);
5. the teardown exactly as docs/runbooks/deploy.md writes it (its bash block: empty the config bucket,
   the repositories), then ``infra/handover.py dev --apply`` and ``terraform destroy`` of migration-prod:
   both migration states end empty, target-dev's state and both MSK clusters stay.

Each stack's apply and destroy time is printed (and returned to the test). Prod's S3 state backend is
replaced by a local one (``backend_override.tf.json``): moto's S3 behind a path-style endpoint is not what
the S3 backend's lock file expects, and the backend is not what this rehearses.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import moto_shims  # noqa: E402
from infra_helpers import terraform_cli_env  # noqa: E402

RUNBOOK = REPO / "docs" / "runbooks" / "deploy.md"
ENVIRONMENTS = REPO / "infra" / "environments"
#: Environments whose validation job also gets its Glue home (job, network connection, role) in the rehearsal.
GLUE_ON = ("dev",)

#: Resource attributes a second plan may still change, because moto does not store or return them.
#: ``resource type -> {attribute: the moto limitation}``; anything else changing fails the rehearsal.
_RULE_DESCRIPTION = "moto does not store the description of a rule made by the security-group-rule API"
_RULE_MERGE = ("moto merges a group's rules of one port and direction into one rule: a rule reads back with the peer "
               "(referenced group, prefix list, CIDR) of another rule of the same port")
UNSTORED: dict[str, dict[str, str]] = {
    "aws_emrserverless_application": {"architecture": "moto's GetApplication does not return architecture (the provider's default X86_64)"},
    "aws_appautoscaling_target": {"tags_all": "moto's Application Auto Scaling does not store tags (the provider's default_tags)"},
    "aws_vpc_security_group_ingress_rule": {"description": _RULE_DESCRIPTION, "referenced_security_group_id": _RULE_MERGE,
                                            "prefix_list_id": _RULE_MERGE, "cidr_ipv4": _RULE_MERGE},
    "aws_vpc_security_group_egress_rule": {"description": _RULE_DESCRIPTION, "referenced_security_group_id": _RULE_MERGE,
                                           "prefix_list_id": _RULE_MERGE, "cidr_ipv4": _RULE_MERGE},
    "aws_s3_object": {
        "content_encoding": "moto stores the SDK's upload transfer encoding (aws-chunked) as the object's Content-Encoding",
        "version_id": "follows from content_encoding: the object would be written again, so a new version",
    },
    "aws_ecs_service": {
        "availability_zone_rebalancing": "moto's DescribeServices does not return availabilityZoneRebalancing",
        "enable_ecs_managed_tags": "moto's DescribeServices does not return enableECSManagedTags",
        "health_check_grace_period_seconds": "moto's DescribeServices does not return healthCheckGracePeriodSeconds",
    },
    "aws_s3_bucket_notification": {"eventbridge": "moto's GetBucketNotificationConfiguration does not return EventBridgeConfiguration"},
}
#: Attributes a replacement makes unknown by itself (new ids); they follow from the attributes that force it.
_REPLACED_IDS = frozenset({"id", "arn", "security_group_rule_id"})


@dataclass
class Timing:
    apply: dict[str, float] = field(default_factory=dict)
    destroy: dict[str, float] = field(default_factory=dict)
    replan: dict[str, list[str]] = field(default_factory=dict)  # stack -> "address: attribute (limitation)"


class RehearsalFailed(AssertionError):
    pass


def check(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        raise RehearsalFailed(f"{what} failed (exit {proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return proc


# ------------------------------------------------------------------ the deployer's prerequisites


def _self_signed(name: str) -> tuple[bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False).sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def prerequisites(name: str, endpoint: str, work: Path) -> Path:
    """Create in moto what ``<name>.yaml`` expects to exist; write the YAML with their ids under ``work``."""
    import boto3

    doc = yaml.safe_load((ENVIRONMENTS / f"{name}.yaml").read_text())
    region = doc["region"]
    os.environ["MOTO_ACCOUNT_ID"] = doc["account_id"]

    def client(service: str):
        return boto3.client(service, region_name=region, endpoint_url=endpoint)  # AWS_CA_BUNDLE: the server's certificate

    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.60.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
    zones = [z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]][:3]
    doc["vpc_id"] = vpc
    doc["subnet_ids"] = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.60.{i}.0/24", AvailabilityZone=z)["Subnet"]["SubnetId"]
                         for i, z in enumerate(zones)]
    network = doc.get("network") or {}
    if network.get("aws_endpoints", "create") == "create":
        # the subnets' own route table: the stack's S3 gateway endpoint goes on it (named, or found by subnet)
        table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
        for subnet in doc["subnet_ids"]:
            ec2.associate_route_table(RouteTableId=table, SubnetId=subnet)
        if network.get("route_table_ids"):
            network["route_table_ids"] = [table]
    tls = doc["operator_tls"]
    cert, key = _self_signed(tls["dns_name"])
    tls["certificate_arn"] = client("acm").import_certificate(Certificate=cert, PrivateKey=key)["CertificateArn"]
    if tls.get("hosted_zone_id"):
        zone = client("route53").create_hosted_zone(
            Name=tls["hosted_zone_name"], CallerReference=f"{name}-{time.time()}",
            HostedZoneConfig={"Comment": "the deployer's private zone", "PrivateZone": True}, VPC={"VPCRegion": region, "VPCId": vpc})
        tls["hosted_zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    kms_keys = []
    for _ in doc.get("secrets_kms_key_arns") or []:
        kms_keys.append(client("kms").create_key(Description=f"{name} secrets")["KeyMetadata"]["Arn"])
    if kms_keys:
        doc["secrets_kms_key_arns"] = kms_keys
    sm = client("secretsmanager")

    def secret(arn: str) -> str:
        secret_name = arn.split(":secret:", 1)[1].rsplit("-", 1)[0]
        return sm.create_secret(Name=secret_name, SecretString=json.dumps({"placeholder": "not a real secret"}),
                                **({"KmsKeyId": kms_keys[0]} if kms_keys else {}))["ARN"]

    auth = doc["source"]["auth"]
    for k in ("secret_arn", "ca_secret_arn"):
        if auth.get(k):
            auth[k] = secret(auth[k])
    grafana = (doc.get("monitoring") or {}).get("grafana") or {}
    if grafana.get("admin_secret_arn"):
        grafana["admin_secret_arn"] = secret(grafana["admin_secret_arn"])
    access = doc.get("operator_access") or {}
    if access.get("prefix_list_ids"):
        access["prefix_list_ids"] = [ec2.create_managed_prefix_list(
            PrefixListName=f"{name}-vpn", MaxEntries=5, AddressFamily="IPv4",
            Entries=[{"Cidr": "10.100.0.0/22"}])["PrefixList"]["PrefixListId"]]
    if access.get("security_group_ids"):
        access["security_group_ids"] = [ec2.create_security_group(GroupName=f"{name}-bastion", Description="bastion", VpcId=vpc)["GroupId"]]
    egress = (doc.get("network") or {}).get("https_egress") or {}
    if egress.get("prefix_list_ids"):
        egress["prefix_list_ids"] = [ec2.create_managed_prefix_list(
            PrefixListName=f"com.amazonaws.{region}.s3", MaxEntries=5, AddressFamily="IPv4",
            Entries=[{"Cidr": "52.218.0.0/17"}])["PrefixList"]["PrefixListId"]]
    target = doc["target"]
    if target.get("existing_cluster_arn"):
        broker_sg = ec2.create_security_group(GroupName=f"{name}-msk-brokers", Description="existing MSK brokers", VpcId=vpc)["GroupId"]
        cluster = client("kafka").create_cluster(
            ClusterName=target["existing_cluster_arn"].split("/")[1], KafkaVersion="3.9.x", NumberOfBrokerNodes=3,
            BrokerNodeGroupInfo={"InstanceType": "kafka.m7g.large", "ClientSubnets": doc["subnet_ids"], "SecurityGroups": [broker_sg]},
        )
        target["existing_cluster_arn"] = cluster["ClusterArn"]
        target.setdefault("network", {})["security_group_ids"] = [broker_sg]
    if name in GLUE_ON:
        doc.setdefault("validation", {})["glue"] = True
    out = work / "environments" / f"{name}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


# ------------------------------------------------------------------ terraform


class Rehearsal:
    def __init__(self, work: Path, server: moto_shims.Server, log=print) -> None:
        self.work = work
        self.endpoint = server.endpoint
        self.log = log
        self.outdir = work / "cdktf.out"
        self.state_dir = work / "state"
        self.timing = Timing()
        self.env = {
            **terraform_cli_env(work),
            **server.client_env(),
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true",
            # the runbook's `aws` from scripts/setup-deploy-tools.sh's venv (make setup), then the project's own
            "PATH": os.pathsep.join([str(REPO / ".local" / "awscli-venv" / "bin"), str(Path(sys.executable).parent),
                                     os.environ.get("PATH", "")]),
        }

    def run(self, args: list[str], *, account: str, region: str = "eu-west-1", timeout: int = 1800,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
        os.environ["MOTO_ACCOUNT_ID"] = account  # the in-process moto server reads it per request
        return subprocess.run(args, cwd=cwd or self.work, env={**self.env, "AWS_REGION": region, "AWS_DEFAULT_REGION": region},
                              capture_output=True, text=True, timeout=timeout)

    def terraform(self, stack: str, *args: str, account: str, timeout: int = 1800) -> subprocess.CompletedProcess:
        """``terraform -chdir=<stack> ARGS``; its output is kept under ``<work>/logs/`` (one file per stack and command)."""
        proc = self.run(["terraform", f"-chdir={self.outdir / 'stacks' / stack}", *args], account=account, timeout=timeout)
        logs = self.work / "logs"
        logs.mkdir(exist_ok=True)
        (logs / f"{stack}-{args[0]}.log").write_text(proc.stdout + proc.stderr)
        return proc

    def synth(self, names: list[str]) -> None:
        check(subprocess.run([sys.executable, str(REPO / "infra" / "main.py"), "--environments", str(self.work / "environments"),
                              "--outdir", str(self.outdir), "--state-dir", str(self.state_dir), "--build-dir", str(self.work / "build"),
                              *[a for n in names for a in ("--env", n)]],
                             cwd=REPO, env={**os.environ, **self.env}, capture_output=True, text=True, timeout=900), "synth")
        for stack in (self.outdir / "stacks").iterdir():
            doc = json.loads((stack / "cdk.tf.json").read_text())
            if "s3" in doc.get("terraform", {}).get("backend", {}):
                (stack / "backend_override.tf.json").write_text(json.dumps(
                    {"terraform": {"backend": {"local": {"path": str(self.state_dir / f"{stack.name}.tfstate")}}}}))

    def apply(self, stack: str, account: str) -> None:
        check(self.terraform(stack, "init", "-input=false", "-no-color", account=account), f"init {stack}")
        started = time.monotonic()
        check(self.terraform(stack, "apply", "-input=false", "-no-color", "-auto-approve", account=account), f"first apply of {stack}")
        self.timing.apply[stack] = time.monotonic() - started
        self.log(f"applied {stack} in {self.timing.apply[stack]:.1f} s")

    def replan(self, stack: str, account: str) -> list[str]:
        """The second plan's changes, each as ``address: attribute``; unexpected ones raise."""
        plan = self.terraform(stack, "plan", "-input=false", "-no-color", "-out", "replan.bin", "-detailed-exitcode", account=account)
        if plan.returncode not in (0, 2):
            check(plan, f"second plan of {stack}")
        shown = json.loads(check(self.terraform(stack, "show", "-json", "replan.bin", account=account), "show").stdout)
        allowed, unexpected = [], []
        for rc in shown.get("resource_changes", []):
            actions = rc["change"]["actions"]
            if actions == ["no-op"] or actions == ["read"]:
                continue
            if actions not in (["update"], ["delete", "create"], ["create", "delete"]):
                unexpected.append(f"{rc['address']}: {'/'.join(actions)}")
                continue
            before, after = rc["change"]["before"] or {}, rc["change"]["after"] or {}
            unknown = rc["change"].get("after_unknown") or {}
            changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k) or unknown.get(k) is True}
            if actions != ["update"]:  # a replacement: what forces it, and what it changes besides the new ids
                changed = (changed - _REPLACED_IDS) | {path[0] for path in rc["change"].get("replace_paths") or []}
            changed = sorted(changed)
            for attr in changed:
                reason = UNSTORED.get(rc["type"], {}).get(attr)
                (allowed if reason else unexpected).append(f"{rc['address']}: {attr}" + (f" ({reason})" if reason else ""))
        self.timing.replan[stack] = allowed
        if unexpected:
            raise RehearsalFailed(f"second plan of {stack} changes more than moto's unstored attributes:\n  " + "\n  ".join(unexpected))
        self.log(f"re-planned {stack}: " + (f"{len(allowed)} listed moto exception(s)" if allowed else "no changes"))
        return allowed

    def runbook_teardown(self, env_name: str, account: str) -> None:
        """The runbook's emptying block, run as written (bash, with the repository's cdktf.out layout)."""
        script = teardown_block()
        link = self.work / "repo"
        link.mkdir(exist_ok=True)
        if not (link / "cdktf.out").exists():
            (link / "cdktf.out").symlink_to(self.outdir)
        check(self.run(["bash", "-euo", "pipefail", "-c", f"ENV={env_name}\n{script}"], account=account, cwd=link),
              f"runbook teardown of {env_name}")

    def destroy(self, stack: str, account: str, env_name: str) -> None:
        started = time.monotonic()
        if stack.startswith("migration-") and (self.outdir / "stacks" / f"target-{env_name}").is_dir():
            check(self.run([sys.executable, str(REPO / "infra" / "handover.py"), env_name, "--environments", str(self.work / "environments"),
                            "--outdir", str(self.outdir), "--state-dir", str(self.state_dir), "--skip-synth", "--apply"],
                           account=account, timeout=1800), f"handover of {env_name}")
        else:
            check(self.terraform(stack, "destroy", "-input=false", "-no-color", "-auto-approve", account=account), f"destroy of {stack}")
        self.timing.destroy[stack] = time.monotonic() - started
        self.log(f"destroyed {stack} in {self.timing.destroy[stack]:.1f} s")

    def state_resources(self, stack: str, account: str) -> list[str]:
        proc = self.terraform(stack, "state", "list", account=account)
        return [] if "No state file was found" in proc.stderr else check(proc, f"state list {stack}").stdout.split()


def teardown_block() -> str:
    """The bash block of docs/runbooks/deploy.md that empties what refuses deletion (the one after 'Before `--apply`')."""
    text = RUNBOOK.read_text()
    at = text.index("Before `--apply`")
    m = re.search(r"```bash\n(.*?)```", text[at:], re.S)
    if m is None:
        raise RehearsalFailed(f"{RUNBOOK}: no bash block after 'Before `--apply`'")
    return m.group(1)


ENVS = {"dev": "111111111111", "prod": "222222222222"}


#: This process's boto3 calls (the prerequisites) go to moto with these; restored afterwards.
def glue_jobs(work: Path, endpoint: str, envs: tuple[str, ...] = tuple(ENVS), log=print) -> None:
    """The Glue home applied where it is on (:data:`GLUE_ON`): the job, its connection, tagged for its
    environment (what ``validate --on glue`` checks before starting a run); none where it is off."""
    import boto3

    from msk_migrate.aws import glue as glue_mod
    from msk_migrate.config.environment import load_environment

    for name in envs:
        cfg = load_environment(work / "environments" / f"{name}.yaml")
        os.environ["MOTO_ACCOUNT_ID"] = ENVS[name]
        glue = boto3.client("glue", region_name=cfg.region, endpoint_url=endpoint)
        jobs = glue.list_jobs()["JobNames"]
        if name not in GLUE_ON:
            if jobs:
                raise RehearsalFailed(f"{name}: validation.glue is off, yet Glue jobs {jobs}")
            continue
        job = glue.get_job(JobName=glue_mod.job_name(cfg))["Job"]
        tags = glue.get_tags(ResourceArn=glue_mod.job_arn(cfg))["Tags"]
        conn = glue.get_connection(Name=glue_mod.connection_name(cfg))["Connection"]
        if (job["GlueVersion"], tags.get("environment"), job["Connections"]["Connections"]) != \
                (glue_mod.GLUE_VERSION, cfg.name, [conn["Name"]]):
            raise RehearsalFailed(f"{name}: Glue job {job['Name']} (Glue {job['GlueVersion']}, tags {tags}, connections "
                                  f"{job['Connections']}) is not the stack's")
        log(f"{name}: Glue job {job['Name']} (Glue {job['GlueVersion']}) with connection {conn['Name']} in "
            f"{conn['PhysicalConnectionRequirements']['AvailabilityZone']}")


def job_packages(work: Path, endpoint: str, envs: tuple[str, ...] = tuple(ENVS), log=print) -> None:
    """The validation job package shipped into each applied stack's bucket by the build module's own step
    (``./build_images.py ACCOUNT REGION --env ENV`` ends with it), then checked as ``validate --on`` checks it
    before submitting: against the EMR Serverless application's release, and the Glue job's script where
    Glue is on. The runbook's teardown empties the bucket, package included."""
    import boto3
    from rich.console import Console

    from msk_migrate.aws import emr_serverless as emr_mod
    from msk_migrate.commands.build_images import ship_job_package
    from msk_migrate.config.environment import load_environment
    from msk_migrate.validation import job_package

    for name in envs:
        cfg = load_environment(work / "environments" / f"{name}.yaml")
        os.environ["MOTO_ACCOUNT_ID"] = ENVS[name]
        os.environ["AWS_ENDPOINT_URL_S3"] = endpoint  # the build module's own boto3 session, pointed at moto
        try:
            shipped = ship_job_package(cfg, Console(stderr=True, quiet=True))
        finally:
            os.environ.pop("AWS_ENDPOINT_URL_S3", None)
        s3 = boto3.client("s3", region_name=cfg.region, endpoint_url=endpoint)
        app = emr_mod.find_application(boto3.client("emr-serverless", region_name=cfg.region, endpoint_url=endpoint), cfg)
        package = job_package.verified(s3, cfg.config_bucket_name, app)
        homes = [f"EMR Serverless {app['name']} ({app['releaseLabel']})"]
        if name in GLUE_ON:
            job_package.verified_for_glue(s3, cfg.config_bucket_name)
            homes.append("Glue")
        log(f"{name}: job package s3://{package.bucket}/{package.prefix} ({'uploaded' if shipped['uploaded'] else 'already there'}) "
            f"verified for {' and '.join(homes)}")


_AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "",
            "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}


#: The stacks of each environment, in the order they are applied (migration-dev reads target-dev's cluster).
STACKS = {"dev": ("target-dev", "migration-dev"), "prod": ("migration-prod",)}


def rehearse(work: Path, log=print, envs: tuple[str, ...] = tuple(ENVS)) -> Timing:
    """Every stack of ``envs`` applied, re-planned and torn down. The environments share nothing (each its own
    account), so a caller may rehearse them in two processes at once, each with its own moto server."""
    saved = dict(os.environ)
    os.environ.update(_AWS_ENV)
    os.environ.pop("AWS_SESSION_TOKEN", None)
    os.environ.pop("AWS_PROFILE", None)
    server = moto_shims.start()
    os.environ["AWS_CA_BUNDLE"] = server.ca_bundle
    try:
        r = Rehearsal(work, server, log)
        for name in envs:
            prerequisites(name, server.endpoint, work)
            check(r.run([sys.executable, str(REPO / "infra" / "prerequisites.py"), name, "--environments", str(work / "environments")],
                        account=ENVS[name], cwd=REPO), f"prerequisites of {name}")
        r.synth(list(envs))
        stacks = [(stack, env_name) for env_name in envs for stack in STACKS[env_name]]
        for stack, env_name in stacks:
            r.apply(stack, ENVS[env_name])
        glue_jobs(work, server.endpoint, envs, log)
        job_packages(work, server.endpoint, envs, log)
        failures = []
        for stack, env_name in stacks:
            try:
                r.replan(stack, ENVS[env_name])
            except RehearsalFailed as exc:  # every stack's re-plan is reported, not only the first
                failures.append(str(exc))
        if failures:
            raise RehearsalFailed("\n".join(failures))
        for stack, env_name in [(s, e) for s, e in stacks if s.startswith("migration-")]:
            r.runbook_teardown(env_name, ENVS[env_name])
            r.destroy(stack, ENVS[env_name], env_name)
            left = r.state_resources(stack, ENVS[env_name])
            if left:
                raise RehearsalFailed(f"{stack}'s state is not empty after the teardown: {left}")
        if "dev" in envs:
            kept = r.state_resources("target-dev", ENVS["dev"])
            if not any(a.startswith("aws_msk_cluster.") for a in kept):
                raise RehearsalFailed(f"target-dev lost its cluster: {kept}")
        import boto3

        for name, account in [(n, ENVS[n]) for n in envs]:  # dev's created cluster and prod's existing one still serve
            os.environ["MOTO_ACCOUNT_ID"] = account
            clusters = boto3.client("kafka", region_name="eu-west-1", endpoint_url=server.endpoint).list_clusters()["ClusterInfoList"]
            if len(clusters) != 1:
                raise RehearsalFailed(f"{name}: expected its one MSK cluster after the teardown, found {len(clusters)}")
            log(f"{name}: MSK cluster {clusters[0]['ClusterName']} still there")
            left_jobs = boto3.client("glue", region_name="eu-west-1", endpoint_url=server.endpoint).list_jobs()["JobNames"]
            if left_jobs:
                raise RehearsalFailed(f"{name}: Glue jobs left after the teardown: {left_jobs}")
        return r.timing
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="deploy_rehearsal.py", description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, help="where the stacks and states go (default: a temporary directory, removed)")
    ap.add_argument("--json", type=Path, help="also write the timings and the re-plan exceptions to this file")
    ap.add_argument("--env", action="append", choices=list(ENVS), help="rehearse only this environment (repeatable; default: all)")
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="deploy-rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        timing = rehearse(work, envs=tuple(args.env or ENVS))
    except RehearsalFailed as exc:
        print(f"deploy rehearsal FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"apply": timing.apply, "destroy": timing.destroy, "replan": timing.replan}, indent=2))
    print("stack                apply s   destroy s")
    for stack, seconds in timing.apply.items():
        print(f"{stack:<20} {seconds:>7.1f}   {timing.destroy.get(stack, float('nan')):>9.1f}")
    for stack, listed in timing.replan.items():
        for line in listed:
            print(f"re-plan {stack}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
