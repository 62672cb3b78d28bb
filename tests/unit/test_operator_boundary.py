"""The operator task tried from the other side: a caller who may start it gets the runbook and nothing more.

Each test starts the operator image's entrypoint the way ECS starts it: the stack's task definition (registered
in moto's ECS, its environment written by the stack's own writer) plus the caller's RunTask overrides, started
with moto's RunTask so that DescribeTasks reports exactly what was sent; the process's environment is the task
definition's environment with the overrides on top, ``python -I`` as the image's ENTRYPOINT runs it. moto's
Secrets Manager holds the stack's Connect REST secret. Two listeners of the test's own stand by: the stack's
worker (where the runbook's commands go) and an attacker's (where nothing may ever arrive). The only stand-ins
are the ECS agent's endpoints (tests/unit/ecs_entry_shim.py says why).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from msk_migrate.aws import ecs_task
from msk_migrate.aws.operator_stack import environment_yaml, stack_environment
from msk_migrate.aws.task_view import ARGV_ENV
from msk_migrate.config.environment import load_environment
from msk_migrate.paths import REPO_ROOT

from . import test_preflight_in_vpc as pf

moto_url = pf.moto_url
REGION, CLUSTER = pf.REGION, "msk-migrate-dev-boundary"
SHIM = Path(__file__).with_name("ecs_entry_shim.py")
MACHINE_LOGIN = {"username": "connect-machine", "password": "rest-secret-value-7f3a"}
PERSON = "AIDAEXAMPLEPERSON:alice"


class Listener:
    """An HTTP server on 127.0.0.1 that keeps every request it gets (path and headers)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers)})
                body = b"{}" if self.path.startswith("/connectors") else b'{"version": "3.9.1", "commit": "x", "kafka_cluster_id": "k"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Metadata:
    """The ECS agent's task metadata endpoint for one task (the part moto does not serve)."""

    def __init__(self) -> None:
        self.task: dict = {}
        meta = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps(meta.task if self.path.endswith("/task") else {"Name": "operator"}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/v4/c0ffee"


@pytest.fixture(scope="module")
def stack(moto_url):
    """The stack in moto: network, the REST secret, the operator task definition as infra writes it."""
    import boto3

    kw = {"region_name": REGION, "endpoint_url": moto_url, "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    ec2, ecs, sm = boto3.client("ec2", **kw), boto3.client("ecs", **kw), boto3.client("secretsmanager", **kw)
    vpc = ec2.create_vpc(CidrBlock="10.70.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.70.1.0/24")["Subnet"]["SubnetId"]
    other_subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.70.2.0/24")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="connect-boundary", Description="connect", VpcId=vpc)["GroupId"]
    open_sg = ec2.create_security_group(GroupName="anywhere-boundary", Description="egress anywhere", VpcId=vpc)["GroupId"]
    # a person's REST login of the stack (<prefix>/connect-rest/<name>): a secret of dev's own, which a command beside
    # --env dev accepts; dev's account is moto's (the account the stack lives in)
    secret = sm.create_secret(Name="msk-migrate-dev/connect-rest/boundary", SecretString=json.dumps(MACHINE_LOGIN))["ARN"]
    worker, attacker, metadata = Listener(), Listener(), Metadata()
    cfg = load_environment(REPO_ROOT / "infra" / "environments" / "dev.yaml")
    cfg = cfg.model_copy(update={"account_id": secret.split(":")[4]})
    env = {**stack_environment(subnets=[subnet], security_groups=[sg], environment=environment_yaml(cfg), environment_name=cfg.name,
                               target_bootstrap="b-1.dev.example:9098", connect_url=worker.url, connect_secret_arn=secret),
           "AWS_REGION": REGION}
    ecs.create_cluster(clusterName=CLUSTER)
    ecs.register_task_definition(
        family=f"{CLUSTER}-operator", networkMode="awsvpc", requiresCompatibilities=["FARGATE"], cpu="256", memory="512",
        containerDefinitions=[{"name": "operator", "image": "msk-migrate:1", "essential": True, "cpu": 256, "memory": 512,
                               "environment": [{"name": k, "value": v} for k, v in sorted(env.items())]}])
    yield {"ecs": ecs, "subnet": subnet, "other_subnet": other_subnet, "sg": sg, "open_sg": open_sg, "secret": secret,
           "worker": worker, "attacker": attacker, "metadata": metadata, "env": env, "cfg": cfg, "moto": moto_url}
    for server in (worker, attacker):
        server.close()
    metadata.server.shutdown()


def start(stack, tmp_path: Path, *, environment: dict[str, str] | None = None, command: list[str] | None = None,
          subnet: str | None = None, security_groups: list[str] | None = None, tagged: bool = True,
          task_overrides: dict | None = None) -> subprocess.CompletedProcess:
    """RunTask as the caller sends it (moto records it), then the entrypoint as ECS starts that task."""
    overrides: dict = {"containerOverrides": [{"name": "operator", "environment": [
        {"name": k, "value": v} for k, v in (environment or {}).items()], **({"command": command} if command else {})}],
        **(task_overrides or {})}
    run = stack["ecs"].run_task(
        cluster=CLUSTER, taskDefinition=f"{CLUSTER}-operator", launchType="FARGATE", count=1, overrides=overrides,
        networkConfiguration={"awsvpcConfiguration": {"subnets": [subnet or stack["subnet"]],
                                                      "securityGroups": security_groups or [stack["sg"]]}},
        **({"tags": [{"key": ecs_task.STARTED_BY_TAG, "value": PERSON}]} if tagged else {}))
    stack["metadata"].task = {"TaskARN": run["tasks"][0]["taskArn"], "Cluster": CLUSTER}
    settings = tmp_path / "shim.json"
    settings.write_text(json.dumps({
        "moto": stack["moto"], "metadata": stack["metadata"].uri,
        "command_env": {"AWS_ENDPOINT_URL": stack["moto"], "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}}))
    # What the container's process holds: what ECS sets, the image's ENV, the task definition's, the overrides.
    process_env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
                   "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "AWS_DEFAULT_REGION": REGION,
                   "AWS_EXECUTION_ENV": "AWS_ECS_FARGATE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/0b5e",
                   "ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/c0ffee",
                   "MSK_MIGRATE_LOCAL_DIR": str(tmp_path / "local"), **stack["env"], **(environment or {})}
    return subprocess.run([sys.executable, "-I", str(SHIM), str(settings), *(command or [])], env=process_env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


def refused(res: subprocess.CompletedProcess, naming: str) -> None:
    assert res.returncode == 2, res.stdout + res.stderr
    # the dynamic loader reads LD_PRELOAD before any code of ours and says so on its own line
    lines = [ln for ln in res.stderr.strip().splitlines() if not ln.startswith("ERROR: ld.so: object ")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and naming in lines[0], res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


@pytest.fixture()
def quiet(stack):
    """Both listeners start empty; after the test nothing reached the attacker's."""
    stack["worker"].requests.clear()
    stack["attacker"].requests.clear()
    yield stack
    assert stack["attacker"].requests == [], "a request of the operator task reached the caller's listener"


def test_the_runbook_request_runs_against_the_stacks_worker_with_the_stacks_secret(quiet, tmp_path) -> None:
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["connectors", "status", "--output", "json"])})
    assert res.returncode == 0, res.stdout + res.stderr
    assert quiet["worker"].requests, "the command reached the stack's worker"
    import base64

    sent = {r["headers"].get("Authorization") for r in quiet["worker"].requests}
    login = "Basic " + base64.b64encode(f"{MACHINE_LOGIN['username']}:{MACHINE_LOGIN['password']}".encode()).decode()
    assert sent == {login}, "the machine login from the stack's secret, to the stack's worker only"
    out = res.stdout.split("--- msk-migrate stdout ---\n", 1)[1]
    assert json.loads(out)["talked_to"]["worker"] == quiet["worker"].url


@pytest.mark.parametrize(("words", "option"), [
    (["connectors", "status", "--config", "/tmp/msk-migrate-flow.yaml", "--connect-url", "ATTACKER",
      "--connect-secret-arn", "SECRET"], "--config"),
    (["connectors", "status", "--connect-url", "ATTACKER", "--connect-secret-arn", "SECRET"], "--connect-url"),
    (["connectors", "status", "--connect-secret-arn", "SECRET"], "--connect-secret-arn"),
    (["schemas", "plan", "--source-registry", "ATTACKER"], "--source-registry"),
    (["lag", "--target-bootstrap", "127.0.0.1:9"], "--target-bootstrap"),
    (["cutover", "check", "--validation-report", "s3://elsewhere/report/"], "--validation-report"),
    (["validate", "--follow", "--once", "--mark", "s3://another-bucket/proof/mark.json"], "--mark"),
    (["validate", "--kafka-option", "sasl.jaas.config=x"], "--kafka-option"),
    (["connectors", "status", "${env:MM2_SOURCE_SASL_PASSWORD}"], "NAMES"),
    (["local", "up"], "'local' is not a runbook command"),
])
def test_an_option_naming_an_endpoint_secret_file_or_foreign_location_runs_nothing(quiet, tmp_path, words, option) -> None:
    words = [quiet["attacker"].url if w == "ATTACKER" else quiet["secret"] if w == "SECRET" else w for w in words]
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(words)})
    refused(res, option)
    assert quiet["worker"].requests == [], "nothing ran"


@pytest.mark.parametrize(("variable", "value"), [
    ("MSK_MIGRATE_CONNECT_URL", "ATTACKER"),  # a stack value overridden: only ECS can tell
    ("MSK_MIGRATE_CONFIG_YAML", "schema_registry: {source: ATTACKER, target: ATTACKER}\n"),
    ("MSK_MIGRATE_STACK_ENVIRONMENT", "name: dev\n"),
    ("MSK_MIGRATE_STACK_SECURITY_GROUPS", '["OPEN_SG"]'),
    ("MSK_MIGRATE_RECORD_JSON", "{}"),
    ("PYTHONPATH", "/tmp/attacker"),
    ("PYTHONSTARTUP", "/tmp/attacker.py"),
    ("LD_PRELOAD", "/tmp/attacker.so"),
    ("AWS_ENDPOINT_URL", "ATTACKER"),
    ("AWS_ENDPOINT_URL_SECRETS_MANAGER", "ATTACKER"),
    ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "ATTACKER"),
    ("HTTPS_PROXY", "ATTACKER"),
    ("REQUESTS_CA_BUNDLE", "/tmp/attacker-ca.pem"),
    ("SOMETHING_ELSE", "x"),  # harmless by name, still an override: ECS says so
])
def test_any_environment_override_but_the_request_runs_nothing(quiet, tmp_path, variable, value) -> None:
    value = value.replace("ATTACKER", quiet["attacker"].url).replace("OPEN_SG", quiet["open_sg"])
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["connectors", "status"]), variable: value})
    refused(res, variable)
    assert quiet["worker"].requests == [], "nothing ran"


def test_the_callers_environment_cannot_run_code_in_the_task(quiet, tmp_path) -> None:
    marker = tmp_path / "pwned"
    res = start(quiet, tmp_path, environment={
        ARGV_ENV: json.dumps(["connectors", "status"]),
        "PYTHONWARNINGS": "ignore::antigravity.x",  # imports antigravity at startup, which opens BROWSER
        "BROWSER": f'sh -c "touch {marker}" %s',
    })
    refused(res, "BROWSER")
    assert not marker.exists(), "a shell command of the caller's ran in the task"
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["connectors", "status"]), "PYTHONWARNINGS": "ignore::antigravity.x"})
    refused(res, "PYTHONWARNINGS")
    assert not marker.exists()


def test_a_command_role_or_resource_override_runs_nothing(quiet, tmp_path) -> None:
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["lag"])}, command=["sh", "-c", "env"])
    refused(res, "takes no command")
    role = "arn:aws:iam::123456789012:role/anything"
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["lag"])}, task_overrides={"taskRoleArn": role})
    refused(res, "RunTask override taskRoleArn")
    res = start(quiet, tmp_path, environment={ARGV_ENV: json.dumps(["lag"])}, task_overrides={"executionRoleArn": role})
    refused(res, "RunTask override executionRoleArn")
    assert quiet["worker"].requests == []


def test_a_network_other_than_the_stacks_or_an_untagged_start_runs_nothing(quiet, tmp_path) -> None:
    request = {ARGV_ENV: json.dumps(["connectors", "status"])}
    refused(start(quiet, tmp_path, environment=request, security_groups=[quiet["open_sg"]]), "security groups")
    refused(start(quiet, tmp_path, environment=request, security_groups=[quiet["sg"], quiet["open_sg"]]), "security groups")
    refused(start(quiet, tmp_path, environment=request, subnet=quiet["other_subnet"]), "subnet")
    refused(start(quiet, tmp_path, environment=request, tagged=False), ecs_task.STARTED_BY_TAG)
    assert quiet["worker"].requests == []


def test_a_metadata_endpoint_elsewhere_than_the_ecs_agents_is_not_read(quiet, tmp_path) -> None:
    from msk_migrate.aws import operator_entry
    from msk_migrate.commands.operator_grammar import check_request

    env = {**quiet["env"], ARGV_ENV: json.dumps(["connectors", "status"]), "ECS_CONTAINER_METADATA_URI_V4": quiet["attacker"].url + "/v4/x"}
    res = subprocess.run([sys.executable, "-I", "-m", "msk_migrate.commands.in_task"], env={"PATH": "/usr/bin:/bin", **env},
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    refused(res, "ECS_CONTAINER_METADATA_URI_V4")
    assert check_request and operator_entry  # the module the image's ENTRYPOINT names is the one refusing


def test_the_stack_environment_round_trips_to_the_same_environment(stack) -> None:
    import yaml

    assert yaml.safe_load(stack["env"]["MSK_MIGRATE_STACK_ENVIRONMENT"])["name"] == stack["cfg"].name
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"boundary-{os.getpid()}"
    tmp.mkdir(exist_ok=True)
    (tmp / f"{stack['cfg'].name}.yaml").write_text(stack["env"]["MSK_MIGRATE_STACK_ENVIRONMENT"])
    assert load_environment(tmp / f"{stack['cfg'].name}.yaml") == stack["cfg"]
